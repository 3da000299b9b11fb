// SPDX-License-Identifier: MIT
// The samplers behind strata.random, instantiated once per dtype at the end.
//
// The stream. A call reserves B consecutive Philox counters c = first .. first + B - 1 from
// its generator; counter c gives the block philox4x32_10({lo(c), hi(c), 0, 0}, key), and the
// call's blocks laid end to end are its word stream w[0..4B). A sampler reads a fixed number
// of words per real value (1 for float-sized reals, 2 for double, 4 for float128), so real k
// of the output (element k, or the parts 2k and 2k + 1 of a complex element k) depends only
// on (key, first, k). Work is cut into chunks of whole blocks and spread over threads; the
// values cannot depend on the split.
//
// The values.
//  - uniform: the top `digits` bits of a word (11 half, 8 bfloat16, 24 float), of a 64-bit
//    word (53, double) or of 128 bits (113, float128), times 2^-digits: exactly the grid
//    {k 2^-digits} in [0, 1), then x (to - from) + from as PyTorch computes it.
//  - normal: Box-Muller on pairs of reals (2j, 2j + 1): radius sqrt(-2 log u1) from u1 in
//    (0, 1] (31 bits for float, 53 for double, 113 for float128; float's radius reaches
//    6.7 sigma, double's 8.6), angle 2 pi u2 with u2 uniform as above; the pair is
//    (r cos, r sin). Box-Muller is exact in exact arithmetic; log, sin and cos are SLEEF's
//    1-ulp vector functions for float and double (src/vmath.cpp), Boost's for float128.
//  - randint: range <= 2^32 from a 64-bit word, larger ranges from 128 bits, as
//    floor(w * range / 2^bits): each value is hit floor or ceil of 2^bits / range times, a
//    relative bias below 2^-32 (2^-64 for the large ranges). PyTorch takes w % range from 32
//    or 64 bits, whose bias reaches a factor of 2 for ranges near 2^32 or 2^63.
//  - bernoulli: u < p with u a 53-bit uniform double.
//  - randperm: Fisher-Yates; step i draws its index in [0, i] from words of real i.
module;
#include "dtype_list.hpp"
#include <algorithm>
#include <array>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>
#include "parallel.hpp"
module strata.random;
import strata.loop;
import strata.graph;

namespace strata {
std::uint64_t generator::seed() {
  std::random_device device;
  const std::uint64_t s = (std::uint64_t{device()} << 32) | device();
  manual_seed(s);
  return s;
}

generator& default_generator() noexcept {
  static generator g;
  return g;
}
generator& manual_seed(std::uint64_t seed) noexcept { return default_generator().manual_seed(seed); }
std::uint64_t seed() { return default_generator().seed(); }
std::uint64_t initial_seed() noexcept { return default_generator().initial_seed(); }
}  // namespace strata

namespace strata::detail {
namespace {
// ---- names and numbers in PyTorch's messages ----
// caffe2::TypeMeta names ('unsigned char', 'c10::Half'), as the bounds messages print them.
std::string meta_name(dtype t) {
  constexpr const char* names[num_dtypes] = {"bool",  "unsigned char", "signed char", "short int", "int",
                                             "long int", "c10::Half", "c10::BFloat16", "float", "double",
                                             "c10::complex<float>", "c10::complex<double>", "float128"};
  return names[static_cast<int>(t)];
}
// A number as c10::str prints it (an ostream's defaults: 6 significant digits).
template <class V>
std::string str(V v) {
  std::ostringstream s;
  s << v;
  return s.str();
}
[[noreturn]] void not_implemented(const char* what, dtype t) {
  throw dtype_error(std::string("\"") + what + "\" not implemented for '" + scalar_type_name(t) + "'");
}

template <class T> inline constexpr bool is_integral_v = category_of(dtype_v<T>) <= category::integral;

// ---- the word stream ----
// w[4j + k] = word k of block s.first + b0 + j, for j < n. A plain loop over blocks: the
// compiler vectorises it across j (16 blocks per AVX-512 iteration).
void philox_words(const philox_stream& s, std::uint64_t b0, std::int64_t n, std::uint32_t* __restrict w) {
  const std::array<std::uint32_t, 2> key = s.key;  // locals: w cannot alias them
  const std::uint64_t first = s.first + b0;
  for (std::int64_t j = 0; j < n; ++j) {
    const std::uint64_t c = first + static_cast<std::uint64_t>(j);
    const std::array<std::uint32_t, 4> x =
        philox4x32_10({static_cast<std::uint32_t>(c), static_cast<std::uint32_t>(c >> 32), 0, 0}, key);
    for (std::size_t k = 0; k < 4; ++k) w[4 * j + static_cast<std::int64_t>(k)] = x[k];
  }
}

inline std::uint64_t word64(const std::uint32_t* w) { return w[0] | (std::uint64_t{w[1]} << 32); }

/// The real type values are computed in (float for half, bfloat16 and float) and how many
/// stream words one real takes.
template <class T>
using calc_t = compute_t<real_t<T>>;
template <class C>
inline constexpr std::int64_t words_per_real = std::is_same_v<C, float> ? 1 : std::is_same_v<C, double> ? 2 : 4;

/// Reals per chunk: a multiple of 4 (chunks start on a block) and of 2 (on a Box-Muller pair).
constexpr std::int64_t chunk = 1024;

/// A uniform real in [0, 1) on the grid 2^-digits, from the words at w.
template <class C, int digits>
C uniform01(const std::uint32_t* w) {
  if constexpr (std::is_same_v<C, float>) {
    return static_cast<float>(w[0] >> (32 - digits)) * (1.0f / static_cast<float>(1u << digits));
  } else if constexpr (std::is_same_v<C, double>) {
    return static_cast<double>(word64(w) >> 11) * 0x1p-53;
  } else {
    const C hi = static_cast<C>(word64(w + 2) >> 15);  // 49 bits, then 64: 113 in all
    return (hi * C(0x1p64) + static_cast<C>(word64(w))) * C(0x1p-113);
  }
}

/// Per-thread scratch for chunks of at most n reals: their words (up to 4 a real, and a
/// Box-Muller pair's second real), values, and Box-Muller's three arrays.
template <class C>
struct scratch {
  explicit scratch(std::int64_t n)
      : words(static_cast<std::size_t>(4 * n + 8)), values(static_cast<std::size_t>(n)),
        a(static_cast<std::size_t>(n / 2 + 1)), b(a.size()), c(a.size()) {}
  std::vector<std::uint32_t> words;
  std::vector<C> values;
  std::vector<C> a, b, c;
};

/// The words of reals [k0, k0 + m) of the stream (k0 a multiple of chunk).
template <class C>
const std::uint32_t* words_for(const philox_stream& s, std::int64_t k0, std::int64_t m, std::int64_t words_per,
                               scratch<C>& sc) {
  const std::int64_t w0 = k0 * words_per, w1 = (k0 + m) * words_per;
  philox_words(s, static_cast<std::uint64_t>(w0 / 4), (w1 - w0 + 3) / 4, sc.words.data());
  return sc.words.data();
}

/// v[0..m) = standard normal reals k0.. of the stream (pairs (2j, 2j + 1) share a draw).
template <class C>
void normal_reals(const philox_stream& s, std::int64_t k0, std::int64_t m, scratch<C>& sc, C* v) {
  constexpr std::int64_t wr = words_per_real<C>;
  const std::uint32_t* w = words_for(s, k0, m + (m & 1), wr, sc);
  const std::int64_t pairs = (m + 1) / 2;
  C* r = sc.a.data();
  C* angle = sc.b.data();
  C* cosine = sc.c.data();
  if constexpr (std::is_same_v<C, float> || std::is_same_v<C, double>) {
    constexpr C two_pi = static_cast<C>(6.283185307179586476925286766559);
    for (std::int64_t p = 0; p < pairs; ++p) {
      const std::uint32_t* q = w + 2 * p * wr;
      if constexpr (std::is_same_v<C, float>)  // (k + 1/2) 2^-31: in (0, 1] after rounding
        r[p] = static_cast<float>(static_cast<std::int32_t>(q[0] >> 1)) * 0x1p-31f + 0x1p-32f;
      else
        r[p] = static_cast<double>((word64(q) >> 11) + 1) * 0x1p-53;
      angle[p] = uniform01<C, std::numeric_limits<C>::digits>(q + wr) * two_pi;
    }
    vmath(vfn::log, r, r, pairs);
    for (std::int64_t p = 0; p < pairs; ++p) r[p] = std::sqrt(std::max(C(-2) * r[p], C(0)));
    vmath(vfn::cos, angle, cosine, pairs);
    vmath(vfn::sin, angle, angle, pairs);
    for (std::int64_t p = 0; p < m / 2; ++p) {
      v[2 * p] = r[p] * cosine[p];
      v[2 * p + 1] = r[p] * angle[p];
    }
    if (m & 1) v[m - 1] = r[m / 2] * cosine[m / 2];  // v may be the destination: stop at m
  } else {
    static const C two_pi("6.283185307179586476925286766559005768394338798750211641949889185");
    for (std::int64_t p = 0; p < pairs; ++p) {
      const std::uint32_t* q = w + 2 * p * wr;
      const C u1 = uniform01<C, 113>(q) + C(0x1p-113);  // (0, 1]
      const C radius = sqrt(C(-2) * log(u1));
      const C theta = uniform01<C, 113>(q + wr) * two_pi;
      v[2 * p] = radius * cos(theta);
      if (2 * p + 1 < m) v[2 * p + 1] = radius * sin(theta);
    }
  }
}

// ---- threads and layouts ----
/// Runs body(scratch, k0, m) over the chunks of reals [0, reals): on one thread below two
/// grains, else on contiguous ranges of chunks per thread.
template <class C, class Body>
void for_chunks(std::int64_t reals, const Body& body) {
  const std::int64_t chunks = (reals + chunk - 1) / chunk;
  const std::int64_t threads = reals < 2 * grain ? 1 : std::min<std::int64_t>(thread_count(), reals / grain);
  struct job {
    const Body* body;
    std::int64_t reals, chunks, threads;
    static void run(void* ctx, std::int64_t t) {
      const job& j = *static_cast<const job*>(ctx);
      scratch<C> sc(std::min(chunk, j.reals));
      for (std::int64_t c = j.chunks * t / j.threads; c < j.chunks * (t + 1) / j.threads; ++c)
        (*j.body)(sc, c * chunk, std::min(chunk, j.reals - c * chunk));
    }
  } j{&body, reals, chunks, threads};
  if (threads <= 1) job::run(&j, 0);
  else parallel_run(threads, static_cast<int>(threads), &job::run, &j);
}

/// Element offsets of K strided operands at consecutive row-major indices of sizes.
template <std::size_t K>
class walker {
 public:
  walker(int_list sizes, std::array<dim_vector, K> strides) : sizes_(sizes.vec()), strides_(std::move(strides)) {}
  void seek(std::int64_t e) {
    index_ = dim_vector(sizes_.size(), 0);
    off.fill(0);
    for (std::size_t d = sizes_.size(); d-- > 0;) {
      index_[d] = e % sizes_[d];
      e /= sizes_[d];
      for (std::size_t k = 0; k < K; ++k) off[k] += index_[d] * strides_[k][d];
    }
  }
  void next() {
    for (std::size_t d = sizes_.size(); d-- > 0;) {
      for (std::size_t k = 0; k < K; ++k) off[k] += strides_[k][d];
      if (++index_[d] < sizes_[d]) return;
      for (std::size_t k = 0; k < K; ++k) off[k] -= strides_[k][d] * sizes_[d];
      index_[d] = 0;
    }
  }
  std::array<std::int64_t, K> off{};

 private:
  dim_vector sizes_, index_;
  std::array<dim_vector, K> strides_;
};

/// The strides of t broadcast to sizes.
template <class V>
dim_vector strides_in(const Tensor<V>& t, int_list sizes) { return broadcast_strides(t.sizes(), t.strides(), sizes); }

/// Writes elements [e0, e0 + m) of dst, element i from value(i, offsets) where offsets are
/// the element offsets of dst and of the K - 1 operands (their strides in `strides`).
template <class T, std::size_t K, class Value>
void write_elements(const Tensor<T>& dst, walker<K>& w, bool contiguous, std::int64_t e0, std::int64_t m,
                    const Value& value) {
  T* out = dst.data_ptr();
  if (contiguous && K == 1) {
    std::array<std::int64_t, K> off{};
    for (std::int64_t i = 0; i < m; ++i) {
      off[0] = e0 + i;
      out[e0 + i] = value(i, off);
    }
    return;
  }
  w.seek(e0);
  for (std::int64_t i = 0; i < m; ++i, w.next()) out[w.off[0]] = value(i, w.off);
}

/// Checks and prepares a destination a sampler writes in place; false when it is empty.
template <class T>
bool begin_write(const Tensor<T>& t) {
  check_writable(layout{t.sizes().vec(), t.strides().vec(), t.storage_offset()});
  t.storage().check_writable();
  if (t.numel() == 0) return false;
  t.storage().bump_version();
  return true;
}
template <class T>
void check_not_recorded(const Tensor<T>& t) {
  check_inplace(autograd_access<Tensor<T>>::meta(t).get());
}

/// Fills t from a stream of values V: reals(scratch, k0, m, v) gives v[0..m) = values
/// k0..k0+m chunk by chunk, then element i (two values for a complex T) is
/// finish(its values, offsets of t and of the K - 1 operands) (operands' strides given).
template <class T, class V, std::size_t K, class Reals, class Finish>
void fill(const Tensor<T>& t, std::array<dim_vector, K - 1> operand_strides, const Reals& reals, const Finish& finish) {
  constexpr std::int64_t per = is_complex(dtype_v<T>) ? 2 : 1;
  std::array<dim_vector, K> strides;
  strides[0] = t.strides().vec();
  for (std::size_t k = 1; k < K; ++k) strides[k] = std::move(operand_strides[k - 1]);
  const bool contiguous = t.is_contiguous();
  for_chunks<V>(t.numel() * per, [&](scratch<V>& sc, std::int64_t k0, std::int64_t m) {
    reals(sc, k0, m, sc.values.data());
    walker<K> w(t.sizes(), strides);
    write_elements<T, K>(t, w, contiguous, k0 / per, m / per, [&](std::int64_t i, const std::array<std::int64_t, K>& off) {
      return finish(sc.values.data() + per * i, off);
    });
  });
}

/// The element of type T made of the value(s) at v (two reals for a complex T).
template <class T, class V>
T element_of(const V* v) {
  if constexpr (is_complex(dtype_v<T>)) {
    using R = typename T::value_type;
    return T(static_cast<R>(v[0]), static_cast<R>(v[1]));
  } else {
    return convert<T>(v[0]);
  }
}

/// fill without operands: element i is made of values i (2i, 2i + 1 for complex T). Values
/// of T's own real type go straight into a contiguous t (a complex is two reals in memory).
template <class T, class V, class Reals>
void fill(const Tensor<T>& t, const Reals& reals) {
  if constexpr (std::is_same_v<V, real_t<T>>) {
    if (t.is_contiguous()) {
      V* out = reinterpret_cast<V*>(t.data_ptr());
      constexpr std::int64_t per = is_complex(dtype_v<T>) ? 2 : 1;
      for_chunks<V>(t.numel() * per, [&](scratch<V>& sc, std::int64_t k0, std::int64_t m) { reals(sc, k0, m, out + k0); });
      return;
    }
  }
  fill<T, V, 1>(t, {}, reals, [](const V* v, const auto&) { return element_of<T, V>(v); });
}

// ---- checks ----
/// PyTorch's lowest and max of a real type, as doubles (float128: double's, so that every
/// finite bound is accepted and infinities are not).
template <class R>
std::pair<double, double> limits_of() {
  if constexpr (std::is_same_v<R, float128>) return {std::numeric_limits<double>::lowest(), std::numeric_limits<double>::max()};
  else if constexpr (std::is_same_v<R, half>) return {-65504.0, 65504.0};
  else if constexpr (std::is_same_v<R, bfloat16>) return {-0x1.fep127, 0x1.fep127};
  else return {static_cast<double>(std::numeric_limits<R>::lowest()), static_cast<double>(std::numeric_limits<R>::max())};
}
template <class R>
constexpr int digits_of() {
  if constexpr (std::is_same_v<R, half>) return 11;
  else if constexpr (std::is_same_v<R, bfloat16>) return 8;
  else if constexpr (std::is_same_v<R, float128>) return 113;
  else return std::numeric_limits<R>::digits;
}
void check_bound(bool ok, const char* name, dtype t) {
  if (!ok) throw error(std::string(name) + " is out of bounds for " + meta_name(t));
}
void check_std_value(double std) {
  if (!(std >= 0.0)) throw error("normal expects std >= 0.0, but found std " + str(std));
}

// PyTorch's update_from / update_to: the nearest bounds that stay inside [from, to) once cast
// to a floating dtype.
template <class T>
std::int64_t update_from(std::int64_t from) {
  const auto from_plus_1 = convert<std::int64_t>(convert<T>(from + 1));
  if (from_plus_1 < from) {
    std::int64_t x = from + 1 < 0 ? -(from + 1) : from + 1;
    int n = 0;
    while (x >>= 1) ++n;
    from = from_plus_1 + (std::int64_t{1} << (n - digits_of<T>() + 1));
  }
  return from;
}
template <class T>
std::int64_t update_to(std::int64_t to) {
  const auto to_minus_1 = convert<std::int64_t>(convert<T>(to - 1));
  if (to_minus_1 >= to) {
    std::int64_t x = to - 1 < 0 ? -(to - 1) : to - 1;
    int n = 0;
    while (x >>= 1) ++n;
    to = to_minus_1 - (std::int64_t{1} << (n - digits_of<T>() + 1));
  }
  return to;
}

/// A value in [0, range) from the words at w: floor(w * range / 2^64), or / 2^128 when wide.
inline std::uint64_t bounded(const std::uint32_t* w, std::uint64_t range, bool wide) {
  using u128 = unsigned __int128;
  const u128 low = static_cast<u128>(word64(w)) * range;
  if (!wide) return static_cast<std::uint64_t>(low >> 64);
  return static_cast<std::uint64_t>((static_cast<u128>(word64(w + 2)) * range + (low >> 64)) >> 64);
}
}  // namespace

// ---- the samplers ----
template <element T>
void uniform_into(const Tensor<T>& t, double from, double to, generator& g) {
  check_not_recorded(t);
  using R = real_t<T>;
  if constexpr (is_integral_v<T>) {
    not_implemented("check_uniform_bounds", dtype_v<T>);
  } else {
    const auto [lo, hi] = limits_of<R>();
    check_bound(from >= lo && from <= hi, "from", dtype_v<R>);
    check_bound(to >= lo && to <= hi, "to", dtype_v<R>);
    if (!(from <= to))
      throw error("uniform_ expects to return a [from, to) range, but found from=" + str(from) + " > to=" + str(to));
    if (!(to - from <= hi))
      throw error("uniform_ expects to-from <= std::numeric_limits<" + scalar_type_name(dtype_v<R>) + ">::max(), but found to=" +
                  str(to) + " and from=" + str(from) + " which result in to-from to exceed the limit");
    if (!begin_write(t)) return;
    using C = calc_t<T>;
    const C f = static_cast<C>(convert<R>(from)), span = static_cast<C>(convert<R>(to)) - f;
    constexpr std::int64_t per = is_complex(dtype_v<T>) ? 2 : 1;
    const philox_stream s = generator_access::reserve(g, static_cast<std::uint64_t>((t.numel() * per * words_per_real<C> + 3) / 4));
    fill<T, C>(t, [&](scratch<C>& sc, std::int64_t k0, std::int64_t m, C* v) {
      constexpr std::int64_t wr = words_per_real<C>;
      const std::uint32_t* w = words_for(s, k0, m, wr, sc);
      for (std::int64_t i = 0; i < m; ++i) v[i] = uniform01<C, digits_of<R>()>(w + i * wr) * span + f;
    });
  }
}

template <element T>
void normal_into(const Tensor<T>& t, const Tensor<T>* mean, const Tensor<real_t<T>>* std, double mean_value,
                 double std_value, generator& g) {
  check_not_recorded(t);
  if (!std) check_std_value(std_value);
  if constexpr (is_integral_v<T>) {
    not_implemented("normal_kernel_cpu", dtype_v<T>);
  } else {
    if (!begin_write(t)) return;
    using C = calc_t<T>;
    using R = real_t<T>;
    constexpr bool cx = is_complex(dtype_v<T>);
    constexpr std::int64_t per = cx ? 2 : 1;
    // A complex element's parts are each N(0, 1/2); a scalar mean shifts both.
    const C scale = static_cast<C>(cx ? std_value / std::sqrt(2.0) : std_value), shift = static_cast<C>(mean_value);
    const std::int64_t reals = t.numel() * per;
    const philox_stream s =
        generator_access::reserve(g, static_cast<std::uint64_t>(((reals + 1) / 2 * 2 * words_per_real<C> + 3) / 4));
    const auto draw = [&](scratch<C>& sc, std::int64_t k0, std::int64_t m, C* v) { normal_reals<C>(s, k0, m, sc, v); };
    if (!mean && !std) {
      fill<T, C>(t, [&](scratch<C>& sc, std::int64_t k0, std::int64_t m, C* v) {
        normal_reals<C>(s, k0, m, sc, v);
        for (std::int64_t i = 0; i < m; ++i) v[i] = v[i] * scale + shift;
      });
      return;
    }
    // Tensor operands: element i = mean[i] + std[i] * z[i] (a missing one is the scalar).
    const dim_vector none(t.sizes().size(), 0);
    const T* mp = mean ? mean->data_ptr() : nullptr;
    const R* sp = std ? std->data_ptr() : nullptr;
    const C unit = static_cast<C>(cx ? 1 / std::sqrt(2.0) : 1.0);
    fill<T, C, 3>(t, {mean ? strides_in(*mean, t.sizes()) : none, std ? strides_in(*std, t.sizes()) : none}, draw,
               [&](const C* v, const std::array<std::int64_t, 3>& off) {
                 const C sd = sp ? static_cast<C>(sp[off[2]]) * unit : scale;
                 if constexpr (cx) {
                   const T m = mp ? mp[off[1]] : T(static_cast<R>(mean_value), static_cast<R>(mean_value));
                   return T(static_cast<R>(m.real() + sd * v[0]), static_cast<R>(m.imag() + sd * v[1]));
                 } else {
                   const C m = mp ? static_cast<C>(mp[off[1]]) : shift;
                   return convert<T>(v[0] * sd + m);
                 }
               });
  }
}

template <element T>
void randint_into(const Tensor<T>& t, std::int64_t low, std::int64_t high, generator& g) {
  check_not_recorded(t);
  if (!(low < high))
    throw error("random_ expects 'from' to be less than 'to', but got from=" + str(low) + " >= to=" + str(high));
  if constexpr (is_complex(dtype_v<T>)) {
    throw error("check_random_bounds handles only integral, floating-point and boolean types");
  } else {
    if constexpr (!is_integral_v<T>) {
      low = update_from<T>(low);
      high = update_to<T>(high);
      if (!(low < high))
        throw error("random_ expects 'from' casted to dtype to be less than 'to' casted to dtype, but got from=" +
                    str(low) + " >= to=" + str(high));
      const auto [lo, hi] = limits_of<T>();
      check_bound(static_cast<double>(low) >= lo && static_cast<double>(low) <= hi, "from", dtype_v<T>);
      check_bound(static_cast<double>(high - 1) >= lo && static_cast<double>(high - 1) <= hi, "to - 1", dtype_v<T>);
    } else {
      const auto lo = static_cast<std::int64_t>(std::numeric_limits<T>::lowest());
      const auto hi = static_cast<std::int64_t>(std::numeric_limits<T>::max());
      check_bound(low >= lo && low <= hi, "from", dtype_v<T>);
      check_bound(high - 1 >= lo && high - 1 <= hi, "to - 1", dtype_v<T>);
    }
    if (!begin_write(t)) return;
    const std::uint64_t range = static_cast<std::uint64_t>(high) - static_cast<std::uint64_t>(low);
    const bool wide = range > (std::uint64_t{1} << 32);
    const std::int64_t wr = wide ? 4 : 2;
    const philox_stream s = generator_access::reserve(g, static_cast<std::uint64_t>((t.numel() * wr + 3) / 4));
    fill<T, std::int64_t>(t, [&](scratch<std::int64_t>& sc, std::int64_t k0, std::int64_t m, std::int64_t* v) {
      const std::uint32_t* w = words_for(s, k0, m, wr, sc);
      for (std::int64_t i = 0; i < m; ++i)
        v[i] = static_cast<std::int64_t>(bounded(w + i * wr, range, wide) + static_cast<std::uint64_t>(low));
    });
  }
}
}  // namespace strata::detail

namespace strata::detail {
namespace {
/// Calls f(element) for every element of t.
template <class V, class F>
void for_each_element(const Tensor<V>& t, const F& f) {
  const std::int64_t n = t.numel();
  if (n == 0) return;
  walker<1> w(t.sizes(), {t.strides().vec()});
  w.seek(0);
  const V* p = t.data_ptr();
  for (std::int64_t i = 0; i < n; ++i, w.next()) f(p[w.off[0]]);
}
/// Reals [k0, k0 + m) of the stream as 53-bit uniform doubles.
void uniform_doubles(const philox_stream& s, scratch<double>& sc, std::int64_t k0, std::int64_t m, double* v) {
  const std::uint32_t* w = words_for(s, k0, m, 2, sc);
  for (std::int64_t i = 0; i < m; ++i) v[i] = uniform01<double, 53>(w + 2 * i);
}
}  // namespace

template <element T>
void bernoulli_into(const Tensor<T>& t, double p, generator& g) {
  check_not_recorded(t);
  if (!(p >= 0 && p <= 1)) throw error("bernoulli_ expects p to be in [0, 1], but got p=" + str(p));
  if constexpr (std::is_same_v<T, half> || is_complex(dtype_v<T>)) {
    not_implemented("bernoulli_scalar_cpu_", dtype_v<T>);
  } else {
    if (!begin_write(t)) return;
    const philox_stream s = generator_access::reserve(g, static_cast<std::uint64_t>((t.numel() * 2 + 3) / 4));
    fill<T, double>(t, [&](scratch<double>& sc, std::int64_t k0, std::int64_t m, double* v) {
      uniform_doubles(s, sc, k0, m, v);
      for (std::int64_t i = 0; i < m; ++i) v[i] = v[i] < p ? 1.0 : 0.0;
    });
  }
}

template <element T>
Tensor<T> bernoulli_tensor(const Tensor<T>& p, generator& g) {
  if constexpr (std::is_same_v<T, half> || is_complex(dtype_v<T>)) {
    not_implemented("bernoulli_tensor_cpu_self_", dtype_v<T>);
  } else if constexpr (is_integral_v<T>) {
    not_implemented("bernoulli_tensor_cpu_p_", dtype_v<T>);
  } else {
    for_each_element(p, [](const T& v) {
      const double x = convert<double>(v);
      if (!(x >= 0 && x <= 1))
        throw error("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error message be "
                    "improved?  If so, please report an enhancement request to PyTorch.)");
    });
    Tensor<T> out = empty<T>(p.sizes());
    if (out.numel() > 0) {
      const philox_stream s = generator_access::reserve(g, static_cast<std::uint64_t>((out.numel() * 2 + 3) / 4));
      const T* pp = p.data_ptr();
      fill<T, double, 2>(
          out, {p.strides().vec()},
          [&](scratch<double>& sc, std::int64_t k0, std::int64_t m, double* v) { uniform_doubles(s, sc, k0, m, v); },
          [pp](const double* v, const std::array<std::int64_t, 2>& off) { return convert<T>(*v < convert<double>(pp[off[1]])); });
    }
    record_sampled<T>(out, &p, nullptr);
    return out;
  }
}

template <element T>
Tensor<T> randperm_n(std::int64_t n, generator& g) {
  Tensor<T> out = empty<T>({n});
  if constexpr (std::is_same_v<T, bool> || is_complex(dtype_v<T>)) {
    not_implemented("randperm", dtype_v<T>);
  } else {
    const std::int64_t last = n > 0 ? n - 1 : n;
    if constexpr (is_integral_v<T>) {
      if (last > static_cast<std::int64_t>(std::numeric_limits<T>::max()))
        throw error("value cannot be converted to type " + c10_type_name(dtype_v<T>) + " without overflow");
    } else if constexpr (std::is_same_v<T, half>) {
      if (last > 65504) throw error("value cannot be converted to type at::Half without overflow");
      if (n > 2049) throw error("n cannot be greater than 2049 for Half type.");
    } else if constexpr (std::is_same_v<T, float>) {
      if (n > (std::int64_t{1} << 24) + 1) throw error("n cannot be greater than 2^24+1 for Float type.");
    } else if constexpr (std::is_same_v<T, double>) {
      if (n > (std::int64_t{1} << 53) + 1) throw error("n cannot be greater than 2^53+1 for Double type.");
    }
    T* p = out.data_ptr();
    for (std::int64_t i = 0; i < n; ++i) p[i] = convert<T>(i);
    if (n < 2) return out;
    // Fisher-Yates from the top: step i swaps element i with one drawn from [0, i], the draw
    // made of the stream's words for real i (generated a chunk at a time, last chunk first).
    const bool wide = static_cast<std::uint64_t>(n) > (std::uint64_t{1} << 32);
    const std::int64_t wr = wide ? 4 : 2;
    const philox_stream s = generator_access::reserve(g, static_cast<std::uint64_t>((n * wr + 3) / 4));
    scratch<std::uint64_t> sc(std::min(chunk, n));
    for (std::int64_t k0 = (n - 1) / chunk * chunk; k0 >= 0; k0 -= chunk) {
      const std::int64_t m = std::min(chunk, n - k0);
      const std::uint32_t* w = words_for(s, k0, m, wr, sc);
      for (std::int64_t i = k0 + m - 1; i >= std::max<std::int64_t>(k0, 1); --i) {
        const auto j = static_cast<std::int64_t>(bounded(w + (i - k0) * wr, static_cast<std::uint64_t>(i) + 1, wide));
        std::swap(p[i], p[j]);
      }
    }
  }
  return out;
}

template <element U>
void check_std(const Tensor<U>& std) {
  if constexpr (is_complex(dtype_v<U>)) {
    throw error("normal expects standard deviation to be non-complex");
  } else {
    for_each_element(std, [](const U& v) {
      if (!(convert<double>(v) >= 0)) throw error("normal expects all elements of std >= 0.0");
    });
  }
}

/// Sampling is not reparameterised, so (as PyTorch's NormalBackward and BernoulliBackward)
/// every input's gradient is zero.
template <element T>
void record_sampled(Tensor<T>& out, const Tensor<T>* a, const Tensor<T>* b) {
  std::vector<Tensor<T>> inputs;
  std::vector<dim_vector> sizes;
  for (const Tensor<T>* x : {a, b}) {
    if (!x) continue;
    inputs.push_back(*x);
    sizes.push_back(x->sizes().vec());
  }
  record_function<T>(out, inputs, [sizes](const Tensor<T>&, std::size_t i) { return zeros<T>(sizes[i]); });
}

// ---- compiled once per dtype ----
#define STRATA_RANDOM_INSTANCES(T)                                                                            \
  template void uniform_into<T>(const Tensor<T>&, double, double, generator&);                                \
  template void normal_into<T>(const Tensor<T>&, const Tensor<T>*, const Tensor<real_t<T>>*, double, double,   \
                               generator&);                                                                   \
  template void randint_into<T>(const Tensor<T>&, std::int64_t, std::int64_t, generator&);                    \
  template void bernoulli_into<T>(const Tensor<T>&, double, generator&);                                      \
  template Tensor<T> bernoulli_tensor<T>(const Tensor<T>&, generator&);                                       \
  template Tensor<T> randperm_n<T>(std::int64_t, generator&);                                                 \
  template void check_std<T>(const Tensor<T>&);                                                               \
  template void record_sampled<T>(Tensor<T>&, const Tensor<T>*, const Tensor<T>*);
STRATA_FOR_EACH_DTYPE(STRATA_RANDOM_INSTANCES)
#undef STRATA_RANDOM_INSTANCES
}  // namespace strata::detail
