// SPDX-License-Identifier: MIT
module;
#include <cstdint>
#include <range/v3/view/reverse.hpp>
#include <range/v3/view/zip.hpp>
#include <string>
module strata.shape;

namespace strata {
std::string to_string(int_list v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(v[i]);
  }
  return s + "]";
}

std::int64_t numel_of(int_list sizes) {
  std::int64_t n = 1;
  for (const std::int64_t s : sizes) {
    if (s < 0)
      throw shape_error("Trying to create tensor with negative dimension " + std::to_string(s) +
                        ": " + to_string(sizes));
    if (__builtin_mul_overflow(n, s, &n))
      throw shape_error("numel: integer multiplication overflow for sizes " + to_string(sizes));
  }
  return n;
}

dim_vector contiguous_strides(int_list sizes) {
  dim_vector strides(sizes.size());
  std::int64_t running = 1;
  for (auto&& [size, stride] : ranges::views::zip(sizes, strides) | ranges::views::reverse) {
    stride = running;
    running *= size > 1 ? size : 1;
  }
  return strides;
}

bool is_contiguous(int_list sizes, int_list strides) {
  for (const std::int64_t size : sizes)
    if (size == 0) return true;
  std::int64_t expected = 1;
  for (auto&& [size, stride] : ranges::views::zip(sizes, strides) | ranges::views::reverse) {
    if (size == 1) continue;
    if (stride != expected) return false;
    expected *= size;
  }
  return true;
}

dim_vector broadcast_shapes(int_list a, int_list b) {
  const std::size_t n = std::max(a.size(), b.size());
  dim_vector out(n);
  for (std::size_t i = 0; i < n; ++i) {  // i counts from the right
    const std::size_t d = n - 1 - i;
    const std::int64_t sa = i < a.size() ? a[a.size() - 1 - i] : 1;
    const std::int64_t sb = i < b.size() ? b[b.size() - 1 - i] : 1;
    if (sa != sb && sa != 1 && sb != 1)
      throw shape_error("The size of tensor a (" + std::to_string(sa) +
                        ") must match the size of tensor b (" + std::to_string(sb) +
                        ") at non-singleton dimension " + std::to_string(d));
    out[d] = sa == 1 ? sb : sa;
  }
  return out;
}

std::int64_t wrap_dim(std::int64_t dim, std::int64_t ndim) {
  const std::int64_t n = ndim > 0 ? ndim : 1;
  if (dim < -n || dim >= n)
    throw index_error("Dimension out of range (expected to be in range of [" + std::to_string(-n) +
                      ", " + std::to_string(n - 1) + "], but got " + std::to_string(dim) + ")");
  return dim < 0 ? dim + n : dim;
}
std::int64_t wrap_existing_dim(std::int64_t dim, std::int64_t ndim) {
  if (ndim == 0)
    throw index_error("Dimension specified as " + std::to_string(dim) + " but tensor has no dimensions");
  return wrap_dim(dim, ndim);
}
}  // namespace strata
