// SPDX-License-Identifier: MIT
// strata.manip's operators, instantiated once per dtype at the end.
//
// Every copying operator computes on detached inputs (so that its internal views and copies
// record nothing) and then records one node whose backward is written with the same
// operators: cat -> narrow, flip -> flip, roll -> roll back, repeat -> a sum over the repeat
// dims, constant pad -> pad by the negated amounts, reflect/replicate pad and
// repeat_interleave with a tensor -> a scatter-add along the same index tables.
module;
#include "dtype_list.hpp"
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>
module strata.manip;
import strata.graph;
import strata.expr;

namespace strata::detail {
namespace {
std::string str(std::int64_t v) { return std::to_string(v); }


// How PyTorch prints an empty tensor inside a message: "[ torch.FloatTensor{2,0} ]" for the
// types with a legacy tensor class, "[ CPUComplexFloatType{2,0} ]" for the others.
std::string empty_tensor_repr(dtype t, int_list sizes) {
  std::string s;
  for (std::size_t i = 0; i < sizes.size(); ++i) s += (i ? "," : "") + str(sizes[i]);
  const bool legacy = t != dtype::bool_ && t != dtype::bfloat16 && !is_complex(t) && t != dtype::float128;
  const std::string name(scalar_type_name(t));
  return legacy ? "[ torch." + name + "Tensor{" + s + "} ]" : "[ CPU" + name + "Type{" + s + "} ]";
}


// A dim of t, wrapped; a 0-dim tensor has none (PyTorch's wrap_scalar=false message).
std::int64_t dim_of(std::int64_t ndim, std::int64_t dim) {
  if (ndim == 0) throw index_error("Dimension specified as " + str(dim) + " but tensor has no dimensions");
  return wrap_dim(dim, ndim);
}

// ---- autograd: strata.tensor's record_function; one-input operations through this ----
template <element T>
void record(Tensor<T>& out, const Tensor<T>& input, std::function<Tensor<T>(const Tensor<T>&)> backward) {
  const Tensor<T> in[1] = {input};
  record_function<T>(out, in, [b = std::move(backward)](const Tensor<T>& g, std::size_t) { return b(g); });
}

// ---- copies on the engine ----
// Copies the elements at `from` (element strides `strides`, any sign) into dst, a fresh
// tensor of the same sizes: one planned, threaded engine loop (a copy's unit-stride rows are
// moved by memmove, its strided ones gathered or transposed by the staging executor).
template <element T>
void copy_strided(const Tensor<T>& dst, const T* from, int_list strides) {
  if (dst.numel() == 0) return;
  const loop_operand ops[2] = {{reinterpret_cast<char*>(dst.data_ptr()), dst.strides(), sizeof(T)},
                               {reinterpret_cast<char*>(const_cast<T*>(from)), strides, sizeof(T)}};
  const bool flat = dst.is_contiguous() && is_contiguous(dst.sizes(), strides);
  const leaf_expr<T> e{{}, dst};  // reads operand 1 only; the handle is not used
  run_kernel<T>(flat ? flat_plan(dst.numel(), ops) : make_plan(dst.sizes(), ops), e);
}
// dst = src broadcast to dst's sizes (dst fresh, so no overlap and nothing to record).
template <element T>
void copy_into(const Tensor<T>& dst, const Tensor<T>& src) {
  copy_strided(dst, src.data_ptr(), broadcast_strides(src.sizes(), src.strides(), dst.sizes()));
}

// ---- index tables: out[o] = in[sum over d of table[d][o_d]] (element offsets into in) ----
using tables = std::vector<std::vector<std::int64_t>>;

// Tables for a view (sizes/strides of in) read through per-dim maps (an empty map: identity).
tables make_tables(int_list out_sizes, int_list in_strides, const std::vector<std::vector<std::int64_t>>& maps) {
  tables t(out_sizes.size());
  for (std::size_t d = 0; d < out_sizes.size(); ++d) {
    t[d].resize(static_cast<std::size_t>(out_sizes[d]));
    for (std::int64_t o = 0; o < out_sizes[d]; ++o)
      t[d][static_cast<std::size_t>(o)] = (maps[d].empty() ? o : maps[d][static_cast<std::size_t>(o)]) * in_strides[d];
  }
  return t;
}

// Calls f(o, k) for every element o of a contiguous walk over sizes, k its table offset.
template <class F>
void walk_tables(int_list sizes, const tables& t, F f) {
  const std::int64_t numel = numel_of(sizes);
  if (numel == 0) return;
  const std::size_t nd = sizes.size();
  if (nd == 0) {
    f(0, 0);
    return;
  }
  const std::vector<std::int64_t>& last = t[nd - 1];
  const std::int64_t n = sizes[nd - 1];
  dim_vector idx(nd, 0);
  std::int64_t base = 0;
  for (std::size_t d = 0; d + 1 < nd; ++d) base += t[d][0];
  for (std::int64_t o = 0; o < numel; o += n) {
    for (std::int64_t j = 0; j < n; ++j) f(o + j, base + last[static_cast<std::size_t>(j)]);
    for (std::size_t d = nd - 1; d-- > 0;) {  // the odometer over the outer dims
      base -= t[d][static_cast<std::size_t>(idx[d])];
      if (++idx[d] < sizes[d]) {
        base += t[d][static_cast<std::size_t>(idx[d])];
        break;
      }
      idx[d] = 0;
      base += t[d][0];
    }
  }
}

// A fresh contiguous tensor of `sizes` gathered from src through per-dim maps.
template <element T>
Tensor<T> gather(const Tensor<T>& src, int_list sizes, const std::vector<std::vector<std::int64_t>>& maps) {
  Tensor<T> out = empty<T>(sizes);
  const tables t = make_tables(sizes, src.strides(), maps);
  T* o = out.data_ptr();
  const T* in = src.data_ptr();
  walk_tables(sizes, t, [&](std::int64_t i, std::int64_t k) { o[i] = in[k]; });
  return out;
}

// The gradient of gather: zeros of the source's sizes with every element of g added where
// it was read from.
template <element T>
Tensor<T> scatter_add(const Tensor<T>& g, int_list src_sizes, const std::vector<std::vector<std::int64_t>>& maps) {
  Tensor<T> out = zeros<T>(src_sizes);
  const Tensor<T> gc = g.contiguous();
  const tables t = make_tables(gc.sizes(), out.strides(), maps);
  T* o = out.data_ptr();
  const T* in = gc.data_ptr();
  walk_tables(gc.sizes(), t, [&](std::int64_t i, std::int64_t k) {
    o[k] = convert<T>(static_cast<compute_t<T>>(o[k]) + static_cast<compute_t<T>>(in[i]));
  });
  return out;
}
}  // namespace

void throw_scalar_overflow(dtype t) {
  throw error("value cannot be converted to type " + std::string(c10_type_name(t)) + " without overflow");
}

// ---- linspace and logspace ----
namespace {
// PyTorch 1.13's linspace kernel (its AVX2 build, which a CPU without AVX-512 use runs and
// which the PyTorch used for strata's goldens runs): element i < steps/2 is
// start + step * i, the others end - step * (steps - 1 - i), each computed with one fused
// multiply-add (GCC contracts them); whole pairs of 256-bit vectors are filled from the
// first element of each vector by lane k as base + k * step (not contracted), and the tail
// is element by element. Integers take a double step and truncate; float16 and bfloat16
// round every operation. This is bitwise torch's result when it runs the range in one
// chunk (steps <= 32768, or one thread).
template <class F>
struct float_model {  // float, double (and float128, without the vector pattern)
  F start, end, step;
  std::int64_t n;
  float_model(F s, F e, std::int64_t steps) : start(s), end(e), step((e - s) / static_cast<F>(steps - 1)), n(steps) {}
  F first(std::int64_t i) const {
    if constexpr (std::is_same_v<F, float128>) return start + step * static_cast<F>(i);
    else return std::fma(step, static_cast<F>(i), start);
  }
  F second(std::int64_t i) const {
    if constexpr (std::is_same_v<F, float128>) return end - step * static_cast<F>(n - 1 - i);
    else return std::fma(-step, static_cast<F>(n - 1 - i), end);
  }
  F lane(F base, std::int64_t k) const {
#pragma clang fp contract(off)
    return base + static_cast<F>(k) * step;
  }
};
template <class H>
struct half_model {  // float16, bfloat16: each operation rounds to H
  H start, end, step;
  std::int64_t n;
  static float f(H h) { return static_cast<float>(h); }
  static H h(std::int64_t i) { return H(static_cast<float>(i)); }
  half_model(H s, H e, std::int64_t steps)
      : start(s), end(e), step(H(f(H(f(e) - f(s))) / f(h(steps - 1)))), n(steps) {}
  H first(std::int64_t i) const { return H(f(start) + f(H(f(step) * f(h(i))))); }
  H second(std::int64_t i) const { return H(f(end) - f(H(f(step) * f(h(n - 1 - i))))); }
  H lane(H base, std::int64_t k) const { return H(f(base) + f(H(f(h(k)) * f(step)))); }
};
template <class I>
struct int_model {  // integers: a double step, truncated results
  double start, end, step;
  std::int64_t n;
  int_model(I s, I e, std::int64_t steps)
      : start(static_cast<double>(s)), end(static_cast<double>(e)), step((end - start) / static_cast<double>(steps - 1)),
        n(steps) {}
  I first(std::int64_t i) const { return convert<I>(std::fma(step, static_cast<double>(i), start)); }
  I second(std::int64_t i) const { return convert<I>(std::fma(-step, static_cast<double>(n - 1 - i), end)); }
  I lane(I base, std::int64_t k) const {
#pragma clang fp contract(off)
    return convert<I>(static_cast<double>(base) + static_cast<double>(k) * step);
  }
};

// Writes the n values of model m to out[0], out[stride], ...; width: elements per vector.
template <class M, class V>
void run_model(const M& m, V* out, std::int64_t stride, std::int64_t width) {
  const std::int64_t n = m.n, half = n / 2;
  const auto value = [&](std::int64_t i) { return i < half ? m.first(i) : m.second(i); };
  std::int64_t i = 0;
  for (; i + 2 * width <= n; i += 2 * width)
    for (std::int64_t v = i; v < i + 2 * width; v += width) {
      const V base = value(v);
      for (std::int64_t k = 0; k < width; ++k) out[(v + k) * stride] = m.lane(base, k);
    }
  for (; i < n; ++i) out[i * stride] = value(i);
}
}  // namespace

template <element T>
Tensor<T> linspace_values(T start, T end, std::int64_t steps) {
  if (steps < 0) throw error("number of steps must be non-negative");
  Tensor<T> out = empty<T>({steps});
  T* p = out.data_ptr();
  if (steps == 0) return out;
  if (steps == 1) {
    p[0] = start;
    return out;
  }
  constexpr std::int64_t width = 32 / static_cast<std::int64_t>(sizeof(T));  // one 256-bit vector
  if constexpr (is_complex_v<T>) {  // real and imaginary parts follow the real rule
    using F = typename T::value_type;
    auto* parts = reinterpret_cast<F*>(p);
    run_model(float_model<F>(start.real(), end.real(), steps), parts, 2, width);
    run_model(float_model<F>(start.imag(), end.imag(), steps), parts + 1, 2, width);
  } else if constexpr (is_reduced_float_v<T>) {
    run_model(half_model<T>(start, end, steps), p, 1, width);
  } else if constexpr (std::is_integral_v<T>) {
    run_model(int_model<T>(start, end, steps), p, 1, width);
  } else {
    run_model(float_model<T>(start, end, steps), p, 1, width);
  }
  return out;
}

template <element T>
Tensor<T> logspace_values(T start, T end, std::int64_t steps, double base,
                          std::conditional_t<is_std_complex_v<T>, std::complex<double>, double> first) {
#pragma clang fp contract(off)
  // PyTorch 1.13's logspace (not a vector kernel): pow(base, x) with x counted from both ends,
  // the step from the difference of the converted ends.
  if (steps < 0) throw error("number of steps must be non-negative");
  Tensor<T> out = empty<T>({steps});
  T* p = out.data_ptr();
  if (steps == 0) return out;
  if (steps == 1) {
    p[0] = convert<T>(std::pow(base, first));
    return out;
  }
  const std::int64_t half = steps / 2;
  if constexpr (is_complex_v<T>) {
    using F = typename T::value_type;
    // c10's complex division by (steps - 1): each part times 1.0 / (steps - 1) in double.
    const double scale = 1.0 / static_cast<double>(static_cast<F>(steps - 1));
    const T diff = end - start;
    const T step(static_cast<F>(static_cast<double>(diff.real()) * scale),
                 static_cast<F>(static_cast<double>(diff.imag()) * scale));
    const T b(static_cast<F>(base), F(0));
    for (std::int64_t i = 0; i < steps; ++i) {
      const auto k = static_cast<F>(i < half ? i : steps - i - 1);
      const T x = i < half ? T(start.real() + step.real() * k, start.imag() + step.imag() * k)
                           : T(end.real() - step.real() * k, end.imag() - step.imag() * k);
      p[i] = std::pow(b, x);
    }
  } else {
    double diff = 0;
    if constexpr (std::is_integral_v<T>)  // the difference of the converted ends, as scalar_t
      diff = static_cast<double>(static_cast<T>(static_cast<std::uint64_t>(end) - static_cast<std::uint64_t>(start)));
    else
      diff = static_cast<double>(convert<T>(static_cast<compute_t<T>>(end) - static_cast<compute_t<T>>(start)));
    const double step = diff / static_cast<double>(steps - 1);
    const auto s = static_cast<double>(start), e = static_cast<double>(end);
    for (std::int64_t i = 0; i < steps; ++i) {
      const double x = i < half ? s + step * static_cast<double>(i) : e - step * static_cast<double>(steps - i - 1);
      p[i] = convert<T>(std::pow(base, x));
    }
  }
  return out;
}

// ---- tril, triu ----
namespace {
template <element T>
Tensor<T> triangle(const Tensor<T>& t, std::int64_t diagonal, bool lower) {
  if (t.dim() == 0) throw index_error("Dimension specified as -2 but tensor has no dimensions");
  wrap_dim(-2, t.dim());  // a 1-D tensor: PyTorch's range message
  const std::int64_t m = t.size(-2), n = t.size(-1);
  Tensor<T> out = empty<T>(t.sizes());
  // column - row, broadcast over the batch dims: one fused pass.
  const auto offset = arange<std::int64_t>(n) - arange<std::int64_t>(m).view({m, 1});
  const T zero = convert<T>(0);
  if (lower) out.assign(where(offset <= diagonal, t.detach(), zero));
  else out.assign(where(offset >= diagonal, t.detach(), zero));
  record<T>(out, t, [diagonal, lower](const Tensor<T>& g) { return triangle(g, diagonal, lower); });
  return out;
}
}  // namespace


// ---- flip ----
namespace {
// A copy of src with dims where flipped[d] reversed: one engine copy from a view with
// negated strides (the engine walks any strides; only the public views keep them positive).
template <element T>
Tensor<T> flip_copy(const Tensor<T>& src, const std::vector<bool>& flipped) {
  Tensor<T> out = empty<T>(src.sizes());
  if (out.numel() == 0) return out;
  dim_vector strides(src.strides());
  const char* from = reinterpret_cast<const char*>(src.data_ptr());
  for (std::size_t d = 0; d < flipped.size(); ++d) {
    if (!flipped[d]) continue;
    from += (src.sizes()[d] - 1) * strides[d] * static_cast<std::int64_t>(sizeof(T));
    strides[d] = -strides[d];
  }
  copy_strided(out, reinterpret_cast<const T*>(from), strides);
  return out;
}
}  // namespace

template <element T>
Tensor<T> flip_impl(const Tensor<T>& t, int_list dims) {
  std::vector<bool> flipped(static_cast<std::size_t>(t.dim()), false);
  std::vector<bool> seen(static_cast<std::size_t>(std::max<std::int64_t>(t.dim(), 1)), false);
  for (const std::int64_t d : dims) {
    const auto w = static_cast<std::size_t>(wrap_dim(d, t.dim()));
    if (seen[w]) throw error("dim " + str(static_cast<std::int64_t>(w)) + " appears multiple times in the list of dims");
    seen[w] = true;
    if (w < flipped.size()) flipped[w] = true;
  }
  Tensor<T> out = flip_copy(t.detach(), flipped);
  record<T>(out, t, [flipped](const Tensor<T>& g) { return flip_copy(g, flipped); });
  return out;
}

// ---- roll ----
namespace {
// Rolls src by start[d] along each dim into a fresh tensor: out[0, n - s) = in[s, n) and
// out[n - s, n) = in[0, s) along every rolled dim, one engine copy per combination of halves.
template <element T>
Tensor<T> roll_copy(const Tensor<T>& src, const dim_vector& start) {
  Tensor<T> out = empty<T>(src.sizes());
  if (out.numel() == 0) return out;
  dim_vector rolled;
  for (std::size_t d = 0; d < start.size(); ++d)
    if (start[d] != 0) rolled.push_back(static_cast<std::int64_t>(d));
  for (std::uint64_t mask = 0; mask < (std::uint64_t{1} << rolled.size()); ++mask) {
    Tensor<T> to = out, from = src;
    bool empty_piece = false;
    for (std::size_t j = 0; j < rolled.size(); ++j) {
      const std::int64_t d = rolled[j], n = src.size(d), s = start[static_cast<std::size_t>(d)];
      const bool tail = (mask >> j) & 1u;  // the part that wraps around to the front of in
      const std::int64_t len = tail ? s : n - s;
      empty_piece = empty_piece || len == 0;
      to = to.narrow(d, tail ? n - s : 0, len);
      from = from.narrow(d, tail ? 0 : s, len);
    }
    if (!empty_piece) copy_into(to, from);
  }
  return out;
}
// Where each dim's rolled elements start: ((n - shift) mod n), Python's modulo.
std::int64_t roll_start(std::int64_t n, std::int64_t shift) {
  const std::int64_t s = shift % n;
  return ((n - s) % n + n) % n;
}
template <element T>
Tensor<T> roll_dims(const Tensor<T>& src, int_list sizes, const dim_vector& shift) {
  dim_vector start(sizes.size(), 0);
  for (std::size_t d = 0; d < sizes.size(); ++d) start[d] = sizes[d] == 0 ? 0 : roll_start(sizes[d], shift[d]);
  return roll_copy(src, start);
}
template <element T>
Tensor<T> roll_flat(const Tensor<T>& src, std::int64_t shift) {
  const std::int64_t n = src.numel();
  const Tensor<T> flat = src.reshape({n});
  const dim_vector start{n == 0 ? 0 : roll_start(n, shift)};
  return roll_copy(flat, start).view(src.sizes());
}
}  // namespace

template <element T>
Tensor<T> roll_list(const Tensor<T>& t, int_list shifts, int_list dims) {
  if (dims.size() != 1 || shifts.size() != 1) {
    if (shifts.empty()) throw error("`shifts` required");
    if (dims.empty() && shifts.size() == 1) {
      const std::int64_t s = shifts[0];
      Tensor<T> out = roll_flat(t.detach(), s);
      record<T>(out, t, [s](const Tensor<T>& g) { return roll_flat(g, -s); });
      return out;
    }
    if (shifts.size() != dims.size())
      throw error("shifts and dimensions must align. shifts: " + str(static_cast<std::int64_t>(shifts.size())) +
                  ", dims:" + str(static_cast<std::int64_t>(dims.size())));
  }
  // PyTorch rolls one dim at a time and returns an empty tensor before looking at the dim.
  if (t.numel() == 0) return t.clone();
  dim_vector shift(static_cast<std::size_t>(t.dim()), 0);
  for (std::size_t k = 0; k < dims.size(); ++k) {
    const auto d = static_cast<std::size_t>(dim_of(t.dim(), dims[k]));
    shift[d] = (shift[d] + shifts[k] % t.sizes()[d]) % t.sizes()[d];
  }
  Tensor<T> out = roll_dims(t.detach(), t.sizes(), shift);
  dim_vector back(shift.size());
  for (std::size_t d = 0; d < shift.size(); ++d) back[d] = -shift[d];
  record<T>(out, t, [back, sizes = t.sizes().vec()](const Tensor<T>& g) { return roll_dims(g, sizes, back); });
  return out;
}

// ---- repeat, tile, repeat_interleave ----
template <element T>
Tensor<T> repeat_impl(const Tensor<T>& t, int_list repeats) {
  if (static_cast<std::int64_t>(repeats.size()) < t.dim())
    throw error("Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor");
  const std::size_t lead = repeats.size() - static_cast<std::size_t>(t.dim());
  dim_vector padded(lead, 1), target, pairs, summed;
  for (const std::int64_t s : t.sizes()) padded.push_back(s);
  for (std::size_t i = 0; i < repeats.size(); ++i) {
    std::int64_t n = 0;
    if (__builtin_mul_overflow(padded[i], repeats[i], &n))
      throw shape_error("repeat: the result's size overflows int64: " + to_string(padded) + " x " + to_string(repeats));
    target.push_back(n);
    pairs.push_back(repeats[i]);  // [r0, s0, r1, s1, ...]: the result viewed by repeat and element
    pairs.push_back(padded[i]);
    summed.push_back(static_cast<std::int64_t>(2 * i));
  }
  Tensor<T> out = empty<T>(target);  // PyTorch's message for a negative repeat
  if (out.numel() > 0) {
    Tensor<T> x = t.detach();
    for (std::size_t i = 0; i < lead; ++i) x = x.unsqueeze(0);
    for (std::size_t i = 0; i < repeats.size(); ++i) x = x.unsqueeze(static_cast<std::int64_t>(2 * i));
    copy_into(out.view(pairs), x.expand(pairs));  // one copy from a stride-0 view
  }
  record<T>(out, t, [pairs, summed, sizes = t.sizes().vec()](const Tensor<T>& g) {
    if (summed.empty()) return g.clone();
    return Tensor<T>(strata::sum(g.reshape(pairs), summed)).reshape(sizes);
  });
  return out;
}

template <element T>
Tensor<T> tile_impl(const Tensor<T>& t, int_list reps) {
  if (t.dim() <= static_cast<std::int64_t>(reps.size())) return repeat_impl(t, reps);
  dim_vector r(static_cast<std::size_t>(t.dim()) - reps.size(), 1);
  for (const std::int64_t x : reps) r.push_back(x);
  return repeat_impl(t, r);
}

template <element T>
Tensor<T> repeat_interleave_by(const Tensor<T>& t, std::int64_t repeats, std::optional<std::int64_t> dim) {
  const Tensor<T> x = dim ? t.detach() : t.detach().reshape({-1});
  const std::int64_t d = dim ? dim_of(x.dim(), *dim) : 0;
  if (repeats < 0) throw error("repeats can not be negative");
  dim_vector sizes(x.sizes()), pairs(x.sizes());
  const std::int64_t n = sizes[static_cast<std::size_t>(d)];
  if (__builtin_mul_overflow(n, repeats, &sizes[static_cast<std::size_t>(d)]))
    throw shape_error("repeat_interleave: the result's size overflows int64");
  pairs.insert(static_cast<std::size_t>(d) + 1, repeats);  // [..., n, repeats, ...]
  Tensor<T> out = empty<T>(sizes);
  if (out.numel() > 0) copy_into(out.view(pairs), x.unsqueeze(d + 1).expand(pairs));
  record<T>(out, t, [pairs, d, in_sizes = t.sizes().vec()](const Tensor<T>& g) {
    return Tensor<T>(strata::sum(g.reshape(pairs), {d + 1})).reshape(in_sizes);
  });
  return out;
}

namespace {
// The counts of a repeats tensor, checked (PyTorch's repeat_interleave(repeats)).
template <element I>
std::vector<std::int64_t> repeat_counts(const Tensor<I>& repeats) {
  std::vector<std::int64_t> c;
  for (const I v : repeats.to_vector()) {
    if (v < 0) throw error("repeats can not be negative");
    c.push_back(static_cast<std::int64_t>(v));
  }
  return c;
}
// 0, 0, 1, 2, 2, ...: index i repeated counts[i] times.
std::vector<std::int64_t> expand_counts(const std::vector<std::int64_t>& counts) {
  std::vector<std::int64_t> m;
  for (std::size_t i = 0; i < counts.size(); ++i) m.insert(m.end(), static_cast<std::size_t>(counts[i]), static_cast<std::int64_t>(i));
  return m;
}
}  // namespace

template <element T, element I>
Tensor<T> repeat_interleave_by(const Tensor<T>& t, const Tensor<I>& repeats, std::optional<std::int64_t> dim) {
  const Tensor<T> x = dim ? t.detach() : t.detach().reshape({-1});
  const auto size_along = [&] { return x.sizes()[static_cast<std::size_t>(dim ? dim_of(x.dim(), *dim) : 0)]; };
  std::vector<std::int64_t> counts;
  if (repeats.dim() == 0 || (repeats.dim() == 1 && repeats.size(0) == 1)) {
    const std::int64_t n = size_along();  // an empty dim takes no repeats (nor checks them)
    if (n > 0) counts.assign(static_cast<std::size_t>(n), repeat_counts(repeats.reshape({1}))[0]);
  } else if (repeats.dim() == 1) {
    if (repeats.size(0) != size_along()) throw error("repeats must have the same size as input along dim");
    counts = repeat_counts(repeats);
  } else {
    throw error("repeats must be 0-dim or 1-dim tensor");
  }
  const std::int64_t d = dim ? dim_of(x.dim(), *dim) : 0;
  std::vector<std::vector<std::int64_t>> maps(static_cast<std::size_t>(x.dim()));
  maps[static_cast<std::size_t>(d)] = expand_counts(counts);
  dim_vector sizes(x.sizes());
  sizes[static_cast<std::size_t>(d)] = static_cast<std::int64_t>(maps[static_cast<std::size_t>(d)].size());
  Tensor<T> out = gather(x, sizes, maps);
  record<T>(out, t, [maps, x_sizes = x.sizes().vec(), in_sizes = t.sizes().vec()](const Tensor<T>& g) {
    return scatter_add(g, x_sizes, maps).reshape(in_sizes);
  });
  return out;
}

template <element I>
Tensor<I> repeat_interleave_counts(const Tensor<I>& repeats) {
  if (repeats.dim() != 1) throw error("repeat_interleave only accept 1D vector as repeat");
  const std::vector<std::int64_t> m = expand_counts(repeat_counts(repeats));
  Tensor<I> out = empty<I>({static_cast<std::int64_t>(m.size())});
  for (std::size_t k = 0; k < m.size(); ++k) out.data_ptr()[k] = static_cast<I>(m[k]);
  return out;
}

// ---- pad ----
namespace {
// narrow with PyTorch 1.13's checks and messages (a negative length is its "exceeds" error).
template <element T>
Tensor<T> narrow_checked(const Tensor<T>& t, std::int64_t dim, std::int64_t start, std::int64_t length) {
  const std::int64_t size = t.size(dim);
  if (start != size) start = wrap_dim(start, size);
  if (length < 0 || start > size - length)
    throw shape_error("start (" + str(start) + ") + length (" + str(length) + ") exceeds dimension size (" + str(size) + ").");
  return t.narrow(dim, start, length);
}

// at::constant_pad_nd: negative pads crop (narrow), positive ones fill with value.
template <element T>
Tensor<T> constant_pad(const Tensor<T>& t, int_list p, T value) {
  const std::int64_t nd = t.dim(), k = static_cast<std::int64_t>(p.size() / 2), lead = nd - k;
  const auto at = [&](std::int64_t i) { return p[static_cast<std::size_t>(i)]; };
  Tensor<T> c = t;
  bool all_non_positive = true;
  for (std::int64_t i = lead; i < nd; ++i) {
    const std::int64_t before = at(2 * (nd - i - 1)), after = at(2 * (nd - i - 1) + 1);
    if (before < 0) c = narrow_checked(c, i, -before, c.size(i) + before);
    else if (before != 0) all_non_positive = false;
    if (after < 0) c = narrow_checked(c, i, 0, c.size(i) + after);
    else if (after != 0) all_non_positive = false;
  }
  if (all_non_positive) return c.clone();
  dim_vector sizes;
  for (std::int64_t i = 0; i < nd; ++i) {
    if (i < lead) {
      sizes.push_back(t.sizes()[static_cast<std::size_t>(i)]);
      continue;
    }
    const std::int64_t before = at(2 * (nd - i - 1)), after = at(2 * (nd - i - 1) + 1);
    const std::int64_t n = t.sizes()[static_cast<std::size_t>(i)] + before + after;
    if (n <= 0)
      throw shape_error("The input size " + str(t.sizes()[static_cast<std::size_t>(i)]) + ", plus negative padding " +
                        str(before) + " and " + str(after) +
                        " resulted in a negative output size, which is invalid. Check dimension " + str(i) +
                        " of your input.");
    sizes.push_back(n);
  }
  Tensor<T> out = full<T>(sizes, value);
  Tensor<T> inner = out;
  for (std::int64_t i = lead; i < nd; ++i) {
    const std::int64_t before = at(2 * (nd - i - 1)), after = at(2 * (nd - i - 1) + 1);
    if (before > 0) inner = inner.narrow(i, before, inner.size(i) - before);
    if (after > 0) inner = inner.narrow(i, 0, inner.size(i) - after);
  }
  copy_into(inner, c);
  return out;
}

// The index an element of a reflect- or replicate-padded dim reads (k: its position minus
// the left pad; n: the input's size).
std::int64_t reflect_index(std::int64_t k, std::int64_t n) { return k < 0 ? -k : k >= n ? 2 * (n - 1) - k : k; }
std::int64_t replicate_index(std::int64_t k, std::int64_t n) { return std::clamp<std::int64_t>(k, 0, n - 1); }

// PyTorch 1.13's checks of reflection_pad{1,2,3}d and replication_pad{1,2,3}d: k padded dims
// of a tensor with k + 1 or k + 2 dims.
void check_padding(bool reflect, std::int64_t k, int_list sizes, int_list p, dtype type) {
  const auto nd = static_cast<std::int64_t>(sizes.size());
  const auto size = [&](std::int64_t d) { return sizes[static_cast<std::size_t>(d)]; };
  const auto pads = [&](std::int64_t j) {  // (before, after) of padded dim j (0: the last)
    return std::pair{p[static_cast<std::size_t>(2 * j)], p[static_cast<std::size_t>(2 * j + 1)]};
  };
  // The padded dims must be non-empty, and the channel dim too; a batch dim may be empty.
  bool valid = true;
  for (std::int64_t d = nd == k + 2 ? 1 : 0; d < nd; ++d) valid = valid && size(d) != 0;
  if (reflect && k < 3) {
    // reflection_pad1d/2d check the dims after the first (the channel or batch dim).
    valid = true;
    for (std::int64_t d = 1; d < nd; ++d) valid = valid && size(d) != 0;
    if (!valid)
      throw shape_error(str(k + 1) + "D or " + str(k + 2) + "D (batch mode) tensor expected for input, but got: " +
                        empty_tensor_repr(type, sizes));
  } else if (!valid) {
    throw shape_error("Expected " + str(k + 1) + "D or " + str(k + 2) +
                      "D (batch mode) tensor with possibly 0 batch size and other non-zero dimensions for input, but "
                      "got: " + to_string(sizes));
  }
  if (reflect) {
    // "of input": the sizes for 1d and 3d; reflection_pad2d prints the number of dims.
    const std::string input = k == 2 ? str(nd) : to_string(sizes);
    for (std::int64_t j = 0; j < k; ++j) {
      const auto [before, after] = pads(j);
      const std::int64_t d = nd - 1 - j;
      if (!(before < size(d) && after < size(d)))
        throw shape_error("Argument #" + str(4 + 2 * j) +
                          ": Padding size should be less than the corresponding input dimension, but got: padding (" +
                          str(before) + ", " + str(after) + ") at dimension " + str(d) + " of input " + input);
    }
  }
  const auto out = [&](std::int64_t j) { return size(nd - 1 - j) + pads(j).first + pads(j).second; };
  bool any_positive = false;
  for (std::int64_t j = 0; j < k; ++j) any_positive = any_positive || out(j) >= 1;
  if (any_positive) return;
  const std::string w = str(size(nd - 1)), ow = str(out(0));
  if (k == 1) {
    if (reflect) throw shape_error("2input (W: " + w + ")is too small. Calculated output W: " + ow);
    throw shape_error("input (W: " + w + ") is too small. Calculated output W: " + ow);
  }
  const std::string h = str(size(nd - 2)), oh = str(out(1));
  if (k == 2) {
    if (reflect) throw shape_error("input (H: " + h + ", W: " + w + ")is too small. Calculated output H: " + oh + " W: " + ow);
    throw shape_error("input (H: " + h + ", W: " + w + " ) is too small. Calculated output H: " + oh + " W: " + ow);
  }
  throw shape_error("input (D: " + str(size(nd - 3)) + " H: " + h + ", W: " + w + ") is too small. Calculated output D: " +
                    str(out(2)) + " H: " + oh + " W: " + ow);
}

// Reflect or replicate padding of the last k = p.size() / 2 dims (PyTorch's checks first):
// fills maps[d] and returns the padded sizes.
dim_vector edge_maps(bool reflect, int_list in_sizes, int_list p, dtype type, std::vector<std::vector<std::int64_t>>& maps) {
  const auto nd = static_cast<std::int64_t>(in_sizes.size()), k = static_cast<std::int64_t>(p.size() / 2);
  check_padding(reflect, k, in_sizes, p, type);
  dim_vector sizes(in_sizes);
  for (std::int64_t j = 0; j < k; ++j) {
    const auto d = static_cast<std::size_t>(nd - 1 - j);
    const std::int64_t before = p[static_cast<std::size_t>(2 * j)], n = sizes[d];
    sizes[d] = n + before + p[static_cast<std::size_t>(2 * j + 1)];
    for (std::int64_t o = 0; o < sizes[d]; ++o)
      maps[d].push_back(reflect ? reflect_index(o - before, n) : replicate_index(o - before, n));
  }
  for (const std::int64_t n : sizes)  // reflection_pad2d resizes its output; the others allocate it
    if (n < 0 && reflect && k == 2) throw shape_error("numel: integer multiplication overflow");
  numel_of(sizes);  // PyTorch's message for a negative size
  return sizes;
}

// Circular padding of the last k dims of a tensor with k + 2 dims (any dtype, empty dims
// too): fills maps[d] and returns the padded sizes. As PyTorch 1.13's _pad_circular, negative
// pads crop first and the positive ones wrap around what is left, so a pad may be at most
// the cropped size (PyTorch then reads its own unwritten output, or refuses an overlap).
dim_vector circular_maps(int_list sizes, int_list p, std::vector<std::vector<std::int64_t>>& maps) {
  const auto nd = static_cast<std::int64_t>(sizes.size()), k = static_cast<std::int64_t>(p.size() / 2);
  if (nd != k + 2)
    throw shape_error("Invalid padding size, expected " + str(2 * nd - 4) + " but got " + str(2 * k));
  dim_vector out(sizes);
  for (std::int64_t d = 2; d < nd; ++d) {  // PyTorch checks from the first padded dim on
    const auto j = static_cast<std::size_t>(2 * (nd - 1 - d));
    const std::int64_t before = p[j], after = p[j + 1], n = sizes[static_cast<std::size_t>(d)];
    const std::int64_t size = n + before + after;
    if (before > n || after > n) throw shape_error("Padding value causes wrapping around more than once.");
    if (size < 0) throw shape_error("Negative padding value is resulting in an empty dimension");
    out[static_cast<std::size_t>(d)] = size;
    const std::int64_t start = std::max<std::int64_t>(-before, 0), lead = std::max<std::int64_t>(before, 0);
    const std::int64_t kept = n - start - std::max<std::int64_t>(-after, 0);  // the cropped size
    if (lead > kept || std::max<std::int64_t>(after, 0) > kept)
      throw shape_error("Padding value causes wrapping around more than once.");
    for (std::int64_t o = 0; o < size; ++o)
      maps[static_cast<std::size_t>(d)].push_back(start + ((o - lead) % kept + kept) % kept);
  }
  return out;
}

// The dtypes PyTorch 1.13's CPU kernels take (float128 too: strata's own); the kernel's name.
template <element T>
void check_padding_dtype(bool reflect, std::int64_t k) {
  constexpr bool base = std::is_floating_point_v<T> || is_complex_v<T> || std::is_same_v<T, float128>;
  const bool ok = base || (reflect && k == 3 && is_reduced_float_v<T>);
  if (ok) return;
  const std::string name = reflect ? (k == 3 ? "reflection_pad3d_cpu" : "reflection_pad" + str(k) + "d")
                                   : "replication_pad" + str(k) + "d_cpu";
  throw dtype_error("\"" + name + "\" not implemented for '" + std::string(scalar_type_name(dtype_v<T>)) + "'");
}
}  // namespace

template <element T>
Tensor<T> pad_impl(const Tensor<T>& t, int_list p, std::string_view mode, std::optional<double> value) {
  const bool reflect = mode == "reflect", circular = mode == "circular";
  if (mode != "constant" && !reflect && !circular && mode != "replicate")
    throw error("Unrecognised padding mode " + std::string(mode));
  const std::int64_t nd = t.dim();
  if (p.size() % 2 != 0) throw error("Padding length must be divisible by 2");
  if (static_cast<std::int64_t>(p.size()) > 2 * nd) throw error("Padding length too large");
  if (mode == "constant") {
    const T fill = scalar_to<T>(value.value_or(0.0));
    Tensor<T> out = constant_pad(t.detach(), p, fill);
    dim_vector back;
    for (const std::int64_t x : p) back.push_back(-x);
    record<T>(out, t, [back](const Tensor<T>& g) { return constant_pad(g, back, convert<T>(0)); });
    return out;
  }
  if (value && *value != 0)
    throw error("Padding mode \"" + std::string(mode) + "\" doesn't take in value argument");
  const auto k = static_cast<std::int64_t>(p.size() / 2);
  if (k < 1 || k > 3 || (nd != k + 1 && nd != k + 2))
    throw error("Only 2D, 3D, 4D, 5D padding with non-constant padding are supported for now");
  std::vector<std::vector<std::int64_t>> maps(static_cast<std::size_t>(nd));
  const dim_vector sizes =
      circular ? circular_maps(t.sizes(), p, maps) : edge_maps(reflect, t.sizes(), p, dtype_v<T>, maps);
  if (!circular) check_padding_dtype<T>(reflect, k);
  Tensor<T> out = gather(t.detach(), sizes, maps);
  record<T>(out, t, [maps, in_sizes = t.sizes().vec()](const Tensor<T>& g) { return scatter_add(g, in_sizes, maps); });
  return out;
}

// ---- joining ----
template <element T>
Tensor<T> cat_list(std::span<const Tensor<T>> ts, std::int64_t dim) {
  if (ts.empty()) throw error("torch.cat(): expected a non-empty list of Tensors");
  for (std::size_t i = 0; i < ts.size(); ++i)
    if (ts[i].dim() == 0)
      throw error("zero-dimensional tensor (at position " + str(static_cast<std::int64_t>(i)) + ") cannot be concatenated");
  // PyTorch's legacy rule: 1-D empty tensors are skipped (for the dim and the size checks).
  const auto skipped = [](const Tensor<T>& t) { return t.dim() == 1 && t.numel() == 0; };
  std::size_t first = 0;
  while (first < ts.size() && skipped(ts[first])) ++first;
  std::vector<std::int64_t> offsets(ts.size(), 0);
  dim_vector sizes{0};
  std::int64_t d = 0;
  if (first < ts.size()) {
    const Tensor<T>& ref = ts[first];
    d = wrap_dim(dim, ref.dim());
    sizes = dim_vector(ref.sizes());
    std::int64_t total = 0;
    for (std::size_t i = 0; i < ts.size(); ++i) {
      if (skipped(ts[i])) continue;
      if (ts[i].dim() != ref.dim())
        throw error("Tensors must have same number of dimensions: got " + str(ref.dim()) + " and " + str(ts[i].dim()));
      for (std::int64_t k = 0; k < ref.dim(); ++k)
        if (k != d && ts[i].size(k) != ref.size(k))
          throw error("Sizes of tensors must match except in dimension " + str(d) + ". Expected size " +
                      str(ref.size(k)) + " but got size " + str(ts[i].size(k)) + " for tensor number " +
                      str(static_cast<std::int64_t>(i)) + " in the list.");
      offsets[i] = total;
      total += ts[i].size(d);
    }
    sizes[static_cast<std::size_t>(d)] = total;
  }
  Tensor<T> out = empty<T>(sizes);
  for (std::size_t i = 0; i < ts.size(); ++i)  // one engine copy per input
    if (!skipped(ts[i]) && ts[i].numel() > 0) copy_into(out.narrow(d, offsets[i], ts[i].size(d)), ts[i].detach());
  std::vector<std::int64_t> lengths;
  for (const Tensor<T>& t : ts) lengths.push_back(skipped(t) ? -1 : t.size(d));
  record_function<T>(out, ts, [d, offsets, lengths](const Tensor<T>& g, std::size_t i) {
    return lengths[i] < 0 ? empty<T>({0}) : g.narrow(d, offsets[i], lengths[i]);
  });
  return out;
}

template <element T>
Tensor<T> stack_list(std::span<const Tensor<T>> ts, std::int64_t dim) {
  if (ts.empty()) throw error("stack expects a non-empty TensorList");
  const std::int64_t d = wrap_dim(dim, ts[0].dim() + 1);
  for (std::size_t i = 1; i < ts.size(); ++i)
    if (!(ts[i].sizes() == ts[0].sizes()))
      throw error("stack expects each tensor to be equal size, but got " + to_string(ts[0].sizes()) + " at entry 0 and " +
                  to_string(ts[i].sizes()) + " at entry " + str(static_cast<std::int64_t>(i)));
  std::vector<Tensor<T>> parts;
  for (const Tensor<T>& t : ts) parts.push_back(t.unsqueeze(d));
  return cat_list<T>(parts, d);
}

template <element T>
Tensor<T> hstack_list(std::span<const Tensor<T>> ts) {
  if (ts.empty()) throw error("hstack expects a non-empty TensorList");
  std::vector<Tensor<T>> parts;
  for (const Tensor<T>& t : ts) parts.push_back(t.dim() == 0 ? t.unsqueeze(0) : t);
  return cat_list<T>(parts, parts[0].dim() == 1 ? 0 : 1);
}

template <element T>
Tensor<T> vstack_list(std::span<const Tensor<T>> ts) {
  if (ts.empty()) throw error("vstack expects a non-empty TensorList");
  std::vector<Tensor<T>> parts;
  for (const Tensor<T>& t : ts) parts.push_back(t.dim() == 0 ? t.view({1, 1}) : t.dim() == 1 ? t.unsqueeze(0) : t);
  return cat_list<T>(parts, 0);
}

// ---- splitting: views ----
template <element T>
std::vector<Tensor<T>> split_by(const Tensor<T>& t, std::int64_t split_size, std::int64_t dim) {
  if (t.dim() == 0) throw error("split expects at least a 1-dimensional tensor");
  if (split_size < 0) throw error("split expects split_size be non-negative, but got split_size=" + str(split_size));
  const std::int64_t d = wrap_dim(dim, t.dim()), size = t.size(d);
  if (split_size == 0 && size != 0)
    throw error("split_size can only be 0 if dimension size is 0, but got dimension size of " + str(size));
  const std::int64_t count = split_size == 0 ? 1 : std::max<std::int64_t>((size + split_size - 1) / split_size, 1);
  std::vector<Tensor<T>> out;
  for (std::int64_t i = 0; i < count; ++i)
    out.push_back(t.narrow(d, i * split_size, i + 1 < count ? split_size : size - split_size * (count - 1)));
  return out;
}

template <element T>
std::vector<Tensor<T>> split_sizes_impl(const Tensor<T>& t, int_list split_sizes, std::int64_t dim) {
  if (t.dim() == 0) throw error("split expects at least a 1-dimensional tensor");
  const std::int64_t d = wrap_dim(dim, t.dim()), size = t.size(d);
  std::int64_t total = 0;
  for (const std::int64_t s : split_sizes) {
    if (s < 0)
      throw error("split_with_sizes expects split_sizes have only non-negative entries, but got split_sizes=" +
                  to_string(split_sizes));
    total += s;
  }
  if (total != size)
    throw error("split_with_sizes expects split_sizes to sum exactly to " + str(size) + " (input tensor's size at dimension " +
                str(dim) + "), but got split_sizes=" + to_string(split_sizes));
  std::vector<Tensor<T>> out;
  std::int64_t start = 0;
  for (const std::int64_t s : split_sizes) {
    out.push_back(t.narrow(d, start, s));
    start += s;
  }
  return out;
}

template <element T>
std::vector<Tensor<T>> chunk_impl(const Tensor<T>& t, std::int64_t chunks, std::int64_t dim) {
  if (t.dim() == 0) throw error("chunk expects at least a 1-dimensional tensor");
  if (chunks <= 0) throw error("chunk expects `chunks` to be greater than 0, got: " + str(chunks));
  const std::int64_t size = t.size(wrap_dim(dim, t.dim()));
  const std::int64_t split_size = (size + chunks - 1) / chunks;
  // An empty dim still gives `chunks` (empty) pieces.
  if (split_size == 0 && size == 0) return split_sizes_impl(t, dim_vector(static_cast<std::size_t>(chunks), 0), dim);
  return split_by(t, split_size, dim);
}

template <element T>
std::vector<Tensor<T>> unbind_impl(const Tensor<T>& t, std::int64_t dim) {
  const std::int64_t d = dim_of(t.dim(), dim);
  std::vector<Tensor<T>> out;
  for (std::int64_t i = 0; i < t.size(d); ++i) out.push_back(t.select(d, i));
  return out;
}

template <element T>
std::vector<Tensor<T>> tensor_split_by(const Tensor<T>& t, std::int64_t sections, std::int64_t dim) {
  if (t.dim() == 0)
    throw error("tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims");
  const std::int64_t d = wrap_dim(dim, t.dim());
  if (sections <= 0) throw error("number of sections must be larger than 0, got " + str(sections));
  const std::int64_t size = t.size(d), base = size / sections, extra = size % sections;
  std::vector<Tensor<T>> out;
  std::int64_t start = 0;
  for (std::int64_t i = 0; i < sections; ++i) {
    const std::int64_t n = i < extra ? base + 1 : base;
    out.push_back(t.slice(d, start, start + n));
    start += n;
  }
  return out;
}

template <element T>
std::vector<Tensor<T>> tensor_split_at(const Tensor<T>& t, int_list indices, std::int64_t dim) {
  if (t.dim() == 0)
    throw error("tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims");
  const std::int64_t d = wrap_dim(dim, t.dim());
  std::vector<Tensor<T>> out;
  std::int64_t start = 0;
  for (const std::int64_t end : indices) {
    out.push_back(t.slice(d, start, end));
    start = end;
  }
  out.push_back(t.slice(d, start, t.size(d)));
  return out;
}

template <element T>
std::vector<Tensor<T>> tensor_split_tensor(const Tensor<T>& t, const Tensor<std::int64_t>& indices_or_sections, std::int64_t dim) {
  const std::int64_t n = indices_or_sections.dim();
  if (n != 0 && n != 1)
    throw error("tensor_split expected tensor_indices_or_sections to be a zero-dimensional or one-dimensional tensor, "
                "but got a tensor with " + str(n) + " dims");
  if (n == 0) return tensor_split_by(t, indices_or_sections.item(), dim);
  return tensor_split_at(t, indices_or_sections.to_vector(), dim);
}
}  // namespace strata::detail


namespace strata {
template <element T>
Tensor<T> tril(const Tensor<T>& t, std::int64_t diagonal) { return detail::triangle(t, diagonal, true); }
template <element T>
Tensor<T> triu(const Tensor<T>& t, std::int64_t diagonal) { return detail::triangle(t, diagonal, false); }
template <element T>
Tensor<T> flip(const Tensor<T>& t, int_list dims) { return detail::flip_impl(t, dims); }
template <element T>
Tensor<T> repeat(const Tensor<T>& t, int_list repeats) { return detail::repeat_impl(t, repeats); }
template <element T>
Tensor<T> tile(const Tensor<T>& t, int_list reps) { return detail::tile_impl(t, reps); }
template <element T>
Tensor<T> pad(const Tensor<T>& t, int_list pad, std::string_view mode, std::optional<double> value) {
  return detail::pad_impl(t, pad, mode, value);
}
template <element T>
std::vector<Tensor<T>> split(const Tensor<T>& t, int_list split_sizes, std::int64_t dim) {
  return detail::split_sizes_impl(t, split_sizes, dim);
}
template <element T>
std::vector<Tensor<T>> chunk(const Tensor<T>& t, std::int64_t chunks, std::int64_t dim) { return detail::chunk_impl(t, chunks, dim); }
template <element T>
std::vector<Tensor<T>> unbind(const Tensor<T>& t, std::int64_t dim) { return detail::unbind_impl(t, dim); }
template <element T>
std::vector<Tensor<T>> tensor_split(const Tensor<T>& t, const Tensor<std::int64_t>& indices_or_sections, std::int64_t dim) {
  return detail::tensor_split_tensor(t, indices_or_sections, dim);
}

// ---- instantiations ----
#define STRATA_MANIP_INSTANCES(T)                                                                                 \
  template Tensor<T> tril<T>(const Tensor<T>&, std::int64_t);                                                     \
  template Tensor<T> triu<T>(const Tensor<T>&, std::int64_t);                                                     \
  template Tensor<T> flip<T>(const Tensor<T>&, int_list);                                                         \
  template Tensor<T> repeat<T>(const Tensor<T>&, int_list);                                                       \
  template Tensor<T> tile<T>(const Tensor<T>&, int_list);                                                         \
  template Tensor<T> pad<T>(const Tensor<T>&, int_list, std::string_view, std::optional<double>);                 \
  template std::vector<Tensor<T>> split<T>(const Tensor<T>&, int_list, std::int64_t);                             \
  template std::vector<Tensor<T>> chunk<T>(const Tensor<T>&, std::int64_t, std::int64_t);                         \
  template std::vector<Tensor<T>> unbind<T>(const Tensor<T>&, std::int64_t);                                      \
  template std::vector<Tensor<T>> tensor_split<T>(const Tensor<T>&, const Tensor<std::int64_t>&, std::int64_t);   \
  namespace detail {                                                                                              \
  template Tensor<T> cat_list<T>(std::span<const Tensor<T>>, std::int64_t);                                       \
  template Tensor<T> stack_list<T>(std::span<const Tensor<T>>, std::int64_t);                                     \
  template Tensor<T> hstack_list<T>(std::span<const Tensor<T>>);                                                  \
  template Tensor<T> vstack_list<T>(std::span<const Tensor<T>>);                                                  \
  template Tensor<T> roll_list<T>(const Tensor<T>&, int_list, int_list);                                          \
  template Tensor<T> repeat_interleave_by<T>(const Tensor<T>&, std::int64_t, std::optional<std::int64_t>);        \
  template Tensor<T> repeat_interleave_by<T, std::int32_t>(const Tensor<T>&, const Tensor<std::int32_t>&,         \
                                                           std::optional<std::int64_t>);                          \
  template Tensor<T> repeat_interleave_by<T, std::int64_t>(const Tensor<T>&, const Tensor<std::int64_t>&,         \
                                                           std::optional<std::int64_t>);                          \
  template std::vector<Tensor<T>> split_by<T>(const Tensor<T>&, std::int64_t, std::int64_t);                      \
  template std::vector<Tensor<T>> tensor_split_by<T>(const Tensor<T>&, std::int64_t, std::int64_t);               \
  template std::vector<Tensor<T>> tensor_split_at<T>(const Tensor<T>&, int_list, std::int64_t);                   \
  }
// linspace and logspace for every dtype but bool (the public logspace refuses float16, as PyTorch 1.13).
#define STRATA_LINSPACE_INSTANCES(T) \
  namespace detail {                 \
  template Tensor<T> linspace_values<T>(T, T, std::int64_t); \
  }
#define STRATA_LOGSPACE_INSTANCES(T)                                                                   \
  namespace detail {                                                                                   \
  template Tensor<T> logspace_values<T>(T, T, std::int64_t, double,                                    \
                                        std::conditional_t<is_std_complex_v<T>, std::complex<double>, double>); \
  }
STRATA_FOR_EACH_DTYPE(STRATA_MANIP_INSTANCES)
STRATA_FOR_EACH_NUMBER_DTYPE(STRATA_LINSPACE_INSTANCES)
STRATA_FOR_EACH_NUMBER_DTYPE(STRATA_LOGSPACE_INSTANCES)
namespace detail {
template Tensor<std::int32_t> repeat_interleave_counts<std::int32_t>(const Tensor<std::int32_t>&);
template Tensor<std::int64_t> repeat_interleave_counts<std::int64_t>(const Tensor<std::int64_t>&);
}  // namespace detail
#undef STRATA_MANIP_INSTANCES
#undef STRATA_LINSPACE_INSTANCES
#undef STRATA_LOGSPACE_INSTANCES
}  // namespace strata
