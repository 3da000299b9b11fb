// SPDX-License-Identifier: MIT
// A checkpoint written by PyTorch (samples/data/checkpoint.safetensors: bfloat16, float16,
// float32, int64 and bool tensors) read without knowing its dtypes: every floating weight
// matrix has its rows standardised (zero mean, unit variance) in one fused loop computed in
// float32, then is stored back in its own dtype; the other tensors pass through unchanged; the
// result is written as a new .safetensors file (load it in Python with safetensors.torch.load_file).
//
//   checkpoint_standardise [in.safetensors] [out.safetensors]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>
#include <utility>
#include <vector>
import strata;

namespace st = strata;

int main(int argc, char** argv) {
  const std::string in = argc > 1 ? argv[1] : STRATA_SAMPLE_DATA "/checkpoint.safetensors";
  const std::string out = argc > 2 ? argv[2] : "checkpoint_standardised.safetensors";

  std::vector<std::pair<std::string, st::AnyTensor>> result;
  for (const auto& [name, t] : st::load_safetensors(in)) {  // each tensor in its own dtype
    std::cout << name << ": " << t.dtype() << " " << t.sizes() << "\n";
    if (!t.is_floating_point() || t.dim() != 2) {
      result.emplace_back(name, t);
      continue;
    }
    // The fused part is typed: Tensor<float> in, one loop out (the mean and variance first).
    const st::Tensor<float> w = t.to<float>();
    const st::Tensor<float> z = (w - st::mean(w, {1}, true)) / st::sqrt(st::var(w, {1}, 0, true) + 1e-5f);
    result.emplace_back(name, st::AnyTensor(z).to(t.dtype()));  // back to bfloat16 / float16
  }
  st::save_safetensors(out, result, {{"format", "pt"}});

  // Read it back and check it: the dtypes kept, every standardised row near mean 0, variance 1.
  int bad = 0;
  for (const auto& [name, t] : st::load_safetensors(out)) {
    const st::AnyTensor& before = std::find_if(result.begin(), result.end(), [&](const auto& p) { return p.first == name; })->second;
    if (t.dtype() != before.dtype() || !(t.sizes() == before.sizes())) ++bad;
    if (t.is_floating_point() && t.dim() == 2) {
      const st::AnyTensor rows = t.to(st::dtype::float32);
      const double worst_mean = st::amax(st::abs(st::mean(rows, {1}))).item<double>();
      const double worst_var = st::amax(st::abs(st::var(rows, {1}, 0) - 1)).item<double>();
      std::cout << name << " standardised: |mean| <= " << worst_mean << ", |var - 1| <= " << worst_var << "\n";
      if (worst_mean > 0.02 || worst_var > 0.05) ++bad;  // bfloat16 keeps 8 bits
    }
  }
  std::cout << "step " << st::get_tensor(st::SafetensorsFile(out), "step").item() << ", wrote " << out << "\n";
  if (argc <= 2) std::remove(out.c_str());  // the default output is only the self-check's
  return bad == 0 ? 0 : 1;
}
