// SPDX-License-Identifier: MIT
// AnyTensor's scatters, take, nonzero, index_add and the in-place indexing writes: indices
// and sources checked as PyTorch checks them, then one visit_dtype into the typed function.
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
import strata.indexing;
#include "any_dispatch.hpp"

namespace strata {
namespace {
std::string name_of(dtype d) { return detail::scalar_type_name(d); }
// scatter and gather take int64 indices only.
Tensor<std::int64_t> scatter_index(const AnyTensor& index, const char* op) {
  if (index.dtype() != dtype::int64) throw index_error(std::string(op) + "(): Expected dtype int64 for index");
  return index.as<std::int64_t>();
}
// index_add takes int64 or int32 indices.
Tensor<std::int64_t> add_index(const AnyTensor& index) {
  if (index.dtype() != dtype::int64 && index.dtype() != dtype::int32)
    throw index_error("index_add_(): Expected dtype int32/int64 for index");
  return index.to<std::int64_t>();
}
// The source of a scatter has self's dtype.
void check_source(const AnyTensor& self, const AnyTensor& src, const char* op, const char* role) {
  if (src.dtype() != self.dtype())
    throw dtype_error(std::string(op) + "(): Expected self.dtype to be equal to " + role + ".dtype");
}
void check_add_source(const AnyTensor& self, const AnyTensor& source) {
  if (source.dtype() != self.dtype())
    throw dtype_error("index_add_(): self (" + name_of(self.dtype()) + ") and source (" + name_of(source.dtype()) +
                      ") must have the same scalar type");
}
Tensor<bool> mask_of(const AnyTensor& mask, const char* op) {
  if (mask.dtype() != dtype::bool_)
    throw dtype_error(std::string(op) + " only supports boolean masks, but got mask with dtype " + name_of(mask.dtype()));
  return mask.as<bool>();
}
}  // namespace

AnyTensor scatter(const AnyTensor& x, std::int64_t dim, const AnyTensor& index, const AnyTensor& src) {
  const Tensor<std::int64_t> i = scatter_index(index, "scatter");
  check_source(x, src, "scatter", "src");
  return visit_dtype(x.dtype(), [&]<class T>(tag<T>) { return AnyTensor(strata::scatter(x.as<T>(), dim, i, src.as<T>())); });
}
AnyTensor scatter(const AnyTensor& x, std::int64_t dim, const AnyTensor& index, const Scalar& value) {
  const Tensor<std::int64_t> i = scatter_index(index, "scatter");
  detail::check_fits(value, x.dtype());
  return visit_dtype(x.dtype(), [&]<class T>(tag<T>) {
    return AnyTensor(strata::scatter(x.as<T>(), dim, i, value.to<T>()));
  });
}
AnyTensor scatter_add(const AnyTensor& x, std::int64_t dim, const AnyTensor& index, const AnyTensor& src) {
  const Tensor<std::int64_t> i = scatter_index(index, "scatter_add");
  check_source(x, src, "scatter_add", "src");
  return visit_dtype(x.dtype(),
                     [&]<class T>(tag<T>) { return AnyTensor(strata::scatter_add(x.as<T>(), dim, i, src.as<T>())); });
}
AnyTensor take(const AnyTensor& x, const AnyTensor& index) {
  if (index.dtype() != dtype::int64)
    throw index_error("take(): Expected a long tensor for index, but got " + name_of(index.dtype()));
  const Tensor<std::int64_t> i = index.as<std::int64_t>();
  return visit_dtype(x.dtype(), [&]<class T>(tag<T>) { return AnyTensor(strata::take(x.as<T>(), i)); });
}
Tensor<std::int64_t> nonzero(const AnyTensor& x) {
  return visit_dtype(x.dtype(), [&]<class T>(tag<T>) { return strata::nonzero(x.as<T>()); });
}
AnyTensor index_add(const AnyTensor& x, std::int64_t dim, const AnyTensor& index, const AnyTensor& source,
                    const Scalar& alpha) {
  const Tensor<std::int64_t> i = add_index(index);
  check_add_source(x, source);
  return visit_dtype(x.dtype(), [&]<class T>(tag<T>) {
    return AnyTensor(strata::index_add(x.as<T>(), dim, i, source.as<T>(), alpha.to<T>()));
  });
}

const AnyTensor& AnyTensor::masked_fill_(const AnyTensor& mask, const Scalar& value) const {
  const Tensor<bool> m = mask_of(mask, "masked_fill_");
  detail::check_fits(value, dtype());
  visit_dtype(dtype(), [&]<class T>(tag<T>) { strata::masked_fill_(as<T>(), m, value.to<T>()); });
  return *this;
}
const AnyTensor& AnyTensor::scatter_(std::int64_t dim, const AnyTensor& index, const AnyTensor& src) const {
  const Tensor<std::int64_t> i = scatter_index(index, "scatter_");
  check_source(*this, src, "scatter_", "src");
  visit_dtype(dtype(), [&]<class T>(tag<T>) { strata::scatter_(as<T>(), dim, i, src.as<T>()); });
  return *this;
}
const AnyTensor& AnyTensor::scatter_(std::int64_t dim, const AnyTensor& index, const Scalar& value) const {
  const Tensor<std::int64_t> i = scatter_index(index, "scatter_");
  detail::check_fits(value, dtype());
  visit_dtype(dtype(), [&]<class T>(tag<T>) { strata::scatter_(as<T>(), dim, i, value.to<T>()); });
  return *this;
}
const AnyTensor& AnyTensor::scatter_add_(std::int64_t dim, const AnyTensor& index, const AnyTensor& src) const {
  const Tensor<std::int64_t> i = scatter_index(index, "scatter_add_");
  check_source(*this, src, "scatter_add_", "src");
  visit_dtype(dtype(), [&]<class T>(tag<T>) { strata::scatter_add_(as<T>(), dim, i, src.as<T>()); });
  return *this;
}
const AnyTensor& AnyTensor::index_add_(std::int64_t dim, const AnyTensor& index, const AnyTensor& source,
                                       const Scalar& alpha) const {
  const Tensor<std::int64_t> i = add_index(index);
  check_add_source(*this, source);
  visit_dtype(dtype(), [&]<class T>(tag<T>) { strata::index_add_(as<T>(), dim, i, source.as<T>(), alpha.to<T>()); });
  return *this;
}
AnyTensor::operator tensor_index() const {
  switch (dtype()) {
    case dtype::bool_: return tensor_index(as<bool>());
    case dtype::uint8: return tensor_index(as<std::uint8_t>().to<bool>());  // torch's deprecated uint8 masks
    case dtype::int64: return tensor_index(as<std::int64_t>());
    case dtype::int32: return tensor_index(as<std::int32_t>());
    default: throw index_error("tensors used as indices must be long, int, byte or bool tensors");
  }
}
}  // namespace strata
