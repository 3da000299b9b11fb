// SPDX-License-Identifier: MIT
// What a reduction's shapes need, whatever its expression: the dims checked and wrapped, the
// kept and result shapes (compiled once; a user's translation unit instantiates only the
// reduction's kernels).
module;
#include <cstddef>
#include <cstdint>
#include <string>

#include "dtype_list.hpp"
module strata.expr;
import strata.error;
import strata.shape;
import strata.loop;

namespace strata::detail {
#define STRATA_REDUCE_LOOPS(Op, A)                                                    \
  template A chunk_reduce<Op, A, A>(const A*, std::int64_t);                          \
  template void combine_rows<Op, A>(const A* const*, std::int64_t, A*, std::int64_t); \
  template void combine_periods<Op, A>(const A*, std::int64_t, A*, std::int64_t);     \
  template void fold_rows<Op, A>(const A*, std::int64_t, std::int64_t, A*);            \
  template void fold_lanes<Op, A>(const A*, std::int64_t, std::int64_t, A*);            \
  template struct reduction_kernels<Op, A>;
STRATA_FOR_EACH_REDUCE_LOOP(STRATA_REDUCE_LOOPS)
#undef STRATA_REDUCE_LOOPS

small_vec<bool, 16> reduction_mask(int_list dims, std::int64_t ndim) {
  small_vec<bool, 16> mask(static_cast<std::size_t>(ndim), dims.empty());
  for (const std::int64_t d : dims) {
    const std::int64_t w = wrap_dim(d, ndim);
    if (ndim == 0) continue;
    if (mask[static_cast<std::size_t>(w)])
      throw shape_error("dim " + std::to_string(w) + " appears multiple times in the list of dims");
    mask[static_cast<std::size_t>(w)] = true;
  }
  return mask;
}

void reduce_shapes(int_list s, int_list dims, bool keepdim, bool needs_elements, const char* name, dim_vector& keep,
                   dim_vector& out) {
  const auto n = static_cast<std::int64_t>(s.size());
  const auto mask = reduction_mask(dims, n);
  if (needs_elements && dims.empty() && numel_of(s) == 0)
    throw error(std::string(name) + "(): Expected reduction dim to be specified for input.numel() == 0. "
                "Specify the reduction dim with the 'dim' argument.");
  keep.assign(s.begin(), s.end());
  out.clear();
  for (std::int64_t d = 0; d < n; ++d) {
    if (!mask[static_cast<std::size_t>(d)]) {
      out.push_back(s[static_cast<std::size_t>(d)]);
      continue;
    }
    if (s[static_cast<std::size_t>(d)] == 0 && needs_elements)
      throw index_error(std::string(name) + "(): Expected reduction dim " + std::to_string(d) +
                        " to have non-zero size.");
    keep[static_cast<std::size_t>(d)] = 1;
    if (keepdim) out.push_back(1);
  }
}
}  // namespace strata::detail
