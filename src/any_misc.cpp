// SPDX-License-Identifier: MIT
// AnyTensor's products, joins and indexing: the operands promoted to their result_type, then
// one visit_dtype into the typed function.
module;
#include <complex>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>
#include "dtype_list.hpp"
module strata.any;
import strata.error;
import strata.dtype;
import strata.shape;
import strata.tensor;
import strata.expr;
import strata.linalg;
import strata.manip;
import strata.indexing;
#include "any_dispatch.hpp"

namespace strata {
namespace {

template <class T>
std::vector<Tensor<T>> converted(std::span<const AnyTensor> xs) {
  std::vector<Tensor<T>> out;
  out.reserve(xs.size());
  for (const AnyTensor& x : xs) out.push_back(x.to<T>());
  return out;
}
// torch.cat and torch.stack promote as promote_types over all inputs (no priority groups).
dtype joined_dtype(std::span<const AnyTensor> xs, const char* name) {
  if (xs.empty()) throw error(std::string(name) + "(): expected a non-empty list of Tensors");
  dtype d = xs[0].dtype();
  for (const AnyTensor& x : xs) d = promote_types(d, x.dtype());
  return d;
}
Tensor<std::int64_t> index_of(const AnyTensor& index, const char* name) {
  if (index.dtype() != dtype::int64 && index.dtype() != dtype::int32)
    throw index_error(std::string(name) + "(): Expected dtype int32/int64 for index");
  return index.to<std::int64_t>();
}

// The matrix products take operands of one dtype, as PyTorch's (no promotion).
void check_same_dtype(const AnyTensor& a, const AnyTensor& b) {
  if (a.dtype() != b.dtype())
    throw dtype_error("expected scalar type " + detail::scalar_type_name(a.dtype()) + " but found " +
                      detail::scalar_type_name(b.dtype()));
}
template <class F>
AnyTensor product(const AnyTensor& a, const AnyTensor& b, const char* name, F&& f) {
  check_same_dtype(a, b);
  return visit_dtype(a.dtype(), [&]<class T>(tag<T>) -> AnyTensor {
    if constexpr (std::is_same_v<T, bool>) detail::throw_not_implemented(name, a.dtype());
    else return f(a.as<T>(), b.as<T>());
  });
}
}  // namespace

AnyTensor matmul(const AnyTensor& a, const AnyTensor& b) {
  return product(a, b, "matmul", [](const auto& x, const auto& y) { return strata::matmul(x, y); });
}
AnyTensor mm(const AnyTensor& a, const AnyTensor& b) {
  return product(a, b, "mm", [](const auto& x, const auto& y) { return strata::mm(x, y); });
}
AnyTensor bmm(const AnyTensor& a, const AnyTensor& b) {
  return product(a, b, "bmm", [](const auto& x, const auto& y) { return strata::bmm(x, y); });
}
AnyTensor mv(const AnyTensor& a, const AnyTensor& b) {
  return product(a, b, "mv", [](const auto& x, const auto& y) { return strata::mv(x, y); });
}
AnyTensor dot(const AnyTensor& a, const AnyTensor& b) {
  if (a.dtype() != b.dtype())
    throw dtype_error("dot : expected both vectors to have same dtype, but found " +
                      detail::scalar_type_name(a.dtype()) + " and " + detail::scalar_type_name(b.dtype()));
  return product(a, b, "dot", [](const auto& x, const auto& y) { return strata::dot(x, y); });
}
// torch.outer is a broadcast product (a.reshape(-1, 1) * b): it promotes.
AnyTensor outer(const AnyTensor& a, const AnyTensor& b) {
  const dtype c = result_type(a, b);
  return visit_dtype(c, [&]<class T>(tag<T>) -> AnyTensor {
    if constexpr (std::is_same_v<T, bool>) detail::throw_not_implemented("outer", c);
    else return strata::outer(a.to<T>(), b.to<T>());
  });
}
AnyTensor einsum(std::string_view equation, const std::vector<AnyTensor>& operands) {
  if (operands.empty()) throw error("einsum(): must provide at least one operand");
  for (const AnyTensor& x : operands) check_same_dtype(operands[0], x);
  const dtype c = operands[0].dtype();
  return visit_dtype(c, [&]<class T>(tag<T>) -> AnyTensor {
    if constexpr (std::is_same_v<T, bool>) detail::throw_not_implemented("einsum", c);
    else return Tensor<T>(strata::einsum(equation, converted<T>(operands)));
  });
}
AnyTensor cat(const std::vector<AnyTensor>& tensors, std::int64_t dim) {
  const dtype c = joined_dtype(tensors, "cat");
  return visit_dtype(c, [&]<class T>(tag<T>) { return AnyTensor(strata::cat(converted<T>(tensors), dim)); });
}
AnyTensor stack(const std::vector<AnyTensor>& tensors, std::int64_t dim) {
  const dtype c = joined_dtype(tensors, "stack");
  return visit_dtype(c, [&]<class T>(tag<T>) { return AnyTensor(strata::stack(converted<T>(tensors), dim)); });
}
AnyTensor index_select(const AnyTensor& x, std::int64_t dim, const AnyTensor& index) {
  const Tensor<std::int64_t> i = index_of(index, "index_select");
  return visit_dtype(x.dtype(), [&]<class T>(tag<T>) { return AnyTensor(strata::index_select(x.as<T>(), dim, i)); });
}
AnyTensor gather(const AnyTensor& x, std::int64_t dim, const AnyTensor& index) {
  if (index.dtype() != dtype::int64) throw index_error("gather(): Expected dtype int64 for index");
  const Tensor<std::int64_t> i = index.as<std::int64_t>();
  return visit_dtype(x.dtype(), [&]<class T>(tag<T>) { return AnyTensor(strata::gather(x.as<T>(), dim, i)); });
}
AnyTensor masked_fill(const AnyTensor& x, const AnyTensor& mask, const Scalar& value) {
  if (mask.dtype() != dtype::bool_) throw dtype_error("masked_fill_ only supports boolean masks, but got mask with dtype " +
                                                      std::string(dtype_name(mask.dtype())));
  const Tensor<bool> m = mask.as<bool>();
  detail::check_fits(value, x.dtype());
  return visit_dtype(x.dtype(), [&]<class T>(tag<T>) {
    return AnyTensor(strata::masked_fill(x.as<T>(), m, value.to<T>()));
  });
}
AnyTensor masked_select(const AnyTensor& x, const AnyTensor& mask) {
  if (mask.dtype() != dtype::bool_) throw dtype_error("masked_select: expected BoolTensor for mask");
  const Tensor<bool> m = mask.as<bool>();
  return visit_dtype(x.dtype(), [&]<class T>(tag<T>) { return AnyTensor(strata::masked_select(x.as<T>(), m)); });
}
AnyTensor AnyTensor::index(std::initializer_list<tensor_index> indices) const {
  return index(std::vector<tensor_index>(indices));
}
AnyTensor AnyTensor::index(const std::vector<tensor_index>& indices) const {
  return visit_dtype(dtype(), [&]<class T>(tag<T>) { return AnyTensor(as<T>().index(indices)); });
}
const AnyTensor& AnyTensor::index_put_(const std::vector<tensor_index>& indices, const AnyTensor& values,
                                       bool accumulate) const {
  visit_dtype(dtype(), [&]<class T>(tag<T>) { as<T>().index_put_(indices, values.to<T>(), accumulate); });
  return *this;
}
AnyTensor flip(const AnyTensor& x, int_list dims) {
  return visit_dtype(x.dtype(), [&]<class T>(tag<T>) { return AnyTensor(strata::flip(x.as<T>(), dims)); });
}
}  // namespace strata
