// SPDX-License-Identifier: MIT
// The tensor module's thread knobs (views' geometry is in views.cpp), and the per-dtype
// instantiations that modules/tensor.cppm declares extern.
module;
#include "dtype_list.hpp"
#include <complex>
#include <cstdint>
module strata.tensor;

namespace strata {
void set_num_threads(int n) { detail::set_thread_count(n); }
int get_num_threads() { return detail::thread_count(); }

#define STRATA_TENSOR_INSTANCES(T)                                                                       \
  template class Tensor<T>;                                                                              \
  template const Tensor<T>& Tensor<T>::copy_<T>(const Tensor<T>&) const;                                 \
  namespace detail {                                                                                     \
  template void run_unary_loop<T, fill_source<T>>(const layout&, T*, const fill_source<T>&, const layout*, \
                                                  char*, std::int64_t);                                  \
  template void run_unary_loop<T, copy_source<T>>(const layout&, T*, const copy_source<T>&, const layout*, \
                                                  char*, std::int64_t);                                  \
  }
STRATA_FOR_EACH_DTYPE(STRATA_TENSOR_INSTANCES)
}  // namespace strata
