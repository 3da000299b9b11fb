// SPDX-License-Identifier: MIT
// PyTorch's tensor methods, shared by Tensor<T> and every lazy expression: each forwards to
// the free function of the same name (one definition per operation). The free functions live
// in modules above this one (strata.expr, strata.manip, strata.indexing, ...), so a method
// reaches its function by argument-dependent lookup where it is used: in the translation unit
// that imported strata.
module;
#include <concepts>
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
export module strata.tensor:methods;
import strata.dtype;
import strata.shape;

// calls::f_(x, args...) is f(x, args...), f found by argument-dependent lookup on x (a Tensor
// or an expression node, both in namespace strata) when the calling method is instantiated.
namespace strata::detail::calls {
#define STRATA_CALL(f) \
  template <class... A> \
  decltype(auto) f##_(A&&... a) { return f(std::forward<A>(a)...); }
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
  auto abs() const { return detail::calls::abs_(self()); }
  /// neg(x).
  auto neg() const { return detail::calls::neg_(self()); }
  /// exp(x).
  auto exp() const { return detail::calls::exp_(self()); }
  /// expm1(x).
  auto expm1() const { return detail::calls::expm1_(self()); }
  /// log(x).
  auto log() const { return detail::calls::log_(self()); }
  /// log1p(x).
  auto log1p() const { return detail::calls::log1p_(self()); }
  /// log2(x).
  auto log2() const { return detail::calls::log2_(self()); }
  /// log10(x).
  auto log10() const { return detail::calls::log10_(self()); }
  /// exp2(x).
  auto exp2() const { return detail::calls::exp2_(self()); }
  /// sqrt(x).
  auto sqrt() const { return detail::calls::sqrt_(self()); }
  /// rsqrt(x).
  auto rsqrt() const { return detail::calls::rsqrt_(self()); }
  /// sin(x).
  auto sin() const { return detail::calls::sin_(self()); }
  /// cos(x).
  auto cos() const { return detail::calls::cos_(self()); }
  /// tan(x).
  auto tan() const { return detail::calls::tan_(self()); }
  /// tanh(x).
  auto tanh() const { return detail::calls::tanh_(self()); }
  /// sigmoid(x).
  auto sigmoid() const { return detail::calls::sigmoid_(self()); }
  /// relu(x).
  auto relu() const { return detail::calls::relu_(self()); }
  /// floor(x).
  auto floor() const { return detail::calls::floor_(self()); }
  /// ceil(x).
  auto ceil() const { return detail::calls::ceil_(self()); }
  /// round(x) (half to even).
  auto round() const { return detail::calls::round_(self()); }
  /// trunc(x).
  auto trunc() const { return detail::calls::trunc_(self()); }
  /// frac(x).
  auto frac() const { return detail::calls::frac_(self()); }
  /// sign(x).
  auto sign() const { return detail::calls::sign_(self()); }
  /// erf(x).
  auto erf() const { return detail::calls::erf_(self()); }
  /// erfc(x).
  auto erfc() const { return detail::calls::erfc_(self()); }
  /// square(x).
  auto square() const { return detail::calls::square_(self()); }
  /// reciprocal(x).
  auto reciprocal() const { return detail::calls::reciprocal_(self()); }
  /// conj(x).
  auto conj() const { return detail::calls::conj_(self()); }
  /// silu(x).
  auto silu() const { return detail::calls::silu_(self()); }
  /// isnan(x).
  auto isnan() const { return detail::calls::isnan_(self()); }
  /// isinf(x).
  auto isinf() const { return detail::calls::isinf_(self()); }
  /// isfinite(x).
  auto isfinite() const { return detail::calls::isfinite_(self()); }
  /// isposinf(x).
  auto isposinf() const { return detail::calls::isposinf_(self()); }
  /// isneginf(x).
  auto isneginf() const { return detail::calls::isneginf_(self()); }
  /// logical_not(x).
  auto logical_not() const { return detail::calls::logical_not_(self()); }
  /// gelu(x, approximate).
  auto gelu(std::string_view approximate = "none") const { return detail::calls::gelu_(self(), approximate); }
  /// softplus(x, beta, threshold).
  auto softplus(double beta = 1.0, double threshold = 20.0) const {
    return detail::calls::softplus_(self(), beta, threshold);
  }
  /// logit(x, eps).
  auto logit(std::optional<double> eps = std::nullopt) const { return detail::calls::logit_(self(), eps); }
  /// nan_to_num(x, nan, posinf, neginf).
  auto nan_to_num(double nan = 0.0, std::optional<double> posinf = std::nullopt,
                  std::optional<double> neginf = std::nullopt) const {
    return detail::calls::nan_to_num_(self(), nan, posinf, neginf);
  }
  /// pow(x, exponent) (a tensor, an expression or a number).
  template <class E>
  auto pow(const E& exponent) const { return detail::calls::pow_(self(), exponent); }
  /// maximum(x, other).
  template <class B>
  auto maximum(const B& other) const { return detail::calls::maximum_(self(), other); }
  /// minimum(x, other).
  template <class B>
  auto minimum(const B& other) const { return detail::calls::minimum_(self(), other); }
  /// fmod(x, other).
  template <class B>
  auto fmod(const B& other) const { return detail::calls::fmod_(self(), other); }
  /// remainder(x, other).
  template <class B>
  auto remainder(const B& other) const { return detail::calls::remainder_(self(), other); }
  /// floor_divide(x, other).
  template <class B>
  auto floor_divide(const B& other) const { return detail::calls::floor_divide_(self(), other); }
  /// hypot(x, other).
  template <class B>
  auto hypot(const B& other) const { return detail::calls::hypot_(self(), other); }
  /// atan2(x, other).
  template <class B>
  auto atan2(const B& other) const { return detail::calls::atan2_(self(), other); }
  /// copysign(x, other).
  template <class B>
  auto copysign(const B& other) const { return detail::calls::copysign_(self(), other); }
  /// logical_and(x, other).
  template <class B>
  auto logical_and(const B& other) const { return detail::calls::logical_and_(self(), other); }
  /// logical_or(x, other).
  template <class B>
  auto logical_or(const B& other) const { return detail::calls::logical_or_(self(), other); }
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
  auto clamp(const L& lo, const H& hi) const { return detail::calls::clamp_(self(), lo, hi); }
  /// max(x, lo) (torch's clamp(min=lo); NaN propagates).
  template <class L>
  auto clamp_min(L lo) const { return detail::calls::maximum_(self(), lo); }
  /// min(x, hi) (torch's clamp(max=hi); NaN propagates).
  template <class H>
  auto clamp_max(H hi) const { return detail::calls::minimum_(self(), hi); }
  /// where(condition, x, other): x where condition holds, else other (torch's x.where(c, y)).
  template <class C, class B>
  auto where(const C& condition, const B& other) const { return detail::calls::where_(condition, self(), other); }
  /// lerp(x, end, weight).
  template <class B, class W>
  auto lerp(const B& end, const W& weight) const { return detail::calls::lerp_(self(), end, weight); }
  /// addcmul(x, t1, t2, value).
  template <class A, class B>
  auto addcmul(const A& t1, const B& t2, double value = 1.0) const { return detail::calls::addcmul_(self(), t1, t2, value); }
  /// addcdiv(x, t1, t2, value).
  template <class A, class B>
  auto addcdiv(const A& t1, const B& t2, double value = 1.0) const { return detail::calls::addcdiv_(self(), t1, t2, value); }

  // ---- reductions and statistics (lazy like the free functions) ----
  /// sum(x, dims, keepdim).
  auto sum(int_list dims = {}, bool keepdim = false) const { return detail::calls::sum_(self(), dims, keepdim); }
  /// mean(x, dims, keepdim).
  auto mean(int_list dims = {}, bool keepdim = false) const { return detail::calls::mean_(self(), dims, keepdim); }
  /// prod(x, dims, keepdim).
  auto prod(int_list dims = {}, bool keepdim = false) const { return detail::calls::prod_(self(), dims, keepdim); }
  /// amax(x, dims, keepdim).
  auto amax(int_list dims = {}, bool keepdim = false) const { return detail::calls::amax_(self(), dims, keepdim); }
  /// amin(x, dims, keepdim).
  auto amin(int_list dims = {}, bool keepdim = false) const { return detail::calls::amin_(self(), dims, keepdim); }
  /// all(x, dims, keepdim).
  auto all(int_list dims = {}, bool keepdim = false) const { return detail::calls::all_(self(), dims, keepdim); }
  /// any(x, dims, keepdim).
  auto any(int_list dims = {}, bool keepdim = false) const { return detail::calls::any_(self(), dims, keepdim); }
  /// sum_to(x, sizes): the gradient reduction of a broadcast input.
  auto sum_to(int_list sizes) const { return detail::calls::sum_to_(self(), sizes); }
  /// nansum(x, dims, keepdim).
  auto nansum(int_list dims = {}, bool keepdim = false) const { return detail::calls::nansum_(self(), dims, keepdim); }
  /// nanmean(x, dims, keepdim).
  auto nanmean(int_list dims = {}, bool keepdim = false) const { return detail::calls::nanmean_(self(), dims, keepdim); }
  /// count_nonzero(x, dims).
  auto count_nonzero(int_list dims = {}) const { return detail::calls::count_nonzero_(self(), dims); }
  /// var(x, dims, correction, keepdim).
  auto var(int_list dims = {}, std::int64_t correction = 1, bool keepdim = false) const {
    return detail::calls::var_(self(), dims, correction, keepdim);
  }
  /// std(x, dims, correction, keepdim).
  auto std(int_list dims = {}, std::int64_t correction = 1, bool keepdim = false) const {
    return detail::std_call<D>::run(self(), dims, correction, keepdim);
  }
  /// norm(x, p, dims, keepdim).
  auto norm(double p = 2, int_list dims = {}, bool keepdim = false) const {
    return detail::calls::norm_(self(), p, dims, keepdim);
  }
  /// logsumexp(x, dims, keepdim).
  auto logsumexp(int_list dims, bool keepdim = false) const { return detail::calls::logsumexp_(self(), dims, keepdim); }
  /// softmax(x, dim).
  auto softmax(std::int64_t dim) const { return detail::calls::softmax_(self(), dim); }
  /// log_softmax(x, dim).
  auto log_softmax(std::int64_t dim) const { return detail::calls::log_softmax_(self(), dim); }
  /// argmax(x, dim, keepdim) (all elements, flattened, without a dim).
  auto argmax(std::optional<std::int64_t> dim = std::nullopt, bool keepdim = false) const {
    return detail::calls::argmax_(self(), dim, keepdim);
  }
  /// argmin(x, dim, keepdim).
  auto argmin(std::optional<std::int64_t> dim = std::nullopt, bool keepdim = false) const {
    return detail::calls::argmin_(self(), dim, keepdim);
  }
  /// The largest element (amax over all).
  auto max() const { return detail::calls::max_(self()); }
  /// (values, indices) of the largest elements along dim.
  auto max(std::int64_t dim, bool keepdim = false) const { return detail::calls::max_(self(), dim, keepdim); }
  /// The element-wise maximum with other (torch's x.max(other)).
  template <class B>
    requires requires { typename B::value_type; }
  auto max(const B& other) const { return detail::calls::maximum_(self(), other); }
  /// The smallest element (amin over all).
  auto min() const { return detail::calls::min_(self()); }
  /// (values, indices) of the smallest elements along dim.
  auto min(std::int64_t dim, bool keepdim = false) const { return detail::calls::min_(self(), dim, keepdim); }
  /// The element-wise minimum with other (torch's x.min(other)).
  template <class B>
    requires requires { typename B::value_type; }
  auto min(const B& other) const { return detail::calls::minimum_(self(), other); }

  // ---- sorting and scans ----
  /// sort(x, dim, descending, stable): (values, indices).
  auto sort(std::int64_t dim = -1, bool descending = false, bool stable = false) const {
    return detail::calls::sort_(self(), dim, descending, stable);
  }
  /// argsort(x, dim, descending, stable).
  auto argsort(std::int64_t dim = -1, bool descending = false, bool stable = false) const {
    return detail::calls::argsort_(self(), dim, descending, stable);
  }
  /// topk(x, k, dim, largest, sorted): (values, indices).
  auto topk(std::int64_t k, std::int64_t dim = -1, bool largest = true, bool sorted = true) const {
    return detail::calls::topk_(self(), k, dim, largest, sorted);
  }
  /// kthvalue(x, k, dim, keepdim): (values, indices).
  auto kthvalue(std::int64_t k, std::int64_t dim = -1, bool keepdim = false) const {
    return detail::calls::kthvalue_(self(), k, dim, keepdim);
  }
  /// median(x) of all elements (the lower of the two middle ones).
  auto median() const { return detail::calls::median_(self()); }
  /// median(x, dim, keepdim): (values, indices).
  auto median(std::int64_t dim, bool keepdim = false) const { return detail::calls::median_(self(), dim, keepdim); }
  /// nanmedian(x).
  auto nanmedian() const { return detail::calls::nanmedian_(self()); }
  /// nanmedian(x, dim, keepdim).
  auto nanmedian(std::int64_t dim, bool keepdim = false) const { return detail::calls::nanmedian_(self(), dim, keepdim); }
  /// mode(x, dim, keepdim): (values, indices).
  auto mode(std::int64_t dim = -1, bool keepdim = false) const { return detail::calls::mode_(self(), dim, keepdim); }
  /// cumsum(x, dim).
  auto cumsum(std::int64_t dim) const { return detail::calls::cumsum_(self(), dim); }
  /// cumprod(x, dim).
  auto cumprod(std::int64_t dim) const { return detail::calls::cumprod_(self(), dim); }
  /// cummax(x, dim): (values, indices).
  auto cummax(std::int64_t dim) const { return detail::calls::cummax_(self(), dim); }
  /// cummin(x, dim): (values, indices).
  auto cummin(std::int64_t dim) const { return detail::calls::cummin_(self(), dim); }
  /// logcumsumexp(x, dim).
  auto logcumsumexp(std::int64_t dim) const { return detail::calls::logcumsumexp_(self(), dim); }
  /// quantile(x, q, dim, keepdim, interpolation) (q a number or a tensor of them).
  template <class Q>
  auto quantile(const Q& q, std::optional<std::int64_t> dim = std::nullopt, bool keepdim = false,
                std::string_view interpolation = "linear") const {
    return detail::calls::quantile_(self(), q, dim, keepdim, interpolation);
  }
  /// nanquantile(x, q, dim, keepdim, interpolation).
  auto nanquantile(double q, std::optional<std::int64_t> dim = std::nullopt, bool keepdim = false,
                   std::string_view interpolation = "linear") const {
    return detail::calls::nanquantile_(self(), q, dim, keepdim, interpolation);
  }

  // ---- indexing ----
  /// index_select(x, dim, index).
  template <class I>
  auto index_select(std::int64_t dim, const I& index) const { return detail::calls::index_select_(self(), dim, index); }
  /// gather(x, dim, index).
  template <class I>
  auto gather(std::int64_t dim, const I& index) const { return detail::calls::gather_(self(), dim, index); }
  /// scatter(x, dim, index, src) (src a tensor, an expression or a number).
  template <class I, class S>
  auto scatter(std::int64_t dim, const I& index, const S& src) const {
    return detail::calls::scatter_(self(), dim, index, src);
  }
  /// scatter_add(x, dim, index, src).
  template <class I, class S>
  auto scatter_add(std::int64_t dim, const I& index, const S& src) const {
    return detail::calls::scatter_add_(self(), dim, index, src);
  }
  /// masked_fill(x, mask, value).
  template <class M, class V>
  auto masked_fill(const M& mask, const V& value) const { return detail::calls::masked_fill_(self(), mask, value); }
  /// masked_select(x, mask).
  template <class M>
  auto masked_select(const M& mask) const { return detail::calls::masked_select_(self(), mask); }
  /// take(x, index).
  template <class I>
  auto take(const I& index) const { return detail::calls::take_(self(), index); }
  /// nonzero(x).
  auto nonzero() const { return detail::calls::nonzero_(self()); }
  /// index_add(x, dim, index, source, alpha).
  template <class I, class S>
  auto index_add(std::int64_t dim, const I& index, const S& source, double alpha = 1.0) const {
    return detail::calls::index_add_(self(), dim, index, source, alpha);
  }

  // ---- shape and joining (copies, as in PyTorch) ----
  /// flip(x, dims).
  auto flip(int_list dims) const { return detail::calls::flip_(self(), dims); }
  /// flip(x, {d0, d1, ...}).
  template <std::integral... I>
    requires(sizeof...(I) >= 2)
  auto flip(I... dims) const { return flip({static_cast<std::int64_t>(dims)...}); }
  /// roll(x, shifts, dims).
  auto roll(int_list shifts, int_list dims = {}) const { return detail::calls::roll_(self(), shifts, dims); }
  /// repeat(x, repeats).
  auto repeat(int_list repeats) const { return detail::calls::repeat_(self(), repeats); }
  /// repeat(x, {r0, r1, ...}).
  template <std::integral... I>
    requires(sizeof...(I) >= 2)
  auto repeat(I... repeats) const { return repeat({static_cast<std::int64_t>(repeats)...}); }
  /// tile(x, reps).
  auto tile(int_list reps) const { return detail::calls::tile_(self(), reps); }
  /// repeat_interleave(x, repeats, dim).
  template <class R>
  auto repeat_interleave(const R& repeats, std::optional<std::int64_t> dim = std::nullopt) const {
    return detail::calls::repeat_interleave_(self(), repeats, dim);
  }
  /// tril(x, diagonal).
  auto tril(std::int64_t diagonal = 0) const { return detail::calls::tril_(self(), diagonal); }
  /// triu(x, diagonal).
  auto triu(std::int64_t diagonal = 0) const { return detail::calls::triu_(self(), diagonal); }
  /// split(x, split_size, dim) or split(x, {sizes...}, dim).
  template <class S>
  auto split(const S& split_size_or_sizes, std::int64_t dim = 0) const {
    return detail::calls::split_(self(), split_size_or_sizes, dim);
  }
  /// split(x, {sizes...}, dim).
  auto split(int_list split_sizes, std::int64_t dim = 0) const { return detail::calls::split_(self(), split_sizes, dim); }
  /// chunk(x, chunks, dim).
  auto chunk(std::int64_t chunks, std::int64_t dim = 0) const { return detail::calls::chunk_(self(), chunks, dim); }
  /// unbind(x, dim).
  auto unbind(std::int64_t dim = 0) const { return detail::calls::unbind_(self(), dim); }

  // ---- products ----
  /// matmul(x, other).
  template <class B>
  auto matmul(const B& other) const { return detail::calls::matmul_(self(), other); }
  /// mm(x, other).
  template <class B>
  auto mm(const B& other) const { return detail::calls::mm_(self(), other); }
  /// bmm(x, other).
  template <class B>
  auto bmm(const B& other) const { return detail::calls::bmm_(self(), other); }
  /// mv(x, vector).
  template <class B>
  auto mv(const B& vector) const { return detail::calls::mv_(self(), vector); }
  /// dot(x, other).
  template <class B>
  auto dot(const B& other) const { return detail::calls::dot_(self(), other); }
  /// outer(x, other).
  template <class B>
  auto outer(const B& other) const { return detail::calls::outer_(self(), other); }

  // ---- types ----
  /// x converted to other's element type (torch's type_as).
  template <class B>
  auto type_as(const B&) const { return self().template to<typename B::value_type>(); }

 private:
  const D& self() const { return static_cast<const D&>(*this); }
};
}  // namespace strata
