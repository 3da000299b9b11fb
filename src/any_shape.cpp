// SPDX-License-Identifier: MIT
// AnyTensor's copies that rearrange elements (roll, repeat, tile, repeat_interleave, tril,
// triu) and its splits into views: one visit_dtype into the typed function.
module;
#include <complex>
#include <cstdint>
#include <optional>
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
import strata.manip;
#include "any_dispatch.hpp"

namespace strata {
namespace {
template <class F>
AnyTensor copy_of(const AnyTensor& x, F&& f) {
  return visit_dtype(x.dtype(), [&]<class T>(tag<T>) { return AnyTensor(f(x.as<T>())); });
}
template <class F>
std::vector<AnyTensor> views_of(const AnyTensor& x, F&& f) {
  return visit_dtype(x.dtype(), [&]<class T>(tag<T>) {
    const std::vector<Tensor<T>> parts = f(x.as<T>());
    return std::vector<AnyTensor>(parts.begin(), parts.end());
  });
}
}  // namespace

AnyTensor roll(const AnyTensor& x, int_list shifts, int_list dims) {
  return copy_of(x, [&](const auto& t) { return strata::roll(t, shifts, dims); });
}
AnyTensor roll(const AnyTensor& x, std::int64_t shift, std::int64_t dim) {
  return copy_of(x, [&](const auto& t) { return strata::roll(t, shift, dim); });
}
AnyTensor repeat(const AnyTensor& x, int_list repeats) {
  return copy_of(x, [&](const auto& t) { return strata::repeat(t, repeats); });
}
AnyTensor tile(const AnyTensor& x, int_list reps) {
  return copy_of(x, [&](const auto& t) { return strata::tile(t, reps); });
}
AnyTensor repeat_interleave(const AnyTensor& x, std::int64_t repeats, std::optional<std::int64_t> dim) {
  return copy_of(x, [&](const auto& t) { return strata::repeat_interleave(t, repeats, dim); });
}
AnyTensor repeat_interleave(const AnyTensor& x, const AnyTensor& repeats, std::optional<std::int64_t> dim) {
  if (repeats.dtype() != dtype::int64 && repeats.dtype() != dtype::int32)
    throw dtype_error("\"repeat_interleave_cpu\" not implemented for '" + detail::scalar_type_name(repeats.dtype()) + "'");
  const Tensor<std::int64_t> r = repeats.to<std::int64_t>();
  return copy_of(x, [&](const auto& t) { return strata::repeat_interleave(t, r, dim); });
}
AnyTensor tril(const AnyTensor& x, std::int64_t diagonal) {
  return copy_of(x, [&](const auto& t) { return strata::tril(t, diagonal); });
}
AnyTensor triu(const AnyTensor& x, std::int64_t diagonal) {
  return copy_of(x, [&](const auto& t) { return strata::triu(t, diagonal); });
}
std::vector<AnyTensor> split(const AnyTensor& x, std::int64_t split_size, std::int64_t dim) {
  return views_of(x, [&](const auto& t) { return strata::split(t, split_size, dim); });
}
std::vector<AnyTensor> split(const AnyTensor& x, int_list split_sizes, std::int64_t dim) {
  return views_of(x, [&](const auto& t) { return strata::split(t, split_sizes, dim); });
}
std::vector<AnyTensor> chunk(const AnyTensor& x, std::int64_t chunks, std::int64_t dim) {
  return views_of(x, [&](const auto& t) { return strata::chunk(t, chunks, dim); });
}
std::vector<AnyTensor> unbind(const AnyTensor& x, std::int64_t dim) {
  return views_of(x, [&](const auto& t) { return strata::unbind(t, dim); });
}
std::vector<AnyTensor> tensor_split(const AnyTensor& x, std::int64_t sections, std::int64_t dim) {
  return views_of(x, [&](const auto& t) { return strata::tensor_split(t, sections, dim); });
}
std::vector<AnyTensor> tensor_split(const AnyTensor& x, int_list indices, std::int64_t dim) {
  return views_of(x, [&](const auto& t) { return strata::tensor_split(t, indices, dim); });
}
}  // namespace strata
