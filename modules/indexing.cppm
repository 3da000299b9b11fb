// SPDX-License-Identifier: MIT
// Gathers, scatters, masks and PyTorch's advanced indexing (t.index({...}), t.index_put_).
// Every operation is a walk over a loop (the index tensor's shape, or the indexed result's)
// in which each index tensor adds index * stride to a restrided view of the indexed tensor;
// the loops are compiled once per dtype in src/indexing.cpp. Strided inputs are read in
// place; index values are checked before anything is written.
module;
#include "dtype_list.hpp"
export module strata.indexing;
import strata.std;
import strata.error;
import strata.dtype;
import strata.shape;
import strata.storage;
import strata.loop;
import strata.graph;
import strata.tensor;

namespace strata::detail {
/// The index tensors of an advanced index once integers, slices, ellipsis and none have been
/// applied as views: tensors[k] indexes dim dims[k] of that view (masks already expanded).
struct advanced_indices {
  std::vector<Tensor<std::int64_t>> tensors;
  dim_vector dims;
};

// ---- argument checks with PyTorch's messages (dtypes are known only as tags here) ----
/// gather, scatter (also scatter_add: PyTorch names it scatter): "<op>(): Expected dtype int64 for index"
/// (a non-empty index).
void check_scatter_gather_index(std::string_view op, dtype index, std::int64_t index_numel);
/// "<op>(): Expected self.dtype to be equal to src.dtype".
[[noreturn]] void throw_scatter_src_dtype(std::string_view op);
/// index_select: a vector index of int32 or int64.
void check_index_select_index(int_list index_sizes, dtype index);
/// take: an int64 index.
void check_take_index(dtype index);
/// index_add: a vector index of int32 or int64, a source of self's dtype.
void check_index_add_args(int_list index_sizes, dtype index, dtype self, dtype source);
/// index_put_: values of self's dtype.
[[noreturn]] void throw_index_put_dtype(dtype self, dtype values);
/// masked_fill: a value tensor must be 0-dim.
void check_masked_fill_value(std::int64_t value_dim);

/// The index as int64 (after the checks; a non-integer index reaches here only when empty).
template <element I>
Tensor<std::int64_t> as_index(const Tensor<I>& index) {
  if constexpr (std::is_same_v<I, std::int64_t>) return index;
  else if constexpr (std::is_integral_v<I> && !std::is_same_v<I, bool>) return index.template to<std::int64_t>();
  else return zeros<std::int64_t>(index.sizes());
}

// ---- compiled once per dtype (src/indexing.cpp) ----
template <element T>
Tensor<T> index_select_impl(const Tensor<T>& self, std::int64_t dim, const Tensor<std::int64_t>& index);
template <element T>
Tensor<T> gather_impl(const Tensor<T>& self, std::int64_t dim, const Tensor<std::int64_t>& index);
/// scatter (add: scatter_add) of src into a copy of self, recorded for autograd.
template <element T>
Tensor<T> scatter_impl(const Tensor<T>& self, std::int64_t dim, const Tensor<std::int64_t>& index, const Tensor<T>& src,
                       bool add);
/// scatter with one value into a copy of self, recorded for autograd.
template <element T>
Tensor<T> scatter_value_impl(const Tensor<T>& self, std::int64_t dim, const Tensor<std::int64_t>& index, T value);
/// scatter_ / scatter_add_ into self (a 0-dim src with value_only: the value form).
template <element T>
void scatter_into(const Tensor<T>& self, std::int64_t dim, const Tensor<std::int64_t>& index, const Tensor<T>& src,
                  bool add, bool value_only);
template <element T>
Tensor<T> take_impl(const Tensor<T>& self, const Tensor<std::int64_t>& index);
/// masked_fill into a new tensor of the broadcast shape; value_tensor (0-dim, may require grad) or value.
template <element T>
Tensor<T> masked_fill_impl(const Tensor<T>& self, const Tensor<bool>& mask, T value, const Tensor<T>* value_tensor);
template <element T>
void masked_fill_into(const Tensor<T>& self, const Tensor<bool>& mask, T value);
template <element T>
Tensor<T> masked_select_impl(const Tensor<T>& self, const Tensor<bool>& mask);
template <element T>
Tensor<std::int64_t> nonzero_impl(const Tensor<T>& self);
template <element T>
Tensor<T> index_add_impl(const Tensor<T>& self, std::int64_t dim, const Tensor<std::int64_t>& index,
                         const Tensor<T>& source, T alpha);
template <element T>
void index_add_into(const Tensor<T>& self, std::int64_t dim, const Tensor<std::int64_t>& index,
                    const Tensor<T>& source, T alpha);
/// t.index({...}).
template <element T>
Tensor<T> index_impl(const Tensor<T>& self, std::span<const tensor_index> entries);
/// t.index_put_({...}, values) (a 0-dim values with value_only: a scalar, never broadcast-checked).
template <element T>
void index_put_into(const Tensor<T>& self, std::span<const tensor_index> entries, const Tensor<T>& values,
                    bool accumulate, bool value_only);
/// index_put: into a copy of self, recorded for autograd.
template <element T>
Tensor<T> index_put_impl(const Tensor<T>& self, std::span<const tensor_index> entries, const Tensor<T>& values,
                         bool accumulate);

/// one_hot of int64 class indices (num_classes -1: max + 1), PyTorch's checks and messages.
Tensor<std::int64_t> one_hot_impl(const Tensor<std::int64_t>& x, std::int64_t num_classes);
/// bincount of non-negative int64 values (weights: R per value, or null for counts).
template <element R>
Tensor<R> bincount_impl(const Tensor<std::int64_t>& x, const Tensor<R>* weights, std::int64_t minlength);

/// A scalar written into a tensor of element type T (a complex value into a real tensor is refused).
template <element T, element S>
T value_as(S value) {
  static_assert(is_complex_v<T> || !is_complex_v<S>, "a complex value cannot be written into a tensor of a real dtype");
  return convert<T>(value);
}

/// Tensor's index and index_put_ members (declared in strata.tensor).
template <element T>
struct indexing_ops<Tensor<T>> {
  static Tensor<T> index(const Tensor<T>& self, std::span<const tensor_index> entries) {
    return index_impl<T>(self, entries);
  }
  template <class V>
  static void index_put_(const Tensor<T>& self, std::span<const tensor_index> entries, const V& values,
                         bool accumulate) {
    if constexpr (lazy_expression<V>) {
      index_put_(self, entries, values.template to<typename V::value_type>(), accumulate);
    } else if constexpr (element<V>) {
      index_put_into<T>(self, entries, full<T>({}, value_as<T>(values)), accumulate, true);
    } else if constexpr (std::is_same_v<V, Tensor<T>>) {
      index_put_into<T>(self, entries, values, accumulate, false);
    } else {
      static_assert(requires { typename V::value_type; values.storage(); },
                    "index_put_ takes a tensor, an expression or a scalar of one of strata's dtypes");
      throw_index_put_dtype(dtype_v<T>, dtype_v<typename V::value_type>);
    }
  }
};
}  // namespace strata::detail

export namespace strata {
/// The elements of x at index (a 1-D or 0-dim int64/int32 tensor) along dim.
template <tensor_like X, tensor_like Idx>
Tensor<detail::value_t<X>> index_select(const X& x, std::int64_t dim, const Idx& index) {
  using T = detail::value_t<X>;
  const auto& t = detail::as_tensor(x);
  const auto& i = detail::as_tensor(index);
  const std::int64_t d = wrap_dim(dim, t.dim());
  detail::check_index_select_index(i.sizes(), dtype_v<detail::value_t<Idx>>);
  return detail::index_select_impl<T>(t, d, detail::as_index(i));
}

/// out[i][j][k] = x[index[i][j][k]][j][k] for dim 0 (and so on): index (int64) has x's number
/// of dims and sizes no larger than x's apart from dim; the result has index's sizes.
template <tensor_like X, tensor_like Idx>
Tensor<detail::value_t<X>> gather(const X& x, std::int64_t dim, const Idx& index) {
  using T = detail::value_t<X>;
  const auto& t = detail::as_tensor(x);
  const std::int64_t d = wrap_dim(dim, t.dim());
  detail::check_scatter_gather_index("gather", dtype_v<detail::value_t<Idx>>, index.numel());
  return detail::gather_impl<T>(t, d, detail::as_index(detail::as_tensor(index)));
}

/// A copy of x with out[index[i][j]][j] = src[i][j] for dim 0 (and so on): gather's inverse.
template <tensor_like X, tensor_like Idx, tensor_like Src>
Tensor<detail::value_t<X>> scatter(const X& x, std::int64_t dim, const Idx& index, const Src& src) {
  using T = detail::value_t<X>;
  const auto& t = detail::as_tensor(x);
  const std::int64_t d = wrap_dim(dim, t.dim());
  detail::check_scatter_gather_index("scatter", dtype_v<detail::value_t<Idx>>, index.numel());
  if constexpr (std::is_same_v<T, detail::value_t<Src>>)
    return detail::scatter_impl<T>(t, d, detail::as_index(detail::as_tensor(index)), detail::as_tensor(src), false);
  else detail::throw_scatter_src_dtype("scatter");
}
/// A copy of x with value written at the positions scatter(x, dim, index, src) writes.
template <tensor_like X, tensor_like Idx, element S>
Tensor<detail::value_t<X>> scatter(const X& x, std::int64_t dim, const Idx& index, S value) {
  using T = detail::value_t<X>;
  const auto& t = detail::as_tensor(x);
  const std::int64_t d = wrap_dim(dim, t.dim());
  detail::check_scatter_gather_index("scatter", dtype_v<detail::value_t<Idx>>, index.numel());
  return detail::scatter_value_impl<T>(t, d, detail::as_index(detail::as_tensor(index)), detail::value_as<T>(value));
}
/// scatter into self in place; returns self.
template <element T, tensor_like Idx, tensor_like Src>
const Tensor<T>& scatter_(const Tensor<T>& self, std::int64_t dim, const Idx& index, const Src& src) {
  const std::int64_t d = wrap_dim(dim, self.dim());
  detail::check_scatter_gather_index("scatter", dtype_v<detail::value_t<Idx>>, index.numel());
  if constexpr (std::is_same_v<T, detail::value_t<Src>>)
    detail::scatter_into<T>(self, d, detail::as_index(detail::as_tensor(index)), detail::as_tensor(src), false, false);
  else detail::throw_scatter_src_dtype("scatter");
  return self;
}
/// scatter of one value into self in place; returns self.
template <element T, tensor_like Idx, element S>
const Tensor<T>& scatter_(const Tensor<T>& self, std::int64_t dim, const Idx& index, S value) {
  const std::int64_t d = wrap_dim(dim, self.dim());
  detail::check_scatter_gather_index("scatter", dtype_v<detail::value_t<Idx>>, index.numel());
  detail::scatter_into<T>(self, d, detail::as_index(detail::as_tensor(index)), full<T>({}, detail::value_as<T>(value)),
                          false, true);
  return self;
}
/// A copy of x with src added at index along dim (repeated indices add up, in a fixed order).
template <tensor_like X, tensor_like Idx, tensor_like Src>
Tensor<detail::value_t<X>> scatter_add(const X& x, std::int64_t dim, const Idx& index, const Src& src) {
  using T = detail::value_t<X>;
  const auto& t = detail::as_tensor(x);
  const std::int64_t d = wrap_dim(dim, t.dim());
  detail::check_scatter_gather_index("scatter", dtype_v<detail::value_t<Idx>>, index.numel());
  if constexpr (std::is_same_v<T, detail::value_t<Src>>)
    return detail::scatter_impl<T>(t, d, detail::as_index(detail::as_tensor(index)), detail::as_tensor(src), true);
  else detail::throw_scatter_src_dtype("scatter");
}
/// scatter_add into self in place; returns self.
template <element T, tensor_like Idx, tensor_like Src>
const Tensor<T>& scatter_add_(const Tensor<T>& self, std::int64_t dim, const Idx& index, const Src& src) {
  const std::int64_t d = wrap_dim(dim, self.dim());
  detail::check_scatter_gather_index("scatter", dtype_v<detail::value_t<Idx>>, index.numel());
  if constexpr (std::is_same_v<T, detail::value_t<Src>>)
    detail::scatter_into<T>(self, d, detail::as_index(detail::as_tensor(index)), detail::as_tensor(src), true, false);
  else detail::throw_scatter_src_dtype("scatter");
  return self;
}

/// The elements of x (read as a flat row-major vector) at index (int64, negative counts from
/// the end); the result has index's sizes.
template <tensor_like X, tensor_like Idx>
Tensor<detail::value_t<X>> take(const X& x, const Idx& index) {
  detail::check_take_index(dtype_v<detail::value_t<Idx>>);
  return detail::take_impl<detail::value_t<X>>(detail::as_tensor(x), detail::as_index(detail::as_tensor(index)));
}

/// x with value where mask (bool, broadcast to x's shape) is true. A tensor gives a tensor; a
/// lazy expression gives the lazy where(mask, value, x), fused into whatever reads it.
template <tensor_like X, tensor_like M, element S>
auto masked_fill(const X& x, const M& mask, S value) {
  using T = detail::value_t<X>;
  static_assert(std::is_same_v<detail::value_t<M>, bool>, "masked_fill only supports boolean masks (as PyTorch).");
  if constexpr (detail::lazy<X>) {
    return where(mask, detail::value_as<T>(value), x);
  } else {
    return detail::masked_fill_impl<T>(x, detail::as_tensor(mask), detail::value_as<T>(value), nullptr);
  }
}
/// masked_fill with a 0-dim value tensor (its gradient is the sum of the masked gradient).
template <tensor_like X, tensor_like M, element U>
Tensor<detail::value_t<X>> masked_fill(const X& x, const M& mask, const Tensor<U>& value) {
  using T = detail::value_t<X>;
  static_assert(std::is_same_v<detail::value_t<M>, bool>, "masked_fill only supports boolean masks (as PyTorch).");
  detail::check_masked_fill_value(value.dim());
  const T v = detail::value_as<T>(value.item());
  if constexpr (std::is_same_v<T, U>) return detail::masked_fill_impl<T>(detail::as_tensor(x), detail::as_tensor(mask), v, &value);
  else return detail::masked_fill_impl<T>(detail::as_tensor(x), detail::as_tensor(mask), v, nullptr);
}
/// Writes value into self where mask (broadcast to self) is true; returns self.
template <element T, tensor_like M, element S>
const Tensor<T>& masked_fill_(const Tensor<T>& self, const M& mask, S value) {
  static_assert(std::is_same_v<detail::value_t<M>, bool>, "masked_fill_ only supports boolean masks (as PyTorch).");
  detail::masked_fill_into<T>(self, detail::as_tensor(mask), detail::value_as<T>(value));
  return self;
}
/// masked_fill_ with a 0-dim value tensor.
template <element T, tensor_like M, element U>
const Tensor<T>& masked_fill_(const Tensor<T>& self, const M& mask, const Tensor<U>& value) {
  static_assert(std::is_same_v<detail::value_t<M>, bool>, "masked_fill_ only supports boolean masks (as PyTorch).");
  detail::check_masked_fill_value(value.dim());
  detail::masked_fill_into<T>(self, detail::as_tensor(mask), detail::value_as<T>(value.item()));
  return self;
}

/// The elements of x where mask (broadcast with x) is true, as a 1-D tensor in row-major order.
template <tensor_like X, tensor_like M>
Tensor<detail::value_t<X>> masked_select(const X& x, const M& mask) {
  static_assert(std::is_same_v<detail::value_t<M>, bool>, "masked_select only supports boolean masks (as PyTorch).");
  return detail::masked_select_impl<detail::value_t<X>>(detail::as_tensor(x), detail::as_tensor(mask));
}

/// The coordinates of x's non-zero elements, one row each in row-major order: int64 [n, x.dim()].
template <tensor_like X>
Tensor<std::int64_t> nonzero(const X& x) {
  return detail::nonzero_impl<detail::value_t<X>>(detail::as_tensor(x));
}

/// torch.where(condition): nonzero's coordinates as one int64 vector per dim (one for a 0-dim
/// condition).
template <tensor_like C>
std::vector<Tensor<std::int64_t>> where(const C& condition) {
  const Tensor<std::int64_t> nz = nonzero(condition);
  std::vector<Tensor<std::int64_t>> out;
  if (condition.dim() == 0) out.push_back(zeros<std::int64_t>({nz.size(0)}));
  for (std::int64_t d = 0; d < condition.dim(); ++d) out.push_back(nz.select(1, d));
  return out;
}

/// A copy of x with alpha * source added at index (1-D, int64/int32) along dim: out[index[i]]
/// += alpha * source[i] for dim 0 (repeated indices add up, in a fixed order).
template <tensor_like X, tensor_like Idx, tensor_like Src, element S = detail::value_t<X>>
Tensor<detail::value_t<X>> index_add(const X& x, std::int64_t dim, const Idx& index, const Src& source,
                                     S alpha = S(1)) {
  using T = detail::value_t<X>;
  using U = detail::value_t<Src>;
  const auto& t = detail::as_tensor(x);
  const std::int64_t d = wrap_dim(dim, t.dim());
  detail::check_index_add_args(index.sizes(), dtype_v<detail::value_t<Idx>>, dtype_v<T>, dtype_v<U>);
  if constexpr (std::is_same_v<T, U>)
    return detail::index_add_impl<T>(t, d, detail::as_index(detail::as_tensor(index)), detail::as_tensor(source),
                                     detail::value_as<T>(alpha));
  else detail::throw_scatter_src_dtype("index_add");  // not reached: the check above threw
}
/// index_add into self in place; returns self.
template <element T, tensor_like Idx, tensor_like Src, element S = T>
const Tensor<T>& index_add_(const Tensor<T>& self, std::int64_t dim, const Idx& index, const Src& source,
                            S alpha = S(1)) {
  using U = detail::value_t<Src>;
  const std::int64_t d = wrap_dim(dim, self.dim());
  detail::check_index_add_args(index.sizes(), dtype_v<detail::value_t<Idx>>, dtype_v<T>, dtype_v<U>);
  if constexpr (std::is_same_v<T, U>)
    detail::index_add_into<T>(self, d, detail::as_index(detail::as_tensor(index)), detail::as_tensor(source),
                              detail::value_as<T>(alpha));
  return self;
}

/// A copy of x after x.index_put_(indices, values, accumulate) (recorded for autograd).
template <tensor_like X, class V>
Tensor<detail::value_t<X>> index_put(const X& x, const std::vector<tensor_index>& indices, const V& values,
                                     bool accumulate = false) {
  using T = detail::value_t<X>;
  const auto& t = detail::as_tensor(x);
  if constexpr (detail::lazy_expression<V>) {
    return index_put(t, indices, values.template to<typename V::value_type>(), accumulate);
  } else if constexpr (element<V>) {
    return detail::index_put_impl<T>(t, indices, full<T>({}, detail::value_as<T>(values)), accumulate);
  } else if constexpr (std::is_same_v<V, Tensor<T>>) {
    return detail::index_put_impl<T>(t, indices, values, accumulate);
  } else {
    detail::throw_index_put_dtype(dtype_v<T>, dtype_v<typename V::value_type>);
  }
}
/// index_put with the entries in a braced list.
template <tensor_like X, class V>
Tensor<detail::value_t<X>> index_put(const X& x, std::initializer_list<tensor_index> indices, const V& values,
                                     bool accumulate = false) {
  return index_put(x, std::vector<tensor_index>(indices), values, accumulate);
}

/// One-hot encoding of int64 class indices: a new last dim of num_classes (-1: max + 1) holding
/// 1 at each index, 0 elsewhere (int64, as torch.nn.functional.one_hot).
template <tensor_like X>
Tensor<std::int64_t> one_hot(const X& x, std::int64_t num_classes = -1) {
  static_assert(std::is_same_v<detail::value_t<X>, std::int64_t>,
                "one_hot is only applicable to index tensors (int64, as PyTorch).");
  return detail::one_hot_impl(detail::as_tensor(x), num_classes);
}
/// Counts of each value of a 1-D non-negative integer tensor (length max(x) + 1, at least
/// minlength), as int64; with weights (a tensor of x's size), their sums instead, as double
/// (float for float weights): torch.bincount(x, weights, minlength), no weights being
/// std::nullopt (bincount(y, std::nullopt, 3)).
template <tensor_like X>
Tensor<std::int64_t> bincount(const X& x, std::nullopt_t = std::nullopt, std::int64_t minlength = 0) {
  static_assert(std::is_integral_v<detail::value_t<X>> && !std::is_same_v<detail::value_t<X>, bool>,
                "bincount only supports 1-d non-negative integral inputs.");
  return detail::bincount_impl<std::int64_t>(detail::as_tensor(x).template to<std::int64_t>(), nullptr, minlength);
}
/// bincount with weights.
template <tensor_like X, tensor_like W>
auto bincount(const X& x, const W& weights, std::int64_t minlength = 0) {
  static_assert(std::is_integral_v<detail::value_t<X>> && !std::is_same_v<detail::value_t<X>, bool>,
                "bincount only supports 1-d non-negative integral inputs.");
  using R = std::conditional_t<std::is_same_v<detail::value_t<W>, float>, float, double>;
  const Tensor<R> w = detail::as_tensor(weights).template to<R>();
  return detail::bincount_impl<R>(detail::as_tensor(x).template to<std::int64_t>(), &w, minlength);
}
}  // namespace strata

namespace strata::detail {
// ---- compiled once per dtype ----
#define STRATA_INDEXING_INSTANCES(T)                                                                              \
  extern template Tensor<T> index_select_impl<T>(const Tensor<T>&, std::int64_t, const Tensor<std::int64_t>&);   \
  extern template Tensor<T> gather_impl<T>(const Tensor<T>&, std::int64_t, const Tensor<std::int64_t>&);         \
  extern template Tensor<T> scatter_impl<T>(const Tensor<T>&, std::int64_t, const Tensor<std::int64_t>&,         \
                                            const Tensor<T>&, bool);                                             \
  extern template Tensor<T> scatter_value_impl<T>(const Tensor<T>&, std::int64_t, const Tensor<std::int64_t>&, T); \
  extern template void scatter_into<T>(const Tensor<T>&, std::int64_t, const Tensor<std::int64_t>&,              \
                                       const Tensor<T>&, bool, bool);                                            \
  extern template Tensor<T> take_impl<T>(const Tensor<T>&, const Tensor<std::int64_t>&);                         \
  extern template Tensor<T> masked_fill_impl<T>(const Tensor<T>&, const Tensor<bool>&, T, const Tensor<T>*);     \
  extern template void masked_fill_into<T>(const Tensor<T>&, const Tensor<bool>&, T);                            \
  extern template Tensor<T> masked_select_impl<T>(const Tensor<T>&, const Tensor<bool>&);                        \
  extern template Tensor<std::int64_t> nonzero_impl<T>(const Tensor<T>&);                                        \
  extern template Tensor<T> index_add_impl<T>(const Tensor<T>&, std::int64_t, const Tensor<std::int64_t>&,       \
                                              const Tensor<T>&, T);                                              \
  extern template void index_add_into<T>(const Tensor<T>&, std::int64_t, const Tensor<std::int64_t>&,            \
                                         const Tensor<T>&, T);                                                   \
  extern template Tensor<T> index_impl<T>(const Tensor<T>&, std::span<const tensor_index>);                      \
  extern template void index_put_into<T>(const Tensor<T>&, std::span<const tensor_index>, const Tensor<T>&, bool, \
                                         bool);                                                                  \
  extern template Tensor<T> index_put_impl<T>(const Tensor<T>&, std::span<const tensor_index>, const Tensor<T>&, \
                                              bool);
STRATA_FOR_EACH_DTYPE(STRATA_INDEXING_INSTANCES)
#undef STRATA_INDEXING_INSTANCES
extern template Tensor<std::int64_t> bincount_impl<std::int64_t>(const Tensor<std::int64_t>&, const Tensor<std::int64_t>*,
                                                                 std::int64_t);
extern template Tensor<float> bincount_impl<float>(const Tensor<std::int64_t>&, const Tensor<float>*, std::int64_t);
extern template Tensor<double> bincount_impl<double>(const Tensor<std::int64_t>&, const Tensor<double>*, std::int64_t);
}  // namespace strata::detail
