// SPDX-License-Identifier: MIT
// Reading the committed golden files (tools/make_golden.py writes them).
#pragma once
#include <cstdint>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace golden {
inline std::string path(const std::string& name) { return std::string(STRATA_GOLDEN_DIR) + "/" + name; }

inline std::vector<std::string> lines(const std::string& name) {
  std::ifstream in(path(name));
  if (!in) throw std::runtime_error("missing golden file " + path(name));
  std::vector<std::string> out;
  for (std::string l; std::getline(in, l);)
    if (!l.empty()) out.push_back(l);
  return out;
}

inline std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == sep) { out.push_back(cur); cur.clear(); } else { cur += c; }
  }
  out.push_back(cur);
  return out;
}

/// "[2, 3]" -> {2, 3}
inline std::vector<std::int64_t> parse_shape(const std::string& s) {
  std::vector<std::int64_t> out;
  std::string inner = s.substr(s.find('[') + 1, s.find(']') - s.find('[') - 1);
  if (inner.find_first_not_of(' ') == std::string::npos) return out;
  for (const auto& part : split(inner, ',')) out.push_back(std::stoll(part));
  return out;
}

/// Whitespace-separated numbers ("nan" and "inf" too).
inline std::vector<double> parse_doubles(const std::string& s) {
  std::istringstream in(s);
  std::vector<double> out;
  for (std::string w; in >> w;) out.push_back(std::stod(w));
  return out;
}

/// Whitespace-separated integers.
inline std::vector<std::int64_t> parse_ints(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::int64_t> out;
  for (std::int64_t v; in >> v;) out.push_back(v);
  return out;
}
}  // namespace golden
