// SPDX-License-Identifier: MIT
// PyTorch's tensor methods, shared by Tensor<T> and every lazy expression: each forwards to
// the free function of the same name (one definition per operation). The free functions live
// in modules above this one (strata.expr, strata.manip, strata.indexing, ...), so a method
// reaches its function by argument-dependent lookup where it is used: in the translation unit
// that imported strata.
export module strata.tensor:methods;
import strata.std;
import strata.dtype;
import strata.shape;

// calls::call_f(x, args...) is f(x, args...), f found by argument-dependent lookup on x (a Tensor
// or an expression node, both in namespace strata) when the calling method is instantiated.
namespace strata::detail::calls {
#define STRATA_CALL(f) \
  template <class... A> \
  decltype(auto) call_##f(A&&... a) { return f(std::forward<A>(a)...); }
// element-wise
STRATA_CALL(abs) STRATA_CALL(neg) STRATA_CALL(exp) STRATA_CALL(expm1) STRATA_CALL(log) STRATA_CALL(log1p)
STRATA_CALL(log2) STRATA_CALL(log10) STRATA_CALL(exp2) STRATA_CALL(sqrt) STRATA_CALL(rsqrt) STRATA_CALL(sin)
STRATA_CALL(cos) STRATA_CALL(tan) STRATA_CALL(tanh) STRATA_CALL(sigmoid) STRATA_CALL(relu) STRATA_CALL(floor)
STRATA_CALL(ceil) STRATA_CALL(round) STRATA_CALL(trunc) STRATA_CALL(frac) STRATA_CALL(sign) STRATA_CALL(erf)
STRATA_CALL(erfc) STRATA_CALL(square) STRATA_CALL(reciprocal) STRATA_CALL(conj) STRATA_CALL(silu)
STRATA_CALL(isnan) STRATA_CALL(isinf) STRATA_CALL(isfinite) STRATA_CALL(isposinf) STRATA_CALL(isneginf)
STRATA_CALL(logical_not) STRATA_CALL(gelu) STRATA_CALL(softplus) STRATA_CALL(logit) STRATA_CALL(nan_to_num)
STRATA_CALL(pow) STRATA_CALL(maximum) STRATA_CALL(minimum) STRATA_CALL(fmod) STRATA_CALL(remainder)
STRATA_CALL(floor_divide) STRATA_CALL(hypot) STRATA_CALL(atan2) STRATA_CALL(copysign) STRATA_CALL(logical_and)
STRATA_CALL(logical_or) STRATA_CALL(clamp) STRATA_CALL(where) STRATA_CALL(lerp) STRATA_CALL(addcmul)
STRATA_CALL(addcdiv)
// reductions and statistics
STRATA_CALL(sum) STRATA_CALL(mean) STRATA_CALL(prod) STRATA_CALL(amax) STRATA_CALL(amin) STRATA_CALL(all)
STRATA_CALL(any) STRATA_CALL(sum_to) STRATA_CALL(nansum) STRATA_CALL(nanmean) STRATA_CALL(count_nonzero)
STRATA_CALL(var) STRATA_CALL(norm) STRATA_CALL(logsumexp) STRATA_CALL(softmax)
STRATA_CALL(log_softmax) STRATA_CALL(argmax) STRATA_CALL(argmin) STRATA_CALL(max) STRATA_CALL(min)
// sorting and scans
STRATA_CALL(sort) STRATA_CALL(argsort) STRATA_CALL(topk) STRATA_CALL(kthvalue) STRATA_CALL(median)
STRATA_CALL(nanmedian) STRATA_CALL(mode) STRATA_CALL(cumsum) STRATA_CALL(cumprod) STRATA_CALL(cummax)
STRATA_CALL(cummin) STRATA_CALL(logcumsumexp) STRATA_CALL(quantile) STRATA_CALL(nanquantile)
// indexing
STRATA_CALL(index_select) STRATA_CALL(gather) STRATA_CALL(scatter) STRATA_CALL(scatter_add)
STRATA_CALL(masked_fill) STRATA_CALL(masked_select) STRATA_CALL(take) STRATA_CALL(nonzero) STRATA_CALL(index_add)
STRATA_CALL(masked_fill_) STRATA_CALL(scatter_) STRATA_CALL(scatter_add_) STRATA_CALL(index_add_)
// shape and joining
STRATA_CALL(flip) STRATA_CALL(roll) STRATA_CALL(repeat) STRATA_CALL(tile) STRATA_CALL(repeat_interleave)
STRATA_CALL(tril) STRATA_CALL(triu) STRATA_CALL(split) STRATA_CALL(chunk) STRATA_CALL(unbind)
STRATA_CALL(tensor_split)
// types (a run-time dtype's)
STRATA_CALL(type_as)
// products
STRATA_CALL(matmul) STRATA_CALL(mm) STRATA_CALL(bmm) STRATA_CALL(mv) STRATA_CALL(dot) STRATA_CALL(outer)
#undef STRATA_CALL
}  // namespace strata::detail::calls

export namespace strata::detail {
/// x.std(...): `std` cannot be called by its unqualified name (it names the namespace), so
/// strata.expr supplies std_call<X, void>::run.
template <class X, class = void>
struct std_call;
}  // namespace strata::detail

export namespace strata {
/// PyTorch's Tensor methods for D (a Tensor<T> or a lazy expression): each is the free function
/// of the same name applied to *this, lazy where the function is (x.exp() is exp(x)).
template <class D>
struct tensor_methods {
  // ---- element-wise ----
  /// abs(x).
  auto abs() const { return detail::calls::call_abs(self()); }
  /// neg(x).
  auto neg() const { return detail::calls::call_neg(self()); }
  /// exp(x).
  auto exp() const { return detail::calls::call_exp(self()); }
  /// expm1(x).
  auto expm1() const { return detail::calls::call_expm1(self()); }
  /// log(x).
  auto log() const { return detail::calls::call_log(self()); }
  /// log1p(x).
  auto log1p() const { return detail::calls::call_log1p(self()); }
  /// log2(x).
  auto log2() const { return detail::calls::call_log2(self()); }
  /// log10(x).
  auto log10() const { return detail::calls::call_log10(self()); }
  /// exp2(x).
  auto exp2() const { return detail::calls::call_exp2(self()); }
  /// sqrt(x).
  auto sqrt() const { return detail::calls::call_sqrt(self()); }
  /// rsqrt(x).
  auto rsqrt() const { return detail::calls::call_rsqrt(self()); }
  /// sin(x).
  auto sin() const { return detail::calls::call_sin(self()); }
  /// cos(x).
  auto cos() const { return detail::calls::call_cos(self()); }
  /// tan(x).
  auto tan() const { return detail::calls::call_tan(self()); }
  /// tanh(x).
  auto tanh() const { return detail::calls::call_tanh(self()); }
  /// sigmoid(x).
  auto sigmoid() const { return detail::calls::call_sigmoid(self()); }
  /// relu(x).
  auto relu() const { return detail::calls::call_relu(self()); }
  /// floor(x).
  auto floor() const { return detail::calls::call_floor(self()); }
  /// ceil(x).
  auto ceil() const { return detail::calls::call_ceil(self()); }
  /// round(x) (half to even).
  auto round() const { return detail::calls::call_round(self()); }
  /// trunc(x).
  auto trunc() const { return detail::calls::call_trunc(self()); }
  /// frac(x).
  auto frac() const { return detail::calls::call_frac(self()); }
  /// sign(x).
  auto sign() const { return detail::calls::call_sign(self()); }
  /// erf(x).
  auto erf() const { return detail::calls::call_erf(self()); }
  /// erfc(x).
  auto erfc() const { return detail::calls::call_erfc(self()); }
  /// square(x).
  auto square() const { return detail::calls::call_square(self()); }
  /// reciprocal(x).
  auto reciprocal() const { return detail::calls::call_reciprocal(self()); }
  /// conj(x).
  auto conj() const { return detail::calls::call_conj(self()); }
  /// silu(x).
  auto silu() const { return detail::calls::call_silu(self()); }
  /// isnan(x).
  auto isnan() const { return detail::calls::call_isnan(self()); }
  /// isinf(x).
  auto isinf() const { return detail::calls::call_isinf(self()); }
  /// isfinite(x).
  auto isfinite() const { return detail::calls::call_isfinite(self()); }
  /// isposinf(x).
  auto isposinf() const { return detail::calls::call_isposinf(self()); }
  /// isneginf(x).
  auto isneginf() const { return detail::calls::call_isneginf(self()); }
  /// logical_not(x).
  auto logical_not() const { return detail::calls::call_logical_not(self()); }
  /// gelu(x, approximate).
  auto gelu(std::string_view approximate = "none") const { return detail::calls::call_gelu(self(), approximate); }
  /// softplus(x, beta, threshold).
  auto softplus(double beta = 1.0, double threshold = 20.0) const {
    return detail::calls::call_softplus(self(), beta, threshold);
  }
  /// logit(x, eps).
  auto logit(std::optional<double> eps = std::nullopt) const { return detail::calls::call_logit(self(), eps); }
  /// nan_to_num(x, nan, posinf, neginf).
  auto nan_to_num(double nan = 0.0, std::optional<double> posinf = std::nullopt,
                  std::optional<double> neginf = std::nullopt) const {
    return detail::calls::call_nan_to_num(self(), nan, posinf, neginf);
  }
  /// pow(x, exponent) (a tensor, an expression or a number).
  template <class E>
  auto pow(const E& exponent) const { return detail::calls::call_pow(self(), exponent); }
  /// maximum(x, other).
  template <class B>
  auto maximum(const B& other) const { return detail::calls::call_maximum(self(), other); }
  /// minimum(x, other).
  template <class B>
  auto minimum(const B& other) const { return detail::calls::call_minimum(self(), other); }
  /// fmod(x, other).
  template <class B>
  auto fmod(const B& other) const { return detail::calls::call_fmod(self(), other); }
  /// remainder(x, other).
  template <class B>
  auto remainder(const B& other) const { return detail::calls::call_remainder(self(), other); }
  /// floor_divide(x, other).
  template <class B>
  auto floor_divide(const B& other) const { return detail::calls::call_floor_divide(self(), other); }
  /// hypot(x, other).
  template <class B>
  auto hypot(const B& other) const { return detail::calls::call_hypot(self(), other); }
  /// atan2(x, other).
  template <class B>
  auto atan2(const B& other) const { return detail::calls::call_atan2(self(), other); }
  /// copysign(x, other).
  template <class B>
  auto copysign(const B& other) const { return detail::calls::call_copysign(self(), other); }
  /// logical_and(x, other).
  template <class B>
  auto logical_and(const B& other) const { return detail::calls::call_logical_and(self(), other); }
  /// logical_or(x, other).
  template <class B>
  auto logical_or(const B& other) const { return detail::calls::call_logical_or(self(), other); }
  /// x + other * alpha (torch's add).
  template <class B>
  auto add(const B& other) const { return self() + other; }
  /// x + other * alpha.
  template <class B, class S>
  auto add(const B& other, S alpha) const { return self() + other * alpha; }
  /// x - other (torch's sub).
  template <class B>
  auto sub(const B& other) const { return self() - other; }
  /// x - other * alpha.
  template <class B, class S>
  auto sub(const B& other, S alpha) const { return self() - other * alpha; }
  /// x * other (torch's mul).
  template <class B>
  auto mul(const B& other) const { return self() * other; }
  /// x / other (torch's div: true division).
  template <class B>
  auto div(const B& other) const { return self() / other; }
  /// x == other (torch's eq).
  template <class B>
  auto eq(const B& other) const { return self() == other; }
  /// x != other.
  template <class B>
  auto ne(const B& other) const { return self() != other; }
  /// x < other.
  template <class B>
  auto lt(const B& other) const { return self() < other; }
  /// x <= other.
  template <class B>
  auto le(const B& other) const { return self() <= other; }
  /// x > other.
  template <class B>
  auto gt(const B& other) const { return self() > other; }
  /// x >= other.
  template <class B>
  auto ge(const B& other) const { return self() >= other; }
  /// clamp(x, lo, hi) (numbers, tensors or expressions).
  template <class L, class H>
  auto clamp(const L& lo, const H& hi) const { return detail::calls::call_clamp(self(), lo, hi); }
  /// max(x, lo) (torch's clamp(min=lo); NaN propagates).
  template <class L>
  auto clamp_min(L lo) const { return detail::calls::call_maximum(self(), lo); }
  /// min(x, hi) (torch's clamp(max=hi); NaN propagates).
  template <class H>
  auto clamp_max(H hi) const { return detail::calls::call_minimum(self(), hi); }
  /// where(condition, x, other): x where condition holds, else other (torch's x.where(c, y)).
  template <class C, class B>
  auto where(const C& condition, const B& other) const { return detail::calls::call_where(condition, self(), other); }
  /// lerp(x, end, weight).
  template <class B, class W>
  auto lerp(const B& end, const W& weight) const { return detail::calls::call_lerp(self(), end, weight); }
  /// addcmul(x, t1, t2, value) (value 1 keeps an integer dtype, as PyTorch).
  template <class A, class B, class S = int>
  auto addcmul(const A& t1, const B& t2, S value = 1) const { return detail::calls::call_addcmul(self(), t1, t2, value); }
  /// addcdiv(x, t1, t2, value).
  template <class A, class B, class S = int>
  auto addcdiv(const A& t1, const B& t2, S value = 1) const { return detail::calls::call_addcdiv(self(), t1, t2, value); }

  // ---- reductions and statistics (lazy like the free functions) ----
  /// sum(x, dims, keepdim).
  auto sum(int_list dims = {}, bool keepdim = false) const { return detail::calls::call_sum(self(), dims, keepdim); }
  /// mean(x, dims, keepdim).
  auto mean(int_list dims = {}, bool keepdim = false) const { return detail::calls::call_mean(self(), dims, keepdim); }
  /// prod(x, dims, keepdim).
  auto prod(int_list dims = {}, bool keepdim = false) const { return detail::calls::call_prod(self(), dims, keepdim); }
  /// amax(x, dims, keepdim).
  auto amax(int_list dims = {}, bool keepdim = false) const { return detail::calls::call_amax(self(), dims, keepdim); }
  /// amin(x, dims, keepdim).
  auto amin(int_list dims = {}, bool keepdim = false) const { return detail::calls::call_amin(self(), dims, keepdim); }
  /// all(x, dims, keepdim).
  auto all(int_list dims = {}, bool keepdim = false) const { return detail::calls::call_all(self(), dims, keepdim); }
  /// any(x, dims, keepdim).
  auto any(int_list dims = {}, bool keepdim = false) const { return detail::calls::call_any(self(), dims, keepdim); }
  /// sum_to(x, sizes): the gradient reduction of a broadcast input.
  auto sum_to(int_list sizes) const { return detail::calls::call_sum_to(self(), sizes); }
  /// nansum(x, dims, keepdim).
  auto nansum(int_list dims = {}, bool keepdim = false) const { return detail::calls::call_nansum(self(), dims, keepdim); }
  /// nanmean(x, dims, keepdim).
  auto nanmean(int_list dims = {}, bool keepdim = false) const { return detail::calls::call_nanmean(self(), dims, keepdim); }
  /// count_nonzero(x, dims).
  auto count_nonzero(int_list dims = {}) const { return detail::calls::call_count_nonzero(self(), dims); }
  /// var(x, dims, correction, keepdim).
  auto var(int_list dims = {}, std::int64_t correction = 1, bool keepdim = false) const {
    return detail::calls::call_var(self(), dims, correction, keepdim);
  }
  /// std(x, dims, correction, keepdim).
  auto std(int_list dims = {}, std::int64_t correction = 1, bool keepdim = false) const {
    return detail::std_call<D>::run(self(), dims, correction, keepdim);
  }
  /// norm(x, p, dims, keepdim).
  auto norm(double p = 2, int_list dims = {}, bool keepdim = false) const {
    return detail::calls::call_norm(self(), p, dims, keepdim);
  }
  /// logsumexp(x, dims, keepdim).
  auto logsumexp(int_list dims, bool keepdim = false) const { return detail::calls::call_logsumexp(self(), dims, keepdim); }
  /// softmax(x, dim).
  auto softmax(std::int64_t dim) const { return detail::calls::call_softmax(self(), dim); }
  /// log_softmax(x, dim).
  auto log_softmax(std::int64_t dim) const { return detail::calls::call_log_softmax(self(), dim); }
  /// argmax(x, dim, keepdim) (all elements, flattened, without a dim).
  auto argmax(std::optional<std::int64_t> dim = std::nullopt, bool keepdim = false) const {
    return detail::calls::call_argmax(self(), dim, keepdim);
  }
  /// argmin(x, dim, keepdim).
  auto argmin(std::optional<std::int64_t> dim = std::nullopt, bool keepdim = false) const {
    return detail::calls::call_argmin(self(), dim, keepdim);
  }
  /// The largest element (amax over all).
  auto max() const { return detail::calls::call_max(self()); }
  /// (values, indices) of the largest elements along dim.
  auto max(std::int64_t dim, bool keepdim = false) const { return detail::calls::call_max(self(), dim, keepdim); }
  /// The element-wise maximum with other (torch's x.max(other)).
  template <class B>
    requires(!std::is_arithmetic_v<B>)
  auto max(const B& other) const { return detail::calls::call_maximum(self(), other); }
  /// The smallest element (amin over all).
  auto min() const { return detail::calls::call_min(self()); }
  /// (values, indices) of the smallest elements along dim.
  auto min(std::int64_t dim, bool keepdim = false) const { return detail::calls::call_min(self(), dim, keepdim); }
  /// The element-wise minimum with other (torch's x.min(other)).
  template <class B>
    requires(!std::is_arithmetic_v<B>)
  auto min(const B& other) const { return detail::calls::call_minimum(self(), other); }

  // ---- sorting and scans ----
  /// sort(x, dim, descending, stable): (values, indices).
  auto sort(std::int64_t dim = -1, bool descending = false, bool stable = false) const {
    return detail::calls::call_sort(self(), dim, descending, stable);
  }
  /// argsort(x, dim, descending, stable).
  auto argsort(std::int64_t dim = -1, bool descending = false, bool stable = false) const {
    return detail::calls::call_argsort(self(), dim, descending, stable);
  }
  /// topk(x, k, dim, largest, sorted): (values, indices).
  auto topk(std::int64_t k, std::int64_t dim = -1, bool largest = true, bool sorted = true) const {
    return detail::calls::call_topk(self(), k, dim, largest, sorted);
  }
  /// kthvalue(x, k, dim, keepdim): (values, indices).
  auto kthvalue(std::int64_t k, std::int64_t dim = -1, bool keepdim = false) const {
    return detail::calls::call_kthvalue(self(), k, dim, keepdim);
  }
  /// median(x) of all elements (the lower of the two middle ones).
  auto median() const { return detail::calls::call_median(self()); }
  /// median(x, dim, keepdim): (values, indices).
  auto median(std::int64_t dim, bool keepdim = false) const { return detail::calls::call_median(self(), dim, keepdim); }
  /// nanmedian(x).
  auto nanmedian() const { return detail::calls::call_nanmedian(self()); }
  /// nanmedian(x, dim, keepdim).
  auto nanmedian(std::int64_t dim, bool keepdim = false) const { return detail::calls::call_nanmedian(self(), dim, keepdim); }
  /// mode(x, dim, keepdim): (values, indices).
  auto mode(std::int64_t dim = -1, bool keepdim = false) const { return detail::calls::call_mode(self(), dim, keepdim); }
  /// cumsum(x, dim).
  auto cumsum(std::int64_t dim) const { return detail::calls::call_cumsum(self(), dim); }
  /// cumprod(x, dim).
  auto cumprod(std::int64_t dim) const { return detail::calls::call_cumprod(self(), dim); }
  /// cummax(x, dim): (values, indices).
  auto cummax(std::int64_t dim) const { return detail::calls::call_cummax(self(), dim); }
  /// cummin(x, dim): (values, indices).
  auto cummin(std::int64_t dim) const { return detail::calls::call_cummin(self(), dim); }
  /// logcumsumexp(x, dim).
  auto logcumsumexp(std::int64_t dim) const { return detail::calls::call_logcumsumexp(self(), dim); }
  /// quantile(x, q, dim, keepdim, interpolation) (q a number or a tensor of them).
  template <class Q>
  auto quantile(const Q& q, std::optional<std::int64_t> dim = std::nullopt, bool keepdim = false,
                std::string_view interpolation = "linear") const {
    return detail::calls::call_quantile(self(), q, dim, keepdim, interpolation);
  }
  /// nanquantile(x, q, dim, keepdim, interpolation).
  auto nanquantile(double q, std::optional<std::int64_t> dim = std::nullopt, bool keepdim = false,
                   std::string_view interpolation = "linear") const {
    return detail::calls::call_nanquantile(self(), q, dim, keepdim, interpolation);
  }

  // ---- indexing ----
  /// index_select(x, dim, index).
  template <class I>
  auto index_select(std::int64_t dim, const I& index) const { return detail::calls::call_index_select(self(), dim, index); }
  /// gather(x, dim, index).
  template <class I>
  auto gather(std::int64_t dim, const I& index) const { return detail::calls::call_gather(self(), dim, index); }
  /// scatter(x, dim, index, src) (src a tensor, an expression or a number).
  template <class I, class S>
  auto scatter(std::int64_t dim, const I& index, const S& src) const {
    return detail::calls::call_scatter(self(), dim, index, src);
  }
  /// scatter_add(x, dim, index, src).
  template <class I, class S>
  auto scatter_add(std::int64_t dim, const I& index, const S& src) const {
    return detail::calls::call_scatter_add(self(), dim, index, src);
  }
  /// masked_fill(x, mask, value).
  template <class M, class V>
  auto masked_fill(const M& mask, const V& value) const { return detail::calls::call_masked_fill(self(), mask, value); }
  /// masked_select(x, mask).
  template <class M>
  auto masked_select(const M& mask) const { return detail::calls::call_masked_select(self(), mask); }
  /// take(x, index).
  template <class I>
  auto take(const I& index) const { return detail::calls::call_take(self(), index); }
  /// nonzero(x).
  auto nonzero() const { return detail::calls::call_nonzero(self()); }
  /// index_add(x, dim, index, source, alpha).
  template <class I, class S>
  auto index_add(std::int64_t dim, const I& index, const S& source, double alpha = 1.0) const {
    return detail::calls::call_index_add(self(), dim, index, source, alpha);
  }

  // ---- shape and joining (copies, as in PyTorch) ----
  /// flip(x, dims).
  auto flip(int_list dims) const { return detail::calls::call_flip(self(), dims); }
  /// flip(x, {d0, d1, ...}).
  template <std::integral... I>
    requires(sizeof...(I) >= 2)
  auto flip(I... dims) const { return flip({static_cast<std::int64_t>(dims)...}); }
  /// roll(x, shifts, dims).
  auto roll(int_list shifts, int_list dims = {}) const { return detail::calls::call_roll(self(), shifts, dims); }
  /// repeat(x, repeats).
  auto repeat(int_list repeats) const { return detail::calls::call_repeat(self(), repeats); }
  /// repeat(x, {r0, r1, ...}).
  template <std::integral... I>
    requires(sizeof...(I) >= 2)
  auto repeat(I... repeats) const { return repeat({static_cast<std::int64_t>(repeats)...}); }
  /// tile(x, reps).
  auto tile(int_list reps) const { return detail::calls::call_tile(self(), reps); }
  /// repeat_interleave(x, repeats, dim).
  template <class R>
  auto repeat_interleave(const R& repeats, std::optional<std::int64_t> dim = std::nullopt) const {
    return detail::calls::call_repeat_interleave(self(), repeats, dim);
  }
  /// tril(x, diagonal).
  auto tril(std::int64_t diagonal = 0) const { return detail::calls::call_tril(self(), diagonal); }
  /// triu(x, diagonal).
  auto triu(std::int64_t diagonal = 0) const { return detail::calls::call_triu(self(), diagonal); }
  /// split(x, split_size, dim) or split(x, {sizes...}, dim).
  template <class S>
  auto split(const S& split_size_or_sizes, std::int64_t dim = 0) const {
    return detail::calls::call_split(self(), split_size_or_sizes, dim);
  }
  /// split(x, {sizes...}, dim).
  auto split(int_list split_sizes, std::int64_t dim = 0) const { return detail::calls::call_split(self(), split_sizes, dim); }
  /// chunk(x, chunks, dim).
  auto chunk(std::int64_t chunks, std::int64_t dim = 0) const { return detail::calls::call_chunk(self(), chunks, dim); }
  /// unbind(x, dim).
  auto unbind(std::int64_t dim = 0) const { return detail::calls::call_unbind(self(), dim); }

  // ---- products ----
  /// matmul(x, other).
  template <class B>
  auto matmul(const B& other) const { return detail::calls::call_matmul(self(), other); }
  /// mm(x, other).
  template <class B>
  auto mm(const B& other) const { return detail::calls::call_mm(self(), other); }
  /// bmm(x, other).
  template <class B>
  auto bmm(const B& other) const { return detail::calls::call_bmm(self(), other); }
  /// mv(x, vector).
  template <class B>
  auto mv(const B& vector) const { return detail::calls::call_mv(self(), vector); }
  /// dot(x, other).
  template <class B>
  auto dot(const B& other) const { return detail::calls::call_dot(self(), other); }
  /// outer(x, other).
  template <class B>
  auto outer(const B& other) const { return detail::calls::call_outer(self(), other); }

  // ---- types ----
  /// x converted to other's element type (torch's type_as).
  template <class B>
  auto type_as(const B& other) const {
    if constexpr (requires { typename B::value_type; }) return self().template to<typename B::value_type>();
    else return detail::calls::call_type_as(self(), other);  // a run-time dtype: strata.any's type_as
  }

 private:
  const D& self() const { return static_cast<const D&>(*this); }
};
}  // namespace strata
