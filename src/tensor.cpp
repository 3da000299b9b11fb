// SPDX-License-Identifier: MIT
// The tensor module's thread knobs (views' geometry is in views.cpp), and the per-dtype
// instantiations that modules/tensor.cppm declares extern.
module;
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
STRATA_TENSOR_INSTANCES(bool)
STRATA_TENSOR_INSTANCES(std::uint8_t)
STRATA_TENSOR_INSTANCES(std::int8_t)
STRATA_TENSOR_INSTANCES(std::int16_t)
STRATA_TENSOR_INSTANCES(std::int32_t)
STRATA_TENSOR_INSTANCES(std::int64_t)
STRATA_TENSOR_INSTANCES(half)
STRATA_TENSOR_INSTANCES(bfloat16)
STRATA_TENSOR_INSTANCES(float)
STRATA_TENSOR_INSTANCES(double)
STRATA_TENSOR_INSTANCES(float128)
STRATA_TENSOR_INSTANCES(std::complex<float>)
STRATA_TENSOR_INSTANCES(std::complex<double>)
}  // namespace strata
