// SPDX-License-Identifier: MIT
// Random sampling with PyTorch's names and checks (rand, randn, randint, normal, uniform_,
// normal_, bernoulli, randperm, the *_like forms) on a counter-based generator: Philox4x32-10
// keyed by the seed. A call reserves the counters it needs from its generator (one locked
// reservation per call) and element i of the result, in logical row-major order, is computed
// from (key, first counter, i) alone — so any thread count, any chunking and any destination
// layout give the same values. The samplers are compiled once per dtype in src/random.cpp.
module;
#include "dtype_list.hpp"
export module strata.random;
import strata.std;
import strata.error;
import strata.dtype;
import strata.shape;
import strata.tensor;

export namespace strata {
/// Philox4x32-10 (Salmon et al., SC'11; Random123's philox4x32 with 10 rounds): the 128-bit
/// block for counter ctr under key.
// Always inlined: the stream loop in src/random.cpp vectorises it across counters (without
// the attribute clang 19 leaves it a call there, 2.5x slower).
[[gnu::always_inline]] constexpr std::array<std::uint32_t, 4> philox4x32_10(
    std::array<std::uint32_t, 4> ctr, std::array<std::uint32_t, 2> key) noexcept {
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      key[0] += 0x9E3779B9u;  // the golden ratio and sqrt(3) - 1, as 32-bit fractions
      key[1] += 0xBB67AE85u;
    }
    const std::uint64_t p0 = std::uint64_t{0xD2511F53u} * ctr[0];
    const std::uint64_t p1 = std::uint64_t{0xCD9E8D57u} * ctr[2];
    ctr = {static_cast<std::uint32_t>(p1 >> 32) ^ ctr[1] ^ key[0], static_cast<std::uint32_t>(p1),
           static_cast<std::uint32_t>(p0 >> 32) ^ ctr[3] ^ key[1], static_cast<std::uint32_t>(p0)};
  }
  return ctr;
}
}  // namespace strata

namespace strata::detail {
struct generator_access;
}  // namespace strata::detail

export namespace strata {
/// A Philox4x32-10 stream: the seed is the key, the offset counts the 128-bit blocks handed
/// out so far. Copying a generator copies its state (save and restore a stream that way).
/// Reservations are locked, so one generator may serve several threads.
class generator {
 public:
  /// PyTorch's default seed.
  static constexpr std::uint64_t default_seed = 67280421310721ull;
  /// A generator seeded with default_seed.
  generator() noexcept = default;
  /// A generator seeded with seed.
  explicit generator(std::uint64_t seed) noexcept : seed_(seed) {}
  /// A copy of other's seed and offset.
  generator(const generator& other) noexcept {
    const std::lock_guard lock(other.mutex_);
    seed_ = other.seed_;
    offset_ = other.offset_;
  }
  /// Takes other's seed and offset.
  generator& operator=(const generator& other) noexcept {
    if (this == &other) return *this;
    std::uint64_t s = 0, o = 0;
    {
      const std::lock_guard lock(other.mutex_);
      s = other.seed_;
      o = other.offset_;
    }
    const std::lock_guard lock(mutex_);
    seed_ = s;
    offset_ = o;
    return *this;
  }
  ~generator() = default;

  /// Restarts the stream from seed (offset 0); returns *this.
  generator& manual_seed(std::uint64_t seed) noexcept {
    const std::lock_guard lock(mutex_);
    seed_ = seed;
    offset_ = 0;
    return *this;
  }
  /// Seeds from a non-deterministic source (std::random_device) and returns the seed.
  std::uint64_t seed();
  /// The seed the stream started from.
  std::uint64_t initial_seed() const noexcept {
    const std::lock_guard lock(mutex_);
    return seed_;
  }
  /// How many 128-bit blocks the stream has handed out.
  std::uint64_t get_offset() const noexcept {
    const std::lock_guard lock(mutex_);
    return offset_;
  }
  /// Moves the stream to block offset; returns *this.
  generator& set_offset(std::uint64_t offset) noexcept {
    const std::lock_guard lock(mutex_);
    offset_ = offset;
    return *this;
  }

 private:
  friend struct detail::generator_access;
  mutable std::mutex mutex_;
  std::uint64_t seed_ = default_seed;
  std::uint64_t offset_ = 0;
};

/// The process-wide generator the sampling functions use when given none.
generator& default_generator() noexcept;
/// Seeds the default generator (torch.manual_seed); returns it.
generator& manual_seed(std::uint64_t seed) noexcept;
/// Seeds the default generator non-deterministically and returns the seed (torch.seed).
std::uint64_t seed();
/// The default generator's seed (torch.initial_seed).
std::uint64_t initial_seed() noexcept;
}  // namespace strata

namespace strata::detail {
/// The state a call draws from: the key and the first of the blocks it reserved.
struct philox_stream {
  std::array<std::uint32_t, 2> key;
  std::uint64_t first;
};
/// Reserves `blocks` consecutive counters of g under its lock.
struct generator_access {
  static philox_stream reserve(generator& g, std::uint64_t blocks) noexcept {
    const std::lock_guard lock(g.mutex_);
    const philox_stream s{{static_cast<std::uint32_t>(g.seed_), static_cast<std::uint32_t>(g.seed_ >> 32)}, g.offset_};
    g.offset_ += blocks;
    return s;
  }
};

// Samplers, compiled once per dtype (src/random.cpp); each checks the dtype and its
// arguments with PyTorch's messages and writes every element of t by logical index.
/// uniform_(t, from, to).
template <element T>
void uniform_into(const Tensor<T>& t, double from, double to, generator& g);
/// t = mean + std * N(0, 1) with tensor operands (broadcast to t) where given, else the
/// scalars; a complex t gets N(0, 1/2) in each part, a scalar mean in both parts.
template <element T>
void normal_into(const Tensor<T>& t, const Tensor<T>* mean, const Tensor<real_t<T>>* std, double mean_value,
                 double std_value, generator& g);
/// random_(t, low, high): integers in [low, high).
template <element T>
void randint_into(const Tensor<T>& t, std::int64_t low, std::int64_t high, generator& g);
/// t = 1 with probability p, else 0.
template <element T>
void bernoulli_into(const Tensor<T>& t, double p, generator& g);
/// A tensor of p's sizes: 1 with probability p[i], else 0 (recorded, zero gradient).
template <element T>
Tensor<T> bernoulli_tensor(const Tensor<T>& p, generator& g);
/// A random permutation of 0..n-1.
template <element T>
Tensor<T> randperm_n(std::int64_t n, generator& g);
/// Throws PyTorch's errors for a std tensor that is complex or has an element < 0 (or NaN).
template <element U>
void check_std(const Tensor<U>& std);
/// Records out as sampled from the given parameter tensors (normal's mean and std,
/// bernoulli's p): zero gradients, as PyTorch's NormalBackward and BernoulliBackward.
template <element T>
void record_sampled(Tensor<T>& out, const Tensor<T>* a, const Tensor<T>* b);
/// std as the real type of T (its own handle when it already is).
template <element T, element U>
Tensor<real_t<T>> std_as(const Tensor<U>& std) {
  if constexpr (is_complex(dtype_v<U>)) return {};  // refused by check_std before use
  else return std.template to<real_t<T>>();
}
}  // namespace strata::detail

export namespace strata {
/// Uniform samples in [0, 1) (floating and complex T; each part of a complex in [0, 1)).
template <element T = float>
Tensor<T> rand(int_list sizes, generator& gen = default_generator()) {
  Tensor<T> t = empty<T>(sizes);
  detail::uniform_into<T>(t, 0, 1, gen);
  return t;
}
/// Standard normal samples (floating and complex T; complex parts each N(0, 1/2)).
template <element T = float>
Tensor<T> randn(int_list sizes, generator& gen = default_generator()) {
  Tensor<T> t = empty<T>(sizes);
  detail::normal_into<T>(t, nullptr, nullptr, 0, 1, gen);
  return t;
}
/// Integers uniform in [low, high), stored as T (any integer or floating T).
template <element T = std::int64_t>
Tensor<T> randint(std::int64_t low, std::int64_t high, int_list sizes, generator& gen = default_generator()) {
  Tensor<T> t = empty<T>(sizes);
  detail::randint_into<T>(t, low, high, gen);
  return t;
}
/// Integers uniform in [0, high).
template <element T = std::int64_t>
Tensor<T> randint(std::int64_t high, int_list sizes, generator& gen = default_generator()) {
  return randint<T>(0, high, sizes, gen);
}
/// Normal samples with the given mean and standard deviation.
template <element T = float>
Tensor<T> normal(double mean, double std, int_list sizes, generator& gen = default_generator()) {
  Tensor<T> t = empty<T>(sizes);
  detail::normal_into<T>(t, nullptr, nullptr, mean, std, gen);
  return t;
}
/// Normal samples, element i with mean[i] and std[i] (broadcast); mean's dtype; std real.
template <element T, element U>
Tensor<T> normal(const Tensor<T>& mean, const Tensor<U>& std, generator& gen = default_generator()) {
  detail::check_std(std);
  const Tensor<detail::real_t<T>> s = detail::std_as<T>(std);
  Tensor<T> t = empty<T>(broadcast_shapes(mean.sizes(), s.sizes()));
  detail::normal_into<T>(t, &mean, &s, 0, 1, gen);
  if constexpr (std::is_same_v<T, U>) detail::record_sampled<T>(t, &mean, &std);
  else detail::record_sampled<T>(t, &mean, nullptr);
  return t;
}
/// Normal samples of mean's sizes and dtype, element i with mean[i] and std.
template <element T>
Tensor<T> normal(const Tensor<T>& mean, double std, generator& gen = default_generator()) {
  Tensor<T> t = empty<T>(mean.sizes());
  detail::normal_into<T>(t, &mean, nullptr, 0, std, gen);
  detail::record_sampled<T>(t, &mean, nullptr);
  return t;
}
/// Normal samples of std's sizes and dtype, element i with mean and std[i].
template <element U>
Tensor<U> normal(double mean, const Tensor<U>& std, generator& gen = default_generator()) {
  detail::check_std(std);
  Tensor<U> t = empty<U>(std.sizes());
  if constexpr (!is_complex(dtype_v<U>)) {
    detail::normal_into<U>(t, nullptr, &std, mean, 1, gen);
    detail::record_sampled<U>(t, nullptr, &std);
  }
  return t;
}
/// normal(mean, std) where mean or std is a lazy expression (evaluated first).
template <tensor_like M, tensor_like S>
  requires(detail::lazy<M> || detail::lazy<S>)
auto normal(const M& mean, const S& std, generator& gen = default_generator()) {
  return normal(Tensor<detail::value_t<M>>(detail::as_tensor(mean)), Tensor<detail::value_t<S>>(detail::as_tensor(std)), gen);
}
/// normal(mean, std) with a lazy expression of means.
template <detail::lazy M>
auto normal(const M& mean, double std, generator& gen = default_generator()) { return normal(mean.eval(), std, gen); }
/// normal(mean, std) with a lazy expression of standard deviations.
template <detail::lazy S>
auto normal(double mean, const S& std, generator& gen = default_generator()) { return normal(mean, std.eval(), gen); }
/// Fills t (any view) with uniform samples in [from, to); returns t.
template <element T>
Tensor<T> uniform_(const Tensor<T>& t, double from = 0, double to = 1, generator& gen = default_generator()) {
  detail::uniform_into<T>(t, from, to, gen);
  return t;
}
/// Fills t (any view) with normal samples; returns t.
template <element T>
Tensor<T> normal_(const Tensor<T>& t, double mean = 0, double std = 1, generator& gen = default_generator()) {
  detail::normal_into<T>(t, nullptr, nullptr, mean, std, gen);
  return t;
}
/// 1 with probability p[i], else 0, in p's dtype (float, double, bfloat16, float128); every
/// p[i] must be in [0, 1].
template <tensor_like P>
Tensor<detail::value_t<P>> bernoulli(const P& p, generator& gen = default_generator()) {
  return detail::bernoulli_tensor<detail::value_t<P>>(detail::as_tensor(p), gen);
}
/// A tensor like t (its sizes and dtype): 1 with probability p, else 0.
template <tensor_like X>
Tensor<detail::value_t<X>> bernoulli(const X& t, double p, generator& gen = default_generator()) {
  using T = detail::value_t<X>;
  Tensor<T> out = empty<T>(t.sizes());
  detail::bernoulli_into<T>(out, p, gen);
  return out;
}
/// A random permutation of 0..n-1.
template <element T = std::int64_t>
Tensor<T> randperm(std::int64_t n, generator& gen = default_generator()) {
  return detail::randperm_n<T>(n, gen);
}
/// rand with t's sizes and dtype.
template <tensor_like X>
auto rand_like(const X& t, generator& gen = default_generator()) { return rand<detail::value_t<X>>(t.sizes(), gen); }
/// randn with t's sizes and dtype.
template <tensor_like X>
auto randn_like(const X& t, generator& gen = default_generator()) { return randn<detail::value_t<X>>(t.sizes(), gen); }
/// randint(0, high) with t's sizes and dtype.
template <tensor_like X>
auto randint_like(const X& t, std::int64_t high, generator& gen = default_generator()) {
  return randint<detail::value_t<X>>(0, high, t.sizes(), gen);
}
/// randint(low, high) with t's sizes and dtype.
template <tensor_like X>
auto randint_like(const X& t, std::int64_t low, std::int64_t high, generator& gen = default_generator()) {
  return randint<detail::value_t<X>>(low, high, t.sizes(), gen);
}
}  // namespace strata

// ---- compiled once per dtype (src/random.cpp) ----
#define STRATA_RANDOM_INSTANCES(T)                                                                             \
  namespace detail {                                                                                           \
  extern template void uniform_into<T>(const Tensor<T>&, double, double, generator&);                          \
  extern template void normal_into<T>(const Tensor<T>&, const Tensor<T>*, const Tensor<real_t<T>>*, double,     \
                                      double, generator&);                                                     \
  extern template void randint_into<T>(const Tensor<T>&, std::int64_t, std::int64_t, generator&);              \
  extern template void bernoulli_into<T>(const Tensor<T>&, double, generator&);                                \
  extern template Tensor<T> bernoulli_tensor<T>(const Tensor<T>&, generator&);                                 \
  extern template Tensor<T> randperm_n<T>(std::int64_t, generator&);                                           \
  extern template void check_std<T>(const Tensor<T>&);                                                         \
  extern template void record_sampled<T>(Tensor<T>&, const Tensor<T>*, const Tensor<T>*);                       \
  }
namespace strata {
STRATA_FOR_EACH_DTYPE(STRATA_RANDOM_INSTANCES)
}  // namespace strata
#undef STRATA_RANDOM_INSTANCES
