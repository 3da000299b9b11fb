// SPDX-License-Identifier: MIT
// AnyTensor's three-operand functions (lerp, addcmul, addcdiv): the operands checked and
// promoted as PyTorch's, then one visit_dtype into the typed function.
module;
#include <complex>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>
#include "dtype_list.hpp"
module strata.any;
import strata.error;
import strata.dtype;
import strata.shape;
import strata.tensor;
import strata.expr;
#include "any_dispatch.hpp"

namespace strata {
namespace {
// lerp's operands share one dtype: PyTorch names the first that differs from start's.
void check_lerp_dtype(const AnyTensor& start, const AnyTensor& other, const char* role) {
  if (other.dtype() != start.dtype())
    throw dtype_error(std::string("expected dtype ") + std::string(dtype_name(start.dtype())) + " for `" + role +
                      "` but got dtype " + std::string(dtype_name(other.dtype())));
}
}  // namespace

AnyTensor lerp(const AnyTensor& start, const AnyTensor& end, const Scalar& weight) {
  check_lerp_dtype(start, end, "end");
  const std::complex<double> w = weight.to<std::complex<double>>();
  return on_dtype<inexact_t>(start, "lerp_kernel_scalar", [&]<class T>(const Tensor<T>& s) -> AnyTensor {
    if (w.imag() != 0) throw dtype_error("lerp: a complex weight needs complex tensors");
    return strata::lerp(s, end.as<T>(), w.real());
  });
}
AnyTensor lerp(const AnyTensor& start, const AnyTensor& end, const AnyTensor& weight) {
  check_lerp_dtype(start, end, "end");
  check_lerp_dtype(start, weight, "weight");
  return on_dtype<real_float_t>(start, "lerp_kernel_tensor", [&]<class T>(const Tensor<T>& s) -> AnyTensor {
    return strata::lerp(s, end.as<T>(), weight.as<T>());
  });
}
AnyTensor addcmul(const AnyTensor& input, const AnyTensor& t1, const AnyTensor& t2, const Scalar& value) {
  const dtype c = result_type(std::vector<AnyTensor>{input, t1, t2});
  return visit_dtype(c, [&]<class T>(tag<T>) -> AnyTensor {
    if constexpr (std::is_same_v<T, bool>) detail::throw_not_implemented("addcmul_cpu_out", c);
    else return strata::addcmul(input.to<T>(), t1.to<T>(), t2.to<T>(), value.to<T>());
  });
}
AnyTensor addcdiv(const AnyTensor& input, const AnyTensor& t1, const AnyTensor& t2, const Scalar& value) {
  if (category_of(t1.dtype()) <= category::integral && category_of(t2.dtype()) <= category::integral)
    throw dtype_error("Integer division with addcdiv is no longer supported, and in a future release addcdiv will "
                      "perform a true division of tensor1 and tensor2. The historic addcdiv behavior can be "
                      "implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer "
                      "inputs and as (input + value * tensor1 / tensor2) for float inputs. The future addcdiv "
                      "behavior is just the latter implementation: (input + value * tensor1 / tensor2), for all "
                      "dtypes.");
  const dtype c = result_type(std::vector<AnyTensor>{input, t1, t2});
  return visit_dtype(c, [&]<class T>(tag<T>) -> AnyTensor {
    if constexpr (std::is_integral_v<T>) throw_unreachable();  // t1 or t2 is inexact, so is c
    else return strata::addcdiv(input.to<T>(), t1.to<T>(), t2.to<T>(), value.to<T>());
  });
}
}  // namespace strata
