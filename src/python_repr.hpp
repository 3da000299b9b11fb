// SPDX-License-Identifier: MIT
// Numbers and sizes in PyTorch's messages, printed as Python prints them (src/ only).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cstdint>
#include <string>
#include <vector>

namespace strata::detail {
/// v as Python's repr prints it: the shortest digits that read back; positional for exponents
/// -4 to 15, with ".0" when whole; else scientific.
inline std::string python_repr(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  char buf[64];
  int digits = 1;
  for (; digits < 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*e", digits - 1, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  std::snprintf(buf, sizeof buf, "%.*e", digits - 1, v);
  const int exponent = std::atoi(std::strchr(buf, 'e') + 1);
  if (exponent < -4 || exponent >= 16) return buf;
  std::snprintf(buf, sizeof buf, "%.*f", std::max(0, digits - 1 - exponent), v);
  std::string out = buf;
  if (out.find('.') == std::string::npos) out += ".0";
  return out;
}

/// Sizes as PyTorch prints a torch.Size: "torch.Size([3, 1])".
inline std::string torch_size(const auto& sizes) {
  std::string out = "torch.Size([";
  for (std::size_t d = 0; d < sizes.size(); ++d) out += (d ? ", " : "") + std::to_string(sizes[d]);
  return out + "])";
}
}  // namespace strata::detail
