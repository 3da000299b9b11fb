// SPDX-License-Identifier: MIT
// AnyTensor's core: promotion, conversion, views, elements, autograd, factories, printing
// and .npy. Each function is one visit_dtype into the typed engine.
module;
#include <cmath>
#include <complex>
#include <functional>
#include <cstdint>
#include <limits>
#include <optional>
#include <ostream>
#include <span>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>
#include "dtype_list.hpp"
module strata.any;
import strata.error;
import strata.dtype;
import strata.shape;
import strata.storage;
import strata.tensor;
import strata.expr;
import strata.io;
import strata.random;
import strata.dlpack;

namespace strata {
namespace {
using detail::visit_dtype;
template <class T>
using tag = std::type_identity<T>;

// ---- PyTorch's ResultTypeState: one running promotion per priority group ----
struct result_state {
  int dimensioned = -1, zero_dim = -1, wrapped = -1;  // a dtype, or -1 for none yet
};
int promote_skip_none(int a, dtype b) {
  return a < 0 ? static_cast<int>(b) : static_cast<int>(promote_types(static_cast<dtype>(a), b));
}
void update(result_state& s, const AnyTensor& t) {
  if (t.dim() > 0) s.dimensioned = promote_skip_none(s.dimensioned, t.dtype());
  else s.zero_dim = promote_skip_none(s.zero_dim, t.dtype());
}
void update(result_state& s, const Scalar& v) {
  // A wrapped number counts as the default dtype of its kind: int64, float32, complex64.
  constexpr dtype of[4] = {dtype::bool_, dtype::int64, dtype::float32, dtype::complex64};
  s.wrapped = promote_skip_none(s.wrapped, of[static_cast<int>(v.kind())]);
}
// The complex dtype of a floating one's width (PyTorch's toComplexType; float16 would be
// complex32, which strata does not have).
dtype to_complex(dtype d) {
  return d == dtype::float64 || d == dtype::float128 ? dtype::complex128 : dtype::complex64;
}
// PyTorch's combine_categories: the higher group's dtype, unless the lower one's category is
// higher (then the lower decides the category, and the higher the width where it can).
int combine(int higher, int lower) {
  if (higher < 0) return lower;
  if (lower < 0) return higher;
  const dtype h = static_cast<dtype>(higher), l = static_cast<dtype>(lower);
  if (is_complex(h)) return higher;
  if (is_complex(l)) return static_cast<int>(is_floating_point(h) ? to_complex(h) : l);
  if (is_floating_point(h)) return higher;
  if (h == dtype::bool_ || is_floating_point(l)) return static_cast<int>(promote_types(h, l));
  return higher;
}
dtype result_of(const result_state& s) {
  const int r = combine(s.dimensioned, combine(s.zero_dim, s.wrapped));
  return r < 0 ? dtype::float32 : static_cast<dtype>(r);
}

template <class T>
Scalar scalar_of(const T& v) {
  if constexpr (std::is_same_v<T, bool>) return Scalar(v);
  else if constexpr (std::is_integral_v<T>) return Scalar(static_cast<std::int64_t>(v));
  else if constexpr (detail::is_complex_v<T>) return Scalar(std::complex<double>(v.real(), v.imag()));
  else return Scalar(detail::convert<double>(v));
}
}  // namespace

namespace detail {
void throw_not_implemented(const char* op, dtype d) {
  throw dtype_error(std::string("\"") + op + "\" not implemented for '" + scalar_type_name(d) + "'");
}
void check_fits(const Scalar& value, dtype d) {
  if (d == dtype::bool_) return;
  const std::complex<double> c = value.to<std::complex<double>>();
  bool fits = is_complex(d) || c.imag() == 0;
  // The largest magnitude of a part, and whether it is an integer type (and unsigned).
  const auto part_fits = [&](double x) {
    switch (d) {
      case dtype::uint8: return std::abs(x) <= 255;  // negatives wrap, as torch allows
      case dtype::int8: return x >= -128 && x <= 127;
      case dtype::int16: return x >= -32768 && x <= 32767;
      case dtype::int32: return x >= -2147483648.0 && x <= 2147483647.0;
      case dtype::int64: return x >= -9223372036854775808.0 && x < 9223372036854775808.0;
      case dtype::float16: return std::isinf(x) || std::isnan(x) || std::abs(x) <= 65504.0;
      case dtype::bfloat16: return std::isinf(x) || std::isnan(x) || std::abs(x) <= 3.3895313892515355e38;
      case dtype::float32:
      case dtype::complex64:
        return std::isinf(x) || std::isnan(x) || std::abs(x) <= static_cast<double>(std::numeric_limits<float>::max());
      default: return true;  // float64, float128, complex128 hold every double
    }
  };
  if (value.kind() <= category::integral && !is_floating_point(d) && !is_complex(d)) {
    // An integer into an integer type: exact bounds (int64's hold every int64).
    const std::int64_t i = value.to<std::int64_t>();
    switch (d) {
      case dtype::uint8: fits = i >= -255 && i <= 255; break;
      case dtype::int8: fits = i >= -128 && i <= 127; break;
      case dtype::int16: fits = i >= -32768 && i <= 32767; break;
      case dtype::int32: fits = i >= -2147483648LL && i <= 2147483647LL; break;
      default: break;
    }
  } else {
    fits = fits && part_fits(c.real()) && (!is_complex(d) || part_fits(c.imag()));
  }
  if (!fits)
    throw error("value cannot be converted to type " + std::string(dtype_name(d)) + " without overflow");
}
}  // namespace detail

std::ostream& operator<<(std::ostream& os, const Scalar& s) {
  switch (s.kind()) {
    case category::boolean: return os << (s.to<bool>() ? "True" : "False");
    case category::integral: return os << s.to<std::int64_t>();
    case category::floating: return os << s.to<double>();
    default: return os << s.to<std::complex<double>>();
  }
}

void AnyTensor::throw_as_mismatch(strata::dtype wanted) const {
  std::ostringstream msg;
  msg << "AnyTensor::as: the tensor's dtype is " << dtype_ << ", not " << wanted
      << " (to<T>() converts)";
  throw dtype_error(msg.str());
}

// ---- promotion ----
dtype result_type(const AnyTensor& a, const AnyTensor& b) {
  result_state s;
  update(s, a);
  update(s, b);
  return result_of(s);
}
dtype result_type(const AnyTensor& a, const Scalar& b) {
  result_state s;
  update(s, a);
  update(s, b);
  return result_of(s);
}
dtype result_type(const Scalar& a, const AnyTensor& b) { return result_type(b, a); }
dtype result_type(std::span<const AnyTensor> tensors) {
  result_state s;
  for (const AnyTensor& t : tensors) update(s, t);
  return result_of(s);
}

// ---- conversion ----
AnyTensor AnyTensor::to(strata::dtype d) const {
  if (d == dtype_) return *this;
  return visit_dtype(dtype_, [&]<class S>(tag<S>) {
    const Tensor<S> src = as<S>();
    return visit_dtype(d, [&]<class D>(tag<D>) { return AnyTensor(src.template to<D>()); });
  });
}
AnyTensor AnyTensor::contiguous() const { return is_contiguous() ? *this : clone(); }
AnyTensor AnyTensor::clone() const {
  return visit_dtype(dtype_, [&]<class T>(tag<T>) { return AnyTensor(as<T>().clone()); });
}
AnyTensor AnyTensor::detach() const {
  return visit_dtype(dtype_, [&]<class T>(tag<T>) { return AnyTensor(as<T>().detach()); });
}

// ---- elements ----
Scalar AnyTensor::item() const {
  return visit_dtype(dtype_, [&]<class T>(tag<T>) { return scalar_of(as<T>().item()); });
}
const AnyTensor& AnyTensor::fill_(const Scalar& value) const {
  detail::check_fits(value, dtype_);
  visit_dtype(dtype_, [&]<class T>(tag<T>) { as<T>().fill_(value.to<T>()); });
  return *this;
}
const AnyTensor& AnyTensor::copy_(const AnyTensor& src) const {
  visit_dtype(dtype_, [&]<class T>(tag<T>) {
    const Tensor<T> dst = as<T>();
    visit_dtype(src.dtype(), [&]<class U>(tag<U>) { dst.copy_(src.as<U>()); });
  });
  return *this;
}
const AnyTensor& AnyTensor::uniform_(double from, double to) const {
  visit_dtype(dtype_, [&]<class T>(tag<T>) {
    if constexpr (strata::is_floating_point(dtype_v<T>)) strata::uniform_(as<T>(), from, to);
    else detail::throw_not_implemented("uniform_", dtype_);
  });
  return *this;
}
const AnyTensor& AnyTensor::normal_(double mean, double std) const {
  visit_dtype(dtype_, [&]<class T>(tag<T>) {
    if constexpr (strata::is_floating_point(dtype_v<T>) || strata::is_complex(dtype_v<T>))
      strata::normal_(as<T>(), mean, std);
    else detail::throw_not_implemented("normal_", dtype_);
  });
  return *this;
}

// ---- views ----
namespace {
template <class F>
AnyTensor view_of(const AnyTensor& x, F&& f) {
  return visit_dtype(x.dtype(), [&]<class T>(tag<T>) { return AnyTensor(f(x.as<T>())); });
}
}  // namespace
AnyTensor AnyTensor::view(int_list sizes) const {
  return view_of(*this, [&](const auto& t) { return t.view(sizes); });
}
AnyTensor AnyTensor::reshape(int_list sizes) const {
  return view_of(*this, [&](const auto& t) { return t.reshape(sizes); });
}
AnyTensor AnyTensor::as_strided(int_list sizes, int_list strides, std::optional<std::int64_t> storage_offset) const {
  return view_of(*this, [&](const auto& t) { return t.as_strided(sizes, strides, storage_offset); });
}
AnyTensor AnyTensor::expand(int_list sizes) const {
  return view_of(*this, [&](const auto& t) { return t.expand(sizes); });
}
AnyTensor AnyTensor::narrow(std::int64_t d, std::int64_t start, std::int64_t length) const {
  return view_of(*this, [&](const auto& t) { return t.narrow(d, start, length); });
}
AnyTensor AnyTensor::select(std::int64_t d, std::int64_t index) const {
  return view_of(*this, [&](const auto& t) { return t.select(d, index); });
}
AnyTensor AnyTensor::permute(int_list dims) const {
  return view_of(*this, [&](const auto& t) { return t.permute(dims); });
}
AnyTensor AnyTensor::transpose(std::int64_t dim0, std::int64_t dim1) const {
  return view_of(*this, [&](const auto& t) { return t.transpose(dim0, dim1); });
}
AnyTensor AnyTensor::t() const {
  return view_of(*this, [&](const auto& t) { return t.t(); });
}
AnyTensor AnyTensor::movedim(std::int64_t source, std::int64_t destination) const {
  return view_of(*this, [&](const auto& t) { return t.movedim(source, destination); });
}
AnyTensor AnyTensor::diagonal(std::int64_t offset, std::int64_t dim1, std::int64_t dim2) const {
  return view_of(*this, [&](const auto& t) { return t.diagonal(offset, dim1, dim2); });
}
AnyTensor AnyTensor::unfold(std::int64_t d, std::int64_t size, std::int64_t step) const {
  return view_of(*this, [&](const auto& t) { return t.unfold(d, size, step); });
}
AnyTensor AnyTensor::squeeze() const {
  return view_of(*this, [&](const auto& t) { return t.squeeze(); });
}
AnyTensor AnyTensor::squeeze(std::int64_t d) const {
  return view_of(*this, [&](const auto& t) { return t.squeeze(d); });
}
AnyTensor AnyTensor::unsqueeze(std::int64_t d) const {
  return view_of(*this, [&](const auto& t) { return t.unsqueeze(d); });
}
AnyTensor AnyTensor::flatten(std::int64_t start_dim, std::int64_t end_dim) const {
  return view_of(*this, [&](const auto& t) { return t.flatten(start_dim, end_dim); });
}

// ---- autograd ----
AnyTensor& AnyTensor::requires_grad_(bool requires_grad) & {
  *this = visit_dtype(dtype_, [&]<class T>(tag<T>) {
    Tensor<T> t = as<T>();
    t.requires_grad_(requires_grad);
    return AnyTensor(t);
  });
  return *this;
}
AnyTensor type_as(const AnyTensor& x, const AnyTensor& other) { return x.to(other.dtype()); }
AnyTensor AnyTensor::grad() const {
  return visit_dtype(dtype_, [&]<class T>(tag<T>) { return AnyTensor(as<T>().grad()); });
}
void AnyTensor::register_post_accumulate_grad_hook(std::function<void(const AnyTensor&)> hook) const {
  visit_dtype(dtype_, [&]<class T>(tag<T>) {
    as<T>().register_post_accumulate_grad_hook([h = std::move(hook)](const Tensor<T>& t) { h(AnyTensor(t)); });
  });
}
void AnyTensor::backward(const std::optional<AnyTensor>& gradient, bool retain_graph) const {
  visit_dtype(dtype_, [&]<class T>(tag<T>) {
    if (gradient) as<T>().backward(gradient->to<T>(), retain_graph);
    else as<T>().backward(std::nullopt, retain_graph);
  });
}

// ---- factories ----
AnyTensor empty(int_list sizes, dtype d) {
  return visit_dtype(d, [&]<class T>(tag<T>) { return AnyTensor(empty<T>(sizes)); });
}
AnyTensor zeros(int_list sizes, dtype d) {
  return visit_dtype(d, [&]<class T>(tag<T>) { return AnyTensor(zeros<T>(sizes)); });
}
AnyTensor ones(int_list sizes, dtype d) {
  return visit_dtype(d, [&]<class T>(tag<T>) { return AnyTensor(ones<T>(sizes)); });
}
AnyTensor full(int_list sizes, const Scalar& value, dtype d) {
  detail::check_fits(value, d);
  return visit_dtype(d, [&]<class T>(tag<T>) { return AnyTensor(full<T>(sizes, value.to<T>())); });
}
AnyTensor scalar_tensor(const Scalar& value, dtype d) { return full({}, value, d); }
AnyTensor arange(const Scalar& start, const Scalar& end, const Scalar& step, dtype d) {
  const bool integral = start.kind() <= category::integral && end.kind() <= category::integral &&
                        step.kind() <= category::integral;
  return visit_dtype(d, [&]<class T>(tag<T>) -> AnyTensor {
    if constexpr (std::is_same_v<T, bool> || strata::is_complex(dtype_v<T>)) {
      detail::throw_not_implemented("arange", d);
    } else if (integral) {
      return arange<T>(start.to<std::int64_t>(), end.to<std::int64_t>(), step.to<std::int64_t>());
    } else {
      return arange<T>(start.to<double>(), end.to<double>(), step.to<double>());
    }
  });
}
AnyTensor rand(int_list sizes, dtype d) { return empty(sizes, d).uniform_(0, 1); }
AnyTensor randn(int_list sizes, dtype d) { return empty(sizes, d).normal_(0, 1); }
AnyTensor zeros_like(const AnyTensor& x) { return zeros(x.sizes(), x.dtype()); }
AnyTensor ones_like(const AnyTensor& x) { return ones(x.sizes(), x.dtype()); }
AnyTensor empty_like(const AnyTensor& x) { return empty(x.sizes(), x.dtype()); }

// ---- printing and files ----
std::ostream& operator<<(std::ostream& os, const AnyTensor& t) {
  return visit_dtype(t.dtype(), [&]<class T>(tag<T>) -> std::ostream& { return os << t.as<T>(); });
}
std::string to_string(const AnyTensor& t) {
  std::ostringstream s;
  s << t;
  return s.str();
}
AnyTensor load_npy(const std::string& path) {
  return visit_dtype(npy_header(path).dtype, [&]<class T>(tag<T>) { return AnyTensor(load_npy<T>(path)); });
}
void save_npy(const std::string& path, const AnyTensor& t) {
  visit_dtype(t.dtype(), [&]<class T>(tag<T>) { save_npy(path, t.as<T>()); });
}
std::vector<std::pair<std::string, AnyTensor>> load_npz(const std::string& path) {
  NpzFile f(path);
  std::vector<std::pair<std::string, AnyTensor>> out;
  for (std::size_t i = 0; i < f.size(); ++i)
    out.emplace_back(f.name(i), visit_dtype(f.dtype(i), [&]<class T>(tag<T>) { return AnyTensor(f.read<T>(i)); }));
  return out;
}
void save_npz(const std::string& path, const std::vector<std::pair<std::string, AnyTensor>>& arrays, bool compressed) {
  NpzWriter w(path, compressed);
  for (const auto& [name, t] : arrays) visit_dtype(t.dtype(), [&]<class T>(tag<T>) { w.add(name, t.as<T>()); });
  w.finish();
}
AnyTensor get_tensor(const SafetensorsFile& file, const std::string& name) {
  return visit_dtype(file.dtype(name), [&]<class T>(tag<T>) { return AnyTensor(file.get<T>(name)); });
}
dlpack::DLManagedTensorVersioned* to_dlpack(const AnyTensor& x, bool read_only) {
  return visit_dtype(x.dtype(), [&]<class T>(tag<T>) -> dlpack::DLManagedTensorVersioned* {
    if constexpr (std::is_same_v<T, float128>) throw dtype_error("to_dlpack: DLPack has no float128");
    else return to_dlpack(x.as<T>(), read_only);
  });
}
AnyTensor from_dlpack(dlpack::DLManagedTensorVersioned* m) {
  if (!m) throw error("from_dlpack: a null DLManagedTensorVersioned");
  const dlpack::DLDataType have = m->dl_tensor.dtype;
  for (int i = 0; i < num_dtypes; ++i) {
    const auto found = visit_dtype(static_cast<dtype>(i), [&]<class T>(tag<T>) -> std::optional<AnyTensor> {
      if constexpr (std::is_same_v<T, float128>) {
        return std::nullopt;
      } else {
        constexpr dlpack::DLDataType want = detail::dl_type<T>();
        if (want.code != have.code || want.bits != have.bits || want.lanes != have.lanes) return std::nullopt;
        return AnyTensor(from_dlpack<T>(m));
      }
    });
    if (found) return *found;
  }
  throw dtype_error("from_dlpack: no strata dtype has DLPack code " + std::to_string(have.code) + ", bits " +
                    std::to_string(have.bits) + ", lanes " + std::to_string(have.lanes));
}
std::vector<std::pair<std::string, AnyTensor>> load_safetensors(const std::string& path) {
  const SafetensorsFile f(path);
  std::vector<std::pair<std::string, AnyTensor>> out;
  for (const std::string& name : f.keys()) out.emplace_back(name, get_tensor(f, name));
  return out;
}
void save_safetensors(const std::string& path, const std::vector<std::pair<std::string, AnyTensor>>& tensors,
                      const std::vector<std::pair<std::string, std::string>>& metadata) {
  SafetensorsWriter w(path);
  for (const auto& [name, t] : tensors)
    visit_dtype(t.dtype(), [&]<class T>(tag<T>) { w.add(name, t.as<T>()); });
  w.finish(metadata);
}
}  // namespace strata
