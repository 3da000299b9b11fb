// SPDX-License-Identifier: MIT
// AnyTensor: a tensor whose dtype is known at run time (PyTorch's at::Tensor), with PyTorch's
// result_type (dimensioned tensors, 0-dim tensors and wrapped numbers in three priority groups).
// Every operation is one switch on the result dtype into the typed engine, compiled once in
// src/any*.cpp: a user's translation unit instantiates nothing per dtype.
module;
#include "dtype_list.hpp"
#include "any_ops.hpp"
export module strata.any;
import strata.std;
import strata.error;
import strata.dtype;
import strata.shape;
import strata.storage;
import strata.loop;
import strata.graph;
export import strata.tensor;
import strata.io;
import strata.dlpack;

export namespace strata {
/// A number with its PyTorch kind (bool, integer, floating, complex): c10::Scalar, the
/// "wrapped number" of an operation with a tensor.
class Scalar {
 public:
  /// A bool.
  Scalar(bool v) noexcept : kind_(category::boolean), i_(v) {}  // NOLINT: implicit, as c10::Scalar
  /// An integer (held as int64).
  template <std::integral I>
    requires(!std::is_same_v<I, bool>)
  Scalar(I v) noexcept : kind_(category::integral), i_(static_cast<std::int64_t>(v)) {}  // NOLINT
  /// A floating number (held as double).
  Scalar(double v) noexcept : kind_(category::floating), c_(v, 0.0) {}  // NOLINT
  /// A float (held as double).
  Scalar(float v) noexcept : Scalar(static_cast<double>(v)) {}  // NOLINT
  /// A half (held as double).
  Scalar(half v) noexcept : Scalar(static_cast<double>(static_cast<float>(v))) {}  // NOLINT
  /// A bfloat16 (held as double).
  Scalar(bfloat16 v) noexcept : Scalar(static_cast<double>(static_cast<float>(v))) {}  // NOLINT
  /// A complex number (held as complex<double>).
  Scalar(std::complex<double> v) noexcept : kind_(category::complex), c_(v) {}  // NOLINT
  /// A complex<float> (held as complex<double>).
  Scalar(std::complex<float> v) noexcept : Scalar(std::complex<double>(v)) {}  // NOLINT

  /// The kind: boolean, integral, floating or complex.
  category kind() const noexcept { return kind_; }
  /// The dtype of the C++ number held: bool, int64, float64 or complex128.
  strata::dtype dtype() const noexcept {
    constexpr strata::dtype of[4] = {dtype::bool_, dtype::int64, dtype::float64, dtype::complex128};
    return of[static_cast<int>(kind_)];
  }
  /// The value converted to T as PyTorch's copy_ converts (complex to real keeps the real part).
  template <element T>
  T to() const {
    switch (kind_) {
      case category::boolean: return detail::convert<T>(i_ != 0);
      case category::integral: return detail::convert<T>(i_);
      case category::floating: return detail::convert<T>(c_.real());
      default: return detail::convert<T>(c_);
    }
  }

 private:
  category kind_;
  std::int64_t i_ = 0;
  std::complex<double> c_{};
};
/// Prints a Scalar as its value.
std::ostream& operator<<(std::ostream& os, const Scalar& s);

class AnyTensor;
}  // namespace strata

export namespace strata {
/// A strided tensor whose dtype is known at run time (PyTorch's at::Tensor): a handle to the
/// same storage, view and autograd record as the Tensor<T> it was made from or is viewed as.
/// Operations dispatch once on the result dtype into the typed engine and return AnyTensor.
class AnyTensor : public tensor_methods<AnyTensor> {
 public:
  /// An empty 1-D float32 tensor (sizes [0]), as Tensor<float>().
  AnyTensor() : AnyTensor(Tensor<float>()) {}
  /// The same elements as t (no copy; autograd sees one tensor).
  template <element T>
  AnyTensor(const Tensor<T>& t)  // NOLINT: implicit, Tensor<T> is an AnyTensor
      : storage_(t.storage()), layout_(detail::autograd_access<Tensor<T>>::view(t)),
        meta_(detail::autograd_access<Tensor<T>>::meta(t)), dtype_(dtype_v<T>) {}
  /// Evaluates an expression (its dtype is the expression's).
  template <detail::lazy_expression E>
  AnyTensor(const E& e) : AnyTensor(Tensor<typename E::value_type>(e)) {}  // NOLINT: implicit

  // ---- geometry ----
  /// The element type tag.
  strata::dtype dtype() const noexcept { return dtype_; }
  /// Sizes of every dim.
  int_list sizes() const noexcept { return layout_.sizes; }
  /// Size of dim d (negative d counts from the end).
  std::int64_t size(std::int64_t d) const { return layout_.sizes[wrap_existing_dim(d, dim())]; }
  /// Strides of every dim, in elements.
  int_list strides() const noexcept { return layout_.strides; }
  /// Stride of dim d (negative d counts from the end).
  std::int64_t stride(std::int64_t d) const { return layout_.strides[wrap_existing_dim(d, dim())]; }
  /// Offset of element 0 in the storage, in elements.
  std::int64_t storage_offset() const noexcept { return layout_.offset; }
  /// Number of dims.
  std::int64_t dim() const noexcept { return static_cast<std::int64_t>(layout_.sizes.size()); }
  /// Number of elements.
  std::int64_t numel() const noexcept { return numel_of(layout_.sizes); }
  /// Bytes per element.
  std::int64_t element_size() const noexcept { return static_cast<std::int64_t>(itemsize(dtype_)); }
  /// Bytes of the elements viewed (numel() * element_size()).
  std::int64_t nbytes() const noexcept { return numel() * element_size(); }
  /// Address of element 0.
  void* data_ptr() const noexcept {
    return static_cast<char*>(storage_.data()) + layout_.offset * element_size();
  }
  /// The shared storage.
  const strata::storage& storage() const noexcept { return storage_; }
  /// PyTorch's contiguity test.
  bool is_contiguous() const { return strata::is_contiguous(layout_.sizes, layout_.strides); }
  /// True when both handles view the same storage.
  bool is_alias_of(const AnyTensor& o) const noexcept { return storage_.is_alias_of(o.storage_); }
  /// True for the floating dtypes.
  bool is_floating_point() const noexcept { return strata::is_floating_point(dtype_); }
  /// True for complex64 and complex128.
  bool is_complex() const noexcept { return strata::is_complex(dtype_); }

  // ---- the typed tensor ----
  /// This tensor as Tensor<T>, sharing elements and autograd record; dtype_error unless its
  /// dtype is T (use to<T>() to convert).
  template <element T>
  Tensor<T> as() const {
    if (dtype_ != dtype_v<T>) throw_as_mismatch(dtype_v<T>);
    return detail::autograd_access<Tensor<T>>::assemble(storage_, layout_, meta_);
  }
  /// True when the dtype is T's.
  template <element T>
  bool is() const noexcept { return dtype_ == dtype_v<T>; }
  /// This tensor as Tensor<T>: itself when the dtype is T, else a converted copy (t.to(dtype)).
  template <element T>
  Tensor<T> to() const { return to(dtype_v<T>).template as<T>(); }
  /// This tensor when the dtype is d, else a contiguous converted copy (recorded for autograd).
  AnyTensor to(strata::dtype d) const;
  /// This tensor if contiguous, else a contiguous copy.
  AnyTensor contiguous() const;
  /// A contiguous deep copy.
  AnyTensor clone() const;
  /// This tensor (already evaluated).
  AnyTensor eval() const { return *this; }

  // ---- elements ----
  /// The single element of a one-element tensor.
  Scalar item() const;
  /// The single element converted to V (exact when V is the dtype: float128 keeps its digits).
  template <element V>
  V item() const {
    if (dtype_ == dtype_v<V>) return as<V>().item();
    return item().to<V>();
  }
  /// The elements in row-major order, converted to V.
  template <element V>
  std::vector<V> to_vector() const { return to<V>().to_vector(); }
  /// Sets every element to value; error when the dtype cannot hold it (torch's overflow check).
  const AnyTensor& fill_(const Scalar& value) const;
  /// Sets every element to zero.
  const AnyTensor& zero_() const { return fill_(false); }
  /// Copies src (broadcast, converted like PyTorch's copy_) into this view.
  const AnyTensor& copy_(const AnyTensor& src) const;
  /// Writes src into this view (copy_), as Tensor<T>::assign.
  const AnyTensor& assign(const AnyTensor& src) const { return copy_(src); }
  /// Fills with samples of U(from, to) (floating dtypes).
  const AnyTensor& uniform_(double from = 0, double to = 1) const;
  /// Fills with samples of N(mean, std^2) (floating and complex dtypes).
  const AnyTensor& normal_(double mean = 0, double std = 1) const;
  /// Writing to a temporary view writes through: t.select(0, 1) = other.
  AnyTensor& operator=(const AnyTensor& src) && { copy_(src); return *this; }
  /// Writing a number to a temporary view fills it.
  AnyTensor& operator=(const Scalar& value) && { fill_(value); return *this; }
  /// Rebinds this handle (an lvalue) to other's elements.
  AnyTensor& operator=(const AnyTensor&) & = default;
  AnyTensor(const AnyTensor&) = default;
  AnyTensor(AnyTensor&&) noexcept = default;
  /// Rebinds this handle (an lvalue) to other's elements.
  AnyTensor& operator=(AnyTensor&&) & noexcept = default;
  ~AnyTensor() = default;

  // ---- in place, with PyTorch's can_cast check (a handle writes through when const, as Tensor<T>) ----
  /// *this += other (the result type must cast to this dtype).
  const AnyTensor& operator+=(const AnyTensor& other) const;
  /// *this -= other.
  const AnyTensor& operator-=(const AnyTensor& other) const;
  /// *this *= other.
  const AnyTensor& operator*=(const AnyTensor& other) const;
  /// *this /= other (true division: integer tensors refuse it, as PyTorch).
  const AnyTensor& operator/=(const AnyTensor& other) const;
  /// *this += value.
  const AnyTensor& operator+=(const Scalar& value) const;
  /// *this -= value.
  const AnyTensor& operator-=(const Scalar& value) const;
  /// *this *= value.
  const AnyTensor& operator*=(const Scalar& value) const;
  /// *this /= value.
  const AnyTensor& operator/=(const Scalar& value) const;
  /// torch's add_: *this += other.
  const AnyTensor& add_(const AnyTensor& other) const { return *this += other; }
  /// *this += alpha * other (alpha must not be floating for an integer result, as torch).
  const AnyTensor& add_(const AnyTensor& other, const Scalar& alpha) const;
  /// *this += value.
  const AnyTensor& add_(const Scalar& value) const { return *this += value; }
  /// torch's sub_: *this -= other.
  const AnyTensor& sub_(const AnyTensor& other) const { return *this -= other; }
  /// *this -= alpha * other.
  const AnyTensor& sub_(const AnyTensor& other, const Scalar& alpha) const;
  /// *this -= value.
  const AnyTensor& sub_(const Scalar& value) const { return *this -= value; }
  /// torch's mul_: *this *= other.
  const AnyTensor& mul_(const AnyTensor& other) const { return *this *= other; }
  /// *this *= value.
  const AnyTensor& mul_(const Scalar& value) const { return *this *= value; }
  /// torch's div_: *this /= other.
  const AnyTensor& div_(const AnyTensor& other) const { return *this /= other; }
  /// *this /= value.
  const AnyTensor& div_(const Scalar& value) const { return *this /= value; }
  /// Clamps in place to [lo, hi] (numbers, checked to fit this dtype).
  const AnyTensor& clamp_(const std::optional<Scalar>& lo, const std::optional<Scalar>& hi) const;
  /// Writes value where mask (bool) is true.
  const AnyTensor& masked_fill_(const AnyTensor& mask, const Scalar& value) const;
  /// scatter in place: self[index[i][j]][j] = src[i][j] for dim 0 (src of this dtype).
  const AnyTensor& scatter_(std::int64_t dim, const AnyTensor& index, const AnyTensor& src) const;
  /// scatter of one value in place.
  const AnyTensor& scatter_(std::int64_t dim, const AnyTensor& index, const Scalar& value) const;
  /// scatter_add in place.
  const AnyTensor& scatter_add_(std::int64_t dim, const AnyTensor& index, const AnyTensor& src) const;
  /// index_add in place: self[index[i]] += alpha * source[i] along dim.
  const AnyTensor& index_add_(std::int64_t dim, const AnyTensor& index, const AnyTensor& source,
                              const Scalar& alpha = 1) const;

  // ---- views (share storage; recorded for autograd) ----
  /// The same elements with new sizes (-1 inferred); needs compatible strides.
  AnyTensor view(int_list sizes) const;
  /// view() when possible, else a contiguous copy.
  AnyTensor reshape(int_list sizes) const;
  /// A view with the given geometry over the same storage.
  AnyTensor as_strided(int_list sizes, int_list strides, std::optional<std::int64_t> storage_offset = {}) const;
  /// Broadcasts to sizes (-1 keeps a dim) without copying.
  AnyTensor expand(int_list sizes) const;
  /// length elements of dim from start.
  AnyTensor narrow(std::int64_t dim, std::int64_t start, std::int64_t length) const;
  /// The slice at index of dim (that dim removed).
  AnyTensor select(std::int64_t dim, std::int64_t index) const;
  /// Dims reordered.
  AnyTensor permute(int_list dims) const;
  /// dim0 and dim1 swapped.
  AnyTensor transpose(std::int64_t dim0, std::int64_t dim1) const;
  /// The transpose of a matrix (at most 2 dims).
  AnyTensor t() const;
  /// Dims moved from source to destination.
  AnyTensor movedim(std::int64_t source, std::int64_t destination) const;
  /// A diagonal as a view.
  AnyTensor diagonal(std::int64_t offset = 0, std::int64_t dim1 = 0, std::int64_t dim2 = 1) const;
  /// Windows of size along dim, step apart (a new last dim).
  AnyTensor unfold(std::int64_t dim, std::int64_t size, std::int64_t step) const;
  /// Every size-1 dim removed.
  AnyTensor squeeze() const;
  /// dim removed when of size 1.
  AnyTensor squeeze(std::int64_t dim) const;
  /// A size-1 dim inserted at dim.
  AnyTensor unsqueeze(std::int64_t dim) const;
  /// Dims start_dim..end_dim merged.
  AnyTensor flatten(std::int64_t start_dim = 0, std::int64_t end_dim = -1) const;
  /// PyTorch's indexing, as Tensor<T>::index: t.index({1, st::slice(), st::none}), a bool mask,
  /// an int64 index tensor (views for ints and slices, copies for tensors).
  AnyTensor index(std::initializer_list<tensor_index> indices) const;
  /// index() with the entries in a vector.
  AnyTensor index(const std::vector<tensor_index>& indices) const;
  /// Writes values (converted to this dtype) at the indexed elements; accumulate adds them.
  const AnyTensor& index_put_(const std::vector<tensor_index>& indices, const AnyTensor& values,
                              bool accumulate = false) const;
  /// The slice at index of dim 0 (a view), as t[i].
  AnyTensor operator[](std::int64_t index) const { return select(0, index); }
  /// This tensor as an index entry: a bool mask, or int64/int32 indices (index_error otherwise).
  operator tensor_index() const;  // NOLINT: implicit, so t.index({mask}) takes an AnyTensor mask

  // ---- autograd ----
  /// Marks this leaf as needing a gradient (floating and complex dtypes only).
  AnyTensor& requires_grad_(bool requires_grad = true) &;
  /// requires_grad_ on a temporary (a factory's result): the handle by value.
  AnyTensor requires_grad_(bool requires_grad = true) && { return std::move(requires_grad_(requires_grad)); }
  /// True when gradients flow to or through this tensor.
  bool requires_grad() const noexcept { return meta_ && meta_->requires_grad; }
  /// True for a tensor no recorded operation made.
  bool is_leaf() const noexcept { return !meta_ || !meta_->grad_fn; }
  /// The accumulated gradient of a leaf; error when it has none (see has_grad()).
  AnyTensor grad() const;
  /// True when a leaf has a gradient.
  bool has_grad() const noexcept { return meta_ && meta_->grad.defined; }
  /// Back-propagates from this tensor (a one-element one unless gradient is given).
  void backward(const std::optional<AnyTensor>& gradient = std::nullopt, bool retain_graph = false) const;
  /// The same elements, cut from the graph.
  AnyTensor detach() const;
  /// Calls hook(*this) in each backward() once this leaf's gradient is accumulated (torch's
  /// register_post_accumulate_grad_hook).
  void register_post_accumulate_grad_hook(std::function<void(const AnyTensor&)> hook) const;

 private:
  friend struct detail::autograd_access<AnyTensor>;
  [[noreturn]] void throw_as_mismatch(strata::dtype wanted) const;
  strata::storage storage_;
  detail::layout layout_;
  std::shared_ptr<detail::autograd_meta> meta_;
  strata::dtype dtype_;
};

/// Values and indices of sort, topk, max(dim), ...: `auto [v, i] = x.sort();`.
struct AnyValuesIndices {
  AnyTensor values;               ///< the values (the input's dtype)
  Tensor<std::int64_t> indices;   ///< their indices along the dim
};

// ---- promotion ----
/// PyTorch's result_type of two operands: dimensioned tensors outrank 0-dim tensors, which
/// outrank wrapped numbers; a lower group may raise the category, never the width.
strata::dtype result_type(const AnyTensor& a, const AnyTensor& b);
/// result_type of a tensor and a wrapped number.
strata::dtype result_type(const AnyTensor& a, const Scalar& b);
/// result_type of a wrapped number and a tensor.
strata::dtype result_type(const Scalar& a, const AnyTensor& b);
/// result_type over any number of tensors.
strata::dtype result_type(std::span<const AnyTensor> tensors);

// ---- factories ----
/// Uninitialized elements of dtype d.
AnyTensor empty(int_list sizes, strata::dtype d);
/// Zeros of dtype d.
AnyTensor zeros(int_list sizes, strata::dtype d);
/// Ones of dtype d.
AnyTensor ones(int_list sizes, strata::dtype d);
/// value in every element, dtype d.
AnyTensor full(int_list sizes, const Scalar& value, strata::dtype d);
/// A 0-dim tensor of value, dtype d.
AnyTensor scalar_tensor(const Scalar& value, strata::dtype d);
/// start, start + step, ... below end, dtype d.
AnyTensor arange(const Scalar& start, const Scalar& end, const Scalar& step, strata::dtype d);
/// Samples of U(0, 1) of a floating dtype d.
AnyTensor rand(int_list sizes, strata::dtype d);
/// Samples of N(0, 1) of a floating or complex dtype d.
AnyTensor randn(int_list sizes, strata::dtype d);
/// Zeros shaped and typed as x.
AnyTensor zeros_like(const AnyTensor& x);
/// Ones shaped and typed as x.
AnyTensor ones_like(const AnyTensor& x);
/// Uninitialized, shaped and typed as x.
AnyTensor empty_like(const AnyTensor& x);

// ---- printing ----
/// PyTorch's repr: tensor([...]) with a dtype= suffix where torch prints one.
std::ostream& operator<<(std::ostream& os, const AnyTensor& t);
/// The repr as a string.
std::string to_string(const AnyTensor& t);
}  // namespace strata

export namespace strata {
#define STRATA_DECLARE_BINARY(F, OP)                     \
  /** The element-wise F of two tensors (broadcast, promoted by result_type). */ \
  AnyTensor F(const AnyTensor& a, const AnyTensor& b);   \
  /** F of a tensor and a number. */                     \
  AnyTensor F(const AnyTensor& a, const Scalar& b);      \
  /** F of a number and a tensor. */                     \
  AnyTensor F(const Scalar& a, const AnyTensor& b);
STRATA_ANY_BINARY(STRATA_DECLARE_BINARY)
#undef STRATA_DECLARE_BINARY
#define STRATA_DECLARE_UNARY(F) \
  /** The element-wise F (the dtype as the typed F gives it). */ \
  AnyTensor F(const AnyTensor& x);
STRATA_ANY_UNARY(STRATA_DECLARE_UNARY)
#undef STRATA_DECLARE_UNARY
/// -x.
AnyTensor operator-(const AnyTensor& x);
/// ~x (bool and integer tensors).
AnyTensor operator~(const AnyTensor& x);
/// !x: logical_not.
AnyTensor operator!(const AnyTensor& x);
/// cond ? x : y, x and y promoted by result_type.
AnyTensor where(const AnyTensor& cond, const AnyTensor& x, const AnyTensor& y);
/// where with a number for y.
AnyTensor where(const AnyTensor& cond, const AnyTensor& x, const Scalar& y);
/// where with a number for x.
AnyTensor where(const AnyTensor& cond, const Scalar& x, const AnyTensor& y);
/// x clamped to [lo, hi] (numbers).
AnyTensor clamp(const AnyTensor& x, const std::optional<Scalar>& lo, const std::optional<Scalar>& hi);
/// x clamped from below.
AnyTensor clamp_min(const AnyTensor& x, const Scalar& lo);
/// x clamped from above.
AnyTensor clamp_max(const AnyTensor& x, const Scalar& hi);
/// x clamped to [lo, hi] (tensors, broadcast; promoted by result_type with x).
AnyTensor clamp(const AnyTensor& x, const std::optional<AnyTensor>& lo, const std::optional<AnyTensor>& hi);
/// GELU (approximate: "none" or "tanh"), floating dtypes.
AnyTensor gelu(const AnyTensor& x, std::string_view approximate = "none");
/// softplus: log(1 + e^(beta x)) / beta, x where beta x > threshold.
AnyTensor softplus(const AnyTensor& x, double beta = 1.0, double threshold = 20.0);
/// log(x / (1 - x)), x clamped to [eps, 1 - eps] when eps is given (integers give float32).
AnyTensor logit(const AnyTensor& x, std::optional<double> eps = std::nullopt);
/// NaN and infinities replaced (defaults: 0 and the dtype's finite extremes); integers copied.
AnyTensor nan_to_num(const AnyTensor& x, double nan = 0.0, std::optional<double> posinf = std::nullopt,
                     std::optional<double> neginf = std::nullopt);
/// start + weight * (end - start); start and end of one floating dtype.
AnyTensor lerp(const AnyTensor& start, const AnyTensor& end, const Scalar& weight);
/// lerp with a weight tensor of the same dtype.
AnyTensor lerp(const AnyTensor& start, const AnyTensor& end, const AnyTensor& weight);
/// input + value * t1 * t2, promoted by result_type over the three tensors.
AnyTensor addcmul(const AnyTensor& input, const AnyTensor& t1, const AnyTensor& t2, const Scalar& value = 1);
/// input + value * t1 / t2 (integer t1 and t2 refused, as PyTorch).
AnyTensor addcdiv(const AnyTensor& input, const AnyTensor& t1, const AnyTensor& t2, const Scalar& value = 1);
/// x converted to other's dtype (torch's type_as).
AnyTensor type_as(const AnyTensor& x, const AnyTensor& other);
/// x converted to T element-wise (an evaluated copy; the dtype is T).
template <element T>
Tensor<T> cast(const AnyTensor& x) { return x.to<T>(); }

#define STRATA_DECLARE_REDUCE(F) \
  /** F over dims (all when empty), as the typed F. */ \
  AnyTensor F(const AnyTensor& x, int_list dims = {}, bool keepdim = false);
STRATA_ANY_REDUCE(STRATA_DECLARE_REDUCE)
#undef STRATA_DECLARE_REDUCE
#define STRATA_DECLARE_SCAN(F) \
  /** F along dim, as the typed F. */ \
  AnyTensor F(const AnyTensor& x, std::int64_t dim);
STRATA_ANY_SCAN(STRATA_DECLARE_SCAN)
#undef STRATA_DECLARE_SCAN
/// Sums x down to sizes (the gradient of a broadcast).
AnyTensor sum_to(const AnyTensor& x, int_list sizes);
/// log(sum(exp(x))) over dims.
AnyTensor logsumexp(const AnyTensor& x, int_list dims, bool keepdim = false);
/// The variance over dims with Bessel's correction (correction = 1).
AnyTensor var(const AnyTensor& x, int_list dims = {}, std::int64_t correction = 1, bool keepdim = false);
/// The standard deviation over dims.
AnyTensor std(const AnyTensor& x, int_list dims = {}, std::int64_t correction = 1, bool keepdim = false);
/// The p-norm over dims.
AnyTensor norm(const AnyTensor& x, double p = 2, int_list dims = {}, bool keepdim = false);
/// The number of non-zero elements over dims (int64).
AnyTensor count_nonzero(const AnyTensor& x, int_list dims = {});
/// The index of the largest element (of the flattened tensor without dim).
Tensor<std::int64_t> argmax(const AnyTensor& x, std::optional<std::int64_t> dim = std::nullopt, bool keepdim = false);
/// The index of the smallest element.
Tensor<std::int64_t> argmin(const AnyTensor& x, std::optional<std::int64_t> dim = std::nullopt, bool keepdim = false);
/// The largest element (0-dim).
AnyTensor max(const AnyTensor& x);
/// The smallest element (0-dim).
AnyTensor min(const AnyTensor& x);
/// (values, indices) of the largest elements along dim.
AnyValuesIndices max(const AnyTensor& x, std::int64_t dim, bool keepdim = false);
/// (values, indices) of the smallest elements along dim.
AnyValuesIndices min(const AnyTensor& x, std::int64_t dim, bool keepdim = false);
/// Sorted values and their indices along dim.
AnyValuesIndices sort(const AnyTensor& x, std::int64_t dim = -1, bool descending = false, bool stable = false);
/// The indices that sort x along dim.
Tensor<std::int64_t> argsort(const AnyTensor& x, std::int64_t dim = -1, bool descending = false, bool stable = false);
/// The k largest (or smallest) values along dim and their indices.
AnyValuesIndices topk(const AnyTensor& x, std::int64_t k, std::int64_t dim = -1, bool largest = true,
                      bool sorted = true);
/// The median of all elements (the lower of the two middle ones).
AnyTensor median(const AnyTensor& x);
/// The lower median along dim and its index.
AnyValuesIndices median(const AnyTensor& x, std::int64_t dim, bool keepdim = false);
/// The median of the non-NaN elements.
AnyTensor nanmedian(const AnyTensor& x);
/// The lower median of the non-NaN elements along dim and its index.
AnyValuesIndices nanmedian(const AnyTensor& x, std::int64_t dim, bool keepdim = false);
/// The k-th smallest element along dim (k from 1) and its index.
AnyValuesIndices kthvalue(const AnyTensor& x, std::int64_t k, std::int64_t dim = -1, bool keepdim = false);
/// The most frequent value along dim (the smallest of equally frequent ones) and an index of it.
AnyValuesIndices mode(const AnyTensor& x, std::int64_t dim = -1, bool keepdim = false);
/// Running maxima along dim and their indices.
AnyValuesIndices cummax(const AnyTensor& x, std::int64_t dim);
/// Running minima along dim and their indices.
AnyValuesIndices cummin(const AnyTensor& x, std::int64_t dim);
/// The q-th quantile (float32/float64 input), interpolated as interpolation says.
AnyTensor quantile(const AnyTensor& x, double q, std::optional<std::int64_t> dim = std::nullopt, bool keepdim = false,
                   std::string_view interpolation = "linear");
/// quantile at each q of a 0-dim or 1-D tensor of the input's dtype.
AnyTensor quantile(const AnyTensor& x, const AnyTensor& q, std::optional<std::int64_t> dim = std::nullopt,
                   bool keepdim = false, std::string_view interpolation = "linear");
/// quantile ignoring NaN.
AnyTensor nanquantile(const AnyTensor& x, double q, std::optional<std::int64_t> dim = std::nullopt,
                      bool keepdim = false, std::string_view interpolation = "linear");

// ---- products, joins, indexing ----
/// The matrix product with NumPy's broadcasting rules; the operands must share a dtype (as torch).
AnyTensor matmul(const AnyTensor& a, const AnyTensor& b);
/// Matrix product of two 2-D tensors of one dtype.
AnyTensor mm(const AnyTensor& a, const AnyTensor& b);
/// Batched matrix product of two 3-D tensors of one dtype.
AnyTensor bmm(const AnyTensor& a, const AnyTensor& b);
/// Matrix-vector product (one dtype).
AnyTensor mv(const AnyTensor& a, const AnyTensor& b);
/// Inner product of two 1-D tensors of one dtype (0-dim).
AnyTensor dot(const AnyTensor& a, const AnyTensor& b);
/// Outer product of two 1-D tensors of one dtype.
AnyTensor outer(const AnyTensor& a, const AnyTensor& b);
/// Einstein summation over operands of one dtype (a braced list or a vector).
AnyTensor einsum(std::string_view equation, const std::vector<AnyTensor>& operands);
/// The tensors joined along dim, promoted to one dtype as torch.cat (a braced list of tensors
/// of different dtypes comes here).
AnyTensor cat(const std::vector<AnyTensor>& tensors, std::int64_t dim = 0);
/// The tensors stacked along a new dim, promoted as cat.
AnyTensor stack(const std::vector<AnyTensor>& tensors, std::int64_t dim = 0);
/// The entries of x at index (an integer tensor) along dim.
AnyTensor index_select(const AnyTensor& x, std::int64_t dim, const AnyTensor& index);
/// Values of x picked along dim by index (int64).
AnyTensor gather(const AnyTensor& x, std::int64_t dim, const AnyTensor& index);
/// x with value where mask (bool) is true.
AnyTensor masked_fill(const AnyTensor& x, const AnyTensor& mask, const Scalar& value);
/// The elements of x where mask is true (1-D).
AnyTensor masked_select(const AnyTensor& x, const AnyTensor& mask);
/// The dims in reverse order along dims.
AnyTensor flip(const AnyTensor& x, int_list dims);
/// A copy of x with src (of x's dtype) written at index (int64) along dim.
AnyTensor scatter(const AnyTensor& x, std::int64_t dim, const AnyTensor& index, const AnyTensor& src);
/// A copy of x with value written at index along dim.
AnyTensor scatter(const AnyTensor& x, std::int64_t dim, const AnyTensor& index, const Scalar& value);
/// A copy of x with src added at index along dim.
AnyTensor scatter_add(const AnyTensor& x, std::int64_t dim, const AnyTensor& index, const AnyTensor& src);
/// The elements of flattened x at index (int64); the result has index's sizes.
AnyTensor take(const AnyTensor& x, const AnyTensor& index);
/// The indices of the non-zero elements, one row per element.
Tensor<std::int64_t> nonzero(const AnyTensor& x);
/// A copy of x with alpha * source (x's dtype) added at index (int64/int32) along dim.
AnyTensor index_add(const AnyTensor& x, std::int64_t dim, const AnyTensor& index, const AnyTensor& source,
                    const Scalar& alpha = 1);
/// Elements rolled shifts[k] places along dims[k] (the flattened tensor when dims is empty).
AnyTensor roll(const AnyTensor& x, int_list shifts, int_list dims = {});
/// Rolled shift places along dim.
AnyTensor roll(const AnyTensor& x, std::int64_t shift, std::int64_t dim);
/// x repeated repeats[k] times along dim k (Tensor.repeat).
AnyTensor repeat(const AnyTensor& x, int_list repeats);
/// numpy.tile.
AnyTensor tile(const AnyTensor& x, int_list reps);
/// Each element repeated `repeats` times along dim (of the flattened tensor without dim).
AnyTensor repeat_interleave(const AnyTensor& x, std::int64_t repeats, std::optional<std::int64_t> dim = std::nullopt);
/// Element i along dim repeated repeats[i] times (repeats int64/int32).
AnyTensor repeat_interleave(const AnyTensor& x, const AnyTensor& repeats, std::optional<std::int64_t> dim = std::nullopt);
/// The lower triangle of the last two dims, the rest 0.
AnyTensor tril(const AnyTensor& x, std::int64_t diagonal = 0);
/// The upper triangle of the last two dims, the rest 0.
AnyTensor triu(const AnyTensor& x, std::int64_t diagonal = 0);
/// Views of split_size elements along dim (the last may be smaller).
std::vector<AnyTensor> split(const AnyTensor& x, std::int64_t split_size, std::int64_t dim = 0);
/// Views of the given sizes along dim.
std::vector<AnyTensor> split(const AnyTensor& x, int_list split_sizes, std::int64_t dim = 0);
/// At most chunks views of equal size along dim.
std::vector<AnyTensor> chunk(const AnyTensor& x, std::int64_t chunks, std::int64_t dim = 0);
/// The slices along dim, each without that dim.
std::vector<AnyTensor> unbind(const AnyTensor& x, std::int64_t dim = 0);
/// sections views along dim whose sizes differ by at most one.
std::vector<AnyTensor> tensor_split(const AnyTensor& x, std::int64_t sections, std::int64_t dim = 0);
/// Views between the given indices along dim.
std::vector<AnyTensor> tensor_split(const AnyTensor& x, int_list indices, std::int64_t dim = 0);

// ---- files ----
/// Reads a .npy file of any dtype (NumPy's format, every version; Fortran order and
/// big-endian data are converted).
AnyTensor load_npy(const std::string& path);
/// Writes t as a .npy file of its dtype.
void save_npy(const std::string& path, const AnyTensor& t);
/// Every array of a .npz archive, each of its own dtype, in the archive's order (np.load).
std::vector<std::pair<std::string, AnyTensor>> load_npz(const std::string& path);
/// Writes named tensors of any dtypes as a .npz archive (np.savez; compressed: np.savez_compressed).
void save_npz(const std::string& path, const std::vector<std::pair<std::string, AnyTensor>>& arrays,
              bool compressed = false);
/// Tensor name of an open .safetensors file, of whatever dtype it holds (a view of the mapped
/// file where aligned; safe_open's get_tensor).
AnyTensor get_tensor(const SafetensorsFile& file, const std::string& name);
/// Every tensor of a .safetensors file, each of its own dtype, in the file's order
/// (safetensors' load_file).
std::vector<std::pair<std::string, AnyTensor>> load_safetensors(const std::string& path);
/// x shared through DLPack without a copy (torch.utils.dlpack.to_dlpack), as the typed to_dlpack.
dlpack::DLManagedTensorVersioned* to_dlpack(const AnyTensor& x, bool read_only = false);
/// A DLPack tensor of whatever element type it holds, without a copy (torch.utils.dlpack.from_dlpack).
AnyTensor from_dlpack(dlpack::DLManagedTensorVersioned* m);
/// Writes named tensors of any dtypes as a .safetensors file (safetensors' save_file).
void save_safetensors(const std::string& path, const std::vector<std::pair<std::string, AnyTensor>>& tensors,
                      const std::vector<std::pair<std::string, std::string>>& metadata = {});
}  // namespace strata

namespace strata::detail {
// PyTorch's checked_convert for a number written into a tensor of dtype d (fill_, full,
// masked_fill, scatter, clamp bounds): error "value cannot be converted to type ... without
// overflow" when d cannot hold it (unsigned types take negatives down to -max, as torch).
void check_fits(const Scalar& value, dtype d);
}  // namespace strata::detail

export namespace strata::detail {
/// Calls f(std::type_identity<T>{}) for T the element type of d: the one switch of every
/// AnyTensor operation (instantiated in src/any*.cpp only).
template <class F>
decltype(auto) visit_dtype(dtype d, F&& f) {
  switch (d) {
#define STRATA_VISIT_CASE(T) \
  case dtype_v<T>: return f(std::type_identity<T>{});
    STRATA_FOR_EACH_DTYPE(STRATA_VISIT_CASE)
#undef STRATA_VISIT_CASE
  }
  throw dtype_error("unknown dtype " + std::to_string(static_cast<int>(d)));
}
/// PyTorch's message for an operation its dtype does not support.
[[noreturn]] void throw_not_implemented(const char* op, dtype d);
}  // namespace strata::detail

export namespace strata::detail {
/// x.std(...) on an AnyTensor.
template <>
struct std_call<AnyTensor, void> {
  static AnyTensor run(const AnyTensor& x, int_list dims, std::int64_t correction, bool keepdim) {
    return strata::std(x, dims, correction, keepdim);
  }
};

/// The parts of an AnyTensor, for strata's own modules.
template <>
struct autograd_access<AnyTensor> {
  static const std::shared_ptr<autograd_meta>& meta(const AnyTensor& t) noexcept { return t.meta_; }
  static const layout& view(const AnyTensor& t) noexcept { return t.layout_; }
};
}  // namespace strata::detail
