// SPDX-License-Identifier: MIT
// Reading tests/golden/nn.txt (tools/make_nn_golden.py): torch.nn.functional's results and
// gradients, case by case, for the strata.nn tests.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>
#include "golden.hpp"

namespace nn_golden {
struct tensor_data {
  std::string dtype;
  std::vector<std::int64_t> sizes;
  std::vector<double> values;
};
struct golden_case {
  std::string id, function, dtype;
  std::map<std::string, std::string> options;
  std::vector<std::pair<std::string, tensor_data>> inputs;  // in the function's order
  tensor_data out;
  std::vector<double> cot;
  std::map<std::string, tensor_data> grads;
  std::map<std::string, tensor_data> extra;  // indices, running_mean, running_var
  std::string error;                         // an error case: the message torch gives
  const tensor_data* input(const std::string& name) const {
    for (const auto& [n, t] : inputs)
      if (n == name) return &t;
    return nullptr;
  }
  bool has(const std::string& key) const { return options.count(key) != 0; }
  const std::string& option(const std::string& key) const { return options.at(key); }
};

// "a=1,b=2;3" -> {a: "1", b: "2;3"}
inline std::map<std::string, std::string> parse_options(const std::string& s) {
  std::map<std::string, std::string> out;
  if (s.empty()) return out;
  for (const std::string& kv : golden::split(s, ',')) {
    const auto eq = kv.find('=');
    out[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return out;
}

/// "2;1" -> {2, 1}; "3" -> {3}
inline std::vector<std::int64_t> ints(const std::string& s) {
  std::vector<std::int64_t> out;
  for (const std::string& p : golden::split(s, ';')) out.push_back(std::stoll(p));
  return out;
}

inline std::vector<golden_case> read(const std::string& file = "nn.txt") {
  std::vector<golden_case> cases;
  for (const std::string& line : golden::lines(file)) {
    const auto f = golden::split(line, '|');
    if (f[0] == "case" || f[0] == "error") {
      golden_case c;
      c.id = f[1];
      c.function = f[2];
      c.dtype = f[3];
      c.options = parse_options(f[4]);
      if (f[0] == "error") c.error = f[5];
      cases.push_back(c);
    } else if (f[0] == "in") {
      cases.back().inputs.push_back({f[1], {f[2], golden::parse_shape(f[3]), golden::parse_doubles(f[4])}});
    } else if (f[0] == "out") {
      cases.back().out = {cases.back().dtype, golden::parse_shape(f[1]), golden::parse_doubles(f[2])};
    } else if (f[0] == "cot") {
      cases.back().cot = golden::parse_doubles(f[1]);
    } else if (f[0] == "grad") {
      cases.back().grads[f[1]] = {cases.back().dtype, golden::parse_shape(f[2]), golden::parse_doubles(f[3])};
    } else {
      // indices|<shape>|<values> or running_mean|<values>
      tensor_data t;
      if (f.size() == 3) {
        t.sizes = golden::parse_shape(f[1]);
        t.values = golden::parse_doubles(f[2]);
      } else {
        t.values = golden::parse_doubles(f[1]);
      }
      cases.back().extra[f[0]] = t;
    }
  }
  return cases;
}
}  // namespace nn_golden
