// SPDX-License-Identifier: MIT
// Per-dtype instantiations of the gradient nodes of views and copies and of gradient
// accumulation, which modules/tensor.cppm declares extern. This unit of strata.tensor
// imports strata.expr because a view's backward needs the reductions (expand's gradient is
// a sum_to); nothing imports an implementation unit, so there is no cycle.
module;
#include "dtype_list.hpp"
#include <complex>
#include <cstdint>
module strata.tensor;
import strata.expr;

namespace strata {
#define STRATA_GRAD_INSTANCES(T)                                   \
  namespace detail {                                               \
  template struct view_node<T, T>;                                 \
  template void accumulate_grad<T>(grad_buffer&, const Tensor<T>&); \
  template void scatter_add<T>(const Tensor<T>&, const Tensor<T>&); \
  }
STRATA_FOR_EACH_GRAD_DTYPE(STRATA_GRAD_INSTANCES)
}  // namespace strata
