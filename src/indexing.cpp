// SPDX-License-Identifier: MIT
// The indexing operations: argument checks with PyTorch 1.13's messages, the geometry of each
// operation as one walk, the walk's row kernels, autograd, and the per-dtype instantiations.
//
// A walk runs over a loop shape with three kinds of operands, all strided views in place:
//  - the dense operand: the output of a gather, the source of a scatter (operand 0);
//  - the base: the indexed tensor, restrided to the loop with stride 0 along the loop dims an
//    index chooses (operand 1);
//  - the index tensors, broadcast to the loop (operands 2...): each adds index * step to the
//    base's address.
// The engine's planner drops, orders and merges the loop's dims (strata.loop's make_plan).
// Gathers run on the engine's threads (each output element is written once); scatters, puts
// and accumulations run on one thread in the plan's order, so repeated indices add up in the
// same order for any thread count. Index values are checked in a pass before the walk, so a
// bad index throws before anything is written.
module;
#include "dtype_list.hpp"
#include <algorithm>
#include <array>
#include <complex>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>
module strata.indexing;
import strata.expr;

namespace strata::detail {
namespace {
std::string str(std::int64_t v) { return std::to_string(v); }

bool is_index_type(dtype t) { return t == dtype::int64 || t == dtype::int32; }

// Size and stride of dim d of a tensor, a 0-dim tensor counting as one element of one dim
// (PyTorch's ensure_nonempty_size).
std::int64_t size_or_one(int_list sizes, std::int64_t d) {
  return d < static_cast<std::int64_t>(sizes.size()) ? sizes[static_cast<std::size_t>(d)] : 1;
}
std::int64_t stride_or_zero(int_list strides, std::int64_t d) {
  return d < static_cast<std::int64_t>(strides.size()) ? strides[static_cast<std::size_t>(d)] : 0;
}
std::int64_t dims_or_one(int_list sizes) { return std::max<std::int64_t>(static_cast<std::int64_t>(sizes.size()), 1); }

dim_vector without(int_list v, std::int64_t d) {
  dim_vector out;
  for (std::size_t i = 0; i < v.size(); ++i)
    if (static_cast<std::int64_t>(i) != d) out.push_back(v[i]);
  return out;
}
}  // namespace

// ---- argument checks ----
void check_scatter_gather_index(std::string_view op, dtype index, std::int64_t index_numel) {
  if (index_numel != 0 && index != dtype::int64)
    throw dtype_error(std::string(op) + "(): Expected dtype int64 for index");
}
void throw_scatter_src_dtype(std::string_view op) {
  throw dtype_error(std::string(op) + "(): Expected self.dtype to be equal to src.dtype");
}
void check_index_select_index(int_list index_sizes, dtype index) {
  if (index_sizes.size() > 1) throw index_error("index_select(): Index is supposed to be a vector");
  if (!is_index_type(index)) throw dtype_error("index_select(): Expected dtype int32 or int64 for index");
}
void check_take_index(dtype index) {
  if (index != dtype::int64)
    throw dtype_error("take(): Expected a long tensor for index, but got " + scalar_type_name(index));
}
void check_index_add_args(int_list index_sizes, dtype index, dtype self, dtype source) {
  if (index_sizes.size() > 1)
    throw index_error("index_add_(): Index is supposed to be a vector, but got dim: " +
                      str(static_cast<std::int64_t>(index_sizes.size())) + " with type: " + scalar_type_name(index) +
                      " and size: " + to_string(index_sizes));
  if (!is_index_type(index))
    throw dtype_error("index_add_(): Expected dtype int32/int64 for index but got: " + scalar_type_name(index));
  if (self != source)
    throw dtype_error("index_add_(): self (" + scalar_type_name(self) + ") and source (" + scalar_type_name(source) +
                      ") must have the same scalar type");
}
void throw_index_put_dtype(dtype self, dtype values) {
  throw dtype_error("Index put requires the source and destination dtypes match, got " + scalar_type_name(self) +
                    " for the destination and " + scalar_type_name(values) + " for the source.");
}
void check_masked_fill_value(std::int64_t value_dim) {
  if (value_dim != 0)
    throw error("masked_fill_ only supports a 0-dimensional value tensor, but got tensor with " + str(value_dim) +
                " dimension(s).");
}

namespace {
// ---- visiting a view's elements in row-major order ----
// f(offsets) for every element of `sizes`, offsets[k] following strides[k] (elements): the
// logical order that nonzero and masked_select must keep, and that bounds checks report in.
template <std::size_t N, class F>
void for_each_element(int_list sizes, const std::array<int_list, N>& strides, F f) {
  if (numel_of(sizes) == 0) return;
  const std::size_t nd = sizes.size();
  dim_vector coord(nd, 0);
  std::array<std::int64_t, N> off{};
  for (;;) {
    f(off, coord);
    std::size_t d = nd;
    for (; d-- > 0;) {
      for (std::size_t k = 0; k < N; ++k) off[k] += strides[k][d];
      if (++coord[d] < sizes[d]) break;
      for (std::size_t k = 0; k < N; ++k) off[k] -= sizes[d] * strides[k][d];
      coord[d] = 0;
    }
    if (d == static_cast<std::size_t>(-1)) return;
  }
}

// Calls bad(v) for the first value of index (row-major) outside [lo, hi).
template <class Bad>
void check_range(const Tensor<std::int64_t>& index, std::int64_t lo, std::int64_t hi, Bad bad) {
  const std::int64_t* p = index.data_ptr();
  if (index.is_contiguous()) {
    for (std::int64_t i = 0, n = index.numel(); i < n; ++i)
      if (p[i] < lo || p[i] >= hi) bad(p[i]);
    return;
  }
  for_each_element<1>(index.sizes(), {index.strides()}, [&](const auto& off, const dim_vector&) {
    if (p[off[0]] < lo || p[off[0]] >= hi) bad(p[off[0]]);
  });
}

// ---- the walk ----
enum class walk_mode { get, put, add };

struct walk_index {
  const std::int64_t* data;
  dim_vector strides;  // broadcast to the loop (elements)
  std::int64_t step;   // the base's stride along the indexed dim (elements)
  std::int64_t size;   // that dim's size (negative indices wrap by it)
};
struct walk {
  dim_vector sizes;
  char* dense = nullptr;
  dim_vector dense_strides;
  char* base = nullptr;
  dim_vector base_strides;
  std::vector<walk_index> indices;
};

template <class T>
struct walk_ctx {
  std::size_t nops = 0, nidx = 0;
  std::int64_t step[max_operands] = {};  // bytes
  std::int64_t size[max_operands] = {};
  compute_t<T> alpha{};
  bool scaled = false;
};

template <class T, walk_mode M>
void walk_row(const void* c, char* const* ptrs, const std::int64_t* st, std::int64_t n, loop_status*) {
  const auto& x = *static_cast<const walk_ctx<T>*>(c);
  char* const dense = ptrs[0];
  char* const base = ptrs[1];
  for (std::int64_t i = 0; i < n; ++i) {
    std::int64_t off = i * st[1];
    for (std::size_t k = 0; k < x.nidx; ++k) {
      const std::int64_t v = *reinterpret_cast<const std::int64_t*>(ptrs[2 + k] + i * st[2 + k]);
      off += (v < 0 ? v + x.size[k] : v) * x.step[k];
    }
    T* b = reinterpret_cast<T*>(base + off);
    T* d = reinterpret_cast<T*>(dense + i * st[0]);
    if constexpr (M == walk_mode::get) {
      *d = *b;
    } else if constexpr (M == walk_mode::put) {
      *b = *d;
    } else {
      const auto add = x.scaled ? static_cast<compute_t<T>>(static_cast<compute_t<T>>(*d) * x.alpha)
                                : static_cast<compute_t<T>>(*d);
      *b = convert<T>(static_cast<compute_t<T>>(*b) + add);
    }
  }
}

// Every row of a plan on this thread, in the plan's order.
void run_serial(const loop_plan& p, row_fn fn, const void* ctx) {
  if (p.numel == 0) return;
  const auto nops = static_cast<std::size_t>(p.nops);
  const std::size_t nd = p.sizes.size();
  if (nd > max_operands) throw error("strata: indexing over more than 64 dims is not supported");
  char* ptrs[max_operands];
  std::copy(p.base.begin(), p.base.end(), ptrs);
  std::int64_t at[max_operands] = {};
  for (;;) {
    fn(ctx, ptrs, p.strides.data(), p.sizes[0], nullptr);
    std::size_t d = 1;
    for (; d < nd; ++d) {
      for (std::size_t k = 0; k < nops; ++k) ptrs[k] += p.strides[d * nops + k];
      if (++at[d] < p.sizes[d]) break;
      for (std::size_t k = 0; k < nops; ++k) ptrs[k] -= p.sizes[d] * p.strides[d * nops + k];
      at[d] = 0;
    }
    if (d >= nd) return;
  }
}

template <class T>
void run_walk(const walk& w, walk_mode mode, T alpha = convert<T>(1), bool scaled = false) {
  if (numel_of(w.sizes) == 0) return;
  if (w.indices.size() + 2 > max_operands) throw error("strata: indexing with more than 62 index tensors is not supported");
  walk_ctx<T> ctx;
  ctx.nidx = w.indices.size();
  ctx.nops = ctx.nidx + 2;
  ctx.alpha = static_cast<compute_t<T>>(alpha);
  ctx.scaled = scaled;
  std::vector<loop_operand> ops;
  ops.push_back({w.dense, w.dense_strides, sizeof(T)});
  ops.push_back({w.base, w.base_strides, sizeof(T)});
  for (std::size_t k = 0; k < w.indices.size(); ++k) {
    const walk_index& ix = w.indices[k];
    ops.push_back({reinterpret_cast<char*>(const_cast<std::int64_t*>(ix.data)), ix.strides, sizeof(std::int64_t)});
    ctx.step[k] = ix.step * static_cast<std::int64_t>(sizeof(T));
    ctx.size[k] = ix.size;
  }
  const loop_plan plan = make_plan(w.sizes, ops);
  switch (mode) {
    case walk_mode::get:
      execute(plan, &walk_row<T, walk_mode::get>, nullptr, &ctx);
      break;
    case walk_mode::put: run_serial(plan, &walk_row<T, walk_mode::put>, &ctx); break;
    case walk_mode::add: run_serial(plan, &walk_row<T, walk_mode::add>, &ctx); break;
  }
}

template <class T>
char* bytes(const Tensor<T>& t) {
  return reinterpret_cast<char*>(t.data_ptr());
}

// ---- in-place writes: PyTorch's autograd and overlap rules, as copy_ applies them ----
template <class T>
void prepare_write(const Tensor<T>& self, bool source_requires_grad) {
  check_inplace(autograd_access<Tensor<T>>::meta(self).get());
  check_inplace_source(source_requires_grad);
  check_writable(layout{self.sizes().vec(), self.strides().vec(), self.storage_offset()});
  self.storage().check_writable();
  self.storage().bump_version();
}
// A read operand that shares self's storage is read from a copy (it could be overwritten first).
template <class T, class U>
Tensor<U> unaliased(const Tensor<T>& self, const Tensor<U>& t) {
  return self.is_alias_of(t) ? t.detach().clone() : t;
}

// A copy of an index tensor that a backward keeps (the caller may change the original).
Tensor<std::int64_t> kept(const Tensor<std::int64_t>& index) { return index.clone(); }

template <class T>
bool is_one(T v) {
  return static_cast<compute_t<T>>(v) == static_cast<compute_t<T>>(convert<T>(1));
}

template <class T>
Tensor<T> sum_to_sizes(const Tensor<T>& g, int_list sizes) {
  if (g.sizes() == sizes) return g;
  return Tensor<T>(sum_to(g, sizes));
}

// True when an operation on t is recorded (so that its backward's copies are made only then).
template <class T>
bool records(const Tensor<T>& t) {
  return differentiable_v<T> && t.requires_grad() && grad_enabled();
}

// Records out = a gather from self (when records(self)): its backward lays the gradient into
// zeros of self's sizes with lay(zeros, grad), a scatter-add of the same indices.
template <class T, class Lay>
void record_gather(Tensor<T>& out, const Tensor<T>& self, Lay lay) {
  if constexpr (differentiable_v<T>) {
    const Tensor<T> inputs[1] = {self};
    record_function<T>(out, inputs, [sizes = self.sizes().vec(), lay = std::move(lay)](const Tensor<T>& g, std::size_t) {
      Tensor<T> z = zeros<T>(sizes);
      lay(z, g);
      return z;
    });
  }
}

// ---- gather and scatter ----
void gather_shape_check(int_list self, std::int64_t dim, int_list index) {
  if (dims_or_one(self) != dims_or_one(index))
    throw shape_error("Index tensor must have the same number of dimensions as input tensor");
  for (std::int64_t i = 0; i < dims_or_one(self); ++i)
    if (i != dim && size_or_one(index, i) > size_or_one(self, i))
      throw shape_error("Size does not match at dimension " + str(i) + " expected index " + to_string(index) +
                        " to be smaller than self " + to_string(self) + " apart from dimension " + str(dim));
}

void scatter_shape_check(int_list self, std::int64_t dim, int_list index, const int_list* src) {
  if (dims_or_one(self) != dims_or_one(index))
    throw shape_error("Index tensor must have the same number of dimensions as self tensor");
  bool wrong = false;
  for (std::int64_t d = 0; d < dims_or_one(self) && !wrong; ++d)
    wrong = d != dim && size_or_one(index, d) > size_or_one(self, d);
  if (src) {
    // PyTorch reads src.size(d) for every dim of self before comparing the numbers of dims.
    for (std::int64_t d = 0; d < dims_or_one(self) && !wrong; ++d) {
      if (d >= dims_or_one(*src)) wrap_dim(d, static_cast<std::int64_t>(src->size()));
      wrong = size_or_one(index, d) > size_or_one(*src, d);
    }
    if (dims_or_one(*src) != dims_or_one(index))
      throw shape_error("Index tensor must have the same number of dimensions as src tensor");
  }
  if (wrong)
    throw shape_error("Expected index " + to_string(index) + " to be smaller than self " + to_string(self) +
                      " apart from dimension " + str(dim) +
                      (src ? " and to be smaller size than src " + to_string(*src) : std::string()));
}

void check_dim_bounds(const Tensor<std::int64_t>& index, std::int64_t dim, std::int64_t size) {
  check_range(index, 0, size, [&](std::int64_t v) {
    throw index_error("index " + str(v) + " is out of bounds for dimension " + str(dim) + " with size " + str(size));
  });
}

// The walk of gather/scatter over index's sizes: the base is self with stride 0 along dim.
template <class T>
walk scatter_walk(const Tensor<T>& self, std::int64_t dim, const Tensor<std::int64_t>& index) {
  walk w;
  w.sizes = index.sizes().vec();
  w.base = bytes(self);
  for (std::int64_t d = 0; d < index.dim(); ++d) w.base_strides.push_back(d == dim ? 0 : stride_or_zero(self.strides(), d));
  w.indices.push_back({index.data_ptr(), index.strides().vec(), stride_or_zero(self.strides(), dim),
                       size_or_one(self.sizes(), dim)});
  return w;
}

// A source read at the loop's index (its own strides; a 0-dim source is read everywhere).
template <class T>
void set_dense(walk& w, const Tensor<T>& src) {
  w.dense = bytes(src);
  w.dense_strides.clear();
  for (std::size_t d = 0; d < w.sizes.size(); ++d)
    w.dense_strides.push_back(stride_or_zero(src.strides(), static_cast<std::int64_t>(d)));
}

template <class T>
void scatter_kernel(const Tensor<T>& self, std::int64_t dim, const Tensor<std::int64_t>& index, const Tensor<T>& src,
                    bool add, bool value_only) {
  if (index.numel() == 0) return;
  const int_list src_sizes = src.sizes();
  scatter_shape_check(self.sizes(), dim, index.sizes(), value_only ? nullptr : &src_sizes);
  check_dim_bounds(index, dim, size_or_one(self.sizes(), dim));
  walk w = scatter_walk(self, dim, index);
  if (value_only) {
    w.dense = bytes(src);
    w.dense_strides = dim_vector(w.sizes.size(), 0);
  } else {
    set_dense(w, src);
  }
  run_walk<T>(w, add ? walk_mode::add : walk_mode::put);
}
}  // namespace

template <element T>
Tensor<T> gather_impl(const Tensor<T>& self, std::int64_t dim, const Tensor<std::int64_t>& index) {
  Tensor<T> out = empty<T>(index.sizes());
  if (index.numel() == 0) return out;
  gather_shape_check(self.sizes(), dim, index.sizes());
  check_dim_bounds(index, dim, size_or_one(self.sizes(), dim));
  walk w = scatter_walk(self, dim, index);
  set_dense(w, out);
  run_walk<T>(w, walk_mode::get);
  if (records(self)) record_gather(out, self, [dim, ix = kept(index)](const Tensor<T>& z, const Tensor<T>& g) {
    scatter_kernel<T>(z, dim, ix, g, true, false);
  });
  return out;
}

namespace {
// g without what scatter(dim, index) overwrote (those positions of self do not reach the output).
template <class T>
Tensor<T> zeroed_at(const Tensor<T>& g, std::int64_t dim, const Tensor<std::int64_t>& index) {
  Tensor<T> z = g.clone();
  scatter_kernel<T>(z, dim, index, zeros<T>({}), false, true);
  return z;
}
}  // namespace

template <element T>
void scatter_into(const Tensor<T>& self, std::int64_t dim, const Tensor<std::int64_t>& index, const Tensor<T>& src,
                  bool add, bool value_only) {
  prepare_write(self, src.requires_grad());
  scatter_kernel<T>(self, dim, unaliased(self, index), unaliased(self, src), add, value_only);
}

template <element T>
Tensor<T> scatter_impl(const Tensor<T>& self, std::int64_t dim, const Tensor<std::int64_t>& index, const Tensor<T>& src,
                       bool add) {
  Tensor<T> out = self.detach().clone();
  scatter_kernel<T>(out, dim, index, src, add, false);
  if constexpr (differentiable_v<T>) {
    if ((self.requires_grad() || src.requires_grad()) && grad_enabled()) {
      const Tensor<T> inputs[2] = {self, src};
      record_function<T>(out, inputs,
                         [dim, add, ix = kept(index), src_sizes = src.sizes().vec()](const Tensor<T>& g, std::size_t i) {
                           if (i == 0) return add || ix.numel() == 0 ? g : zeroed_at(g, dim, ix);
                           // src: the gradient at the positions it was written to (zero elsewhere)
                           Tensor<T> gs = zeros<T>(src_sizes);
                           if (ix.numel() == 0) return gs;
                           walk w = scatter_walk(g, dim, ix);
                           set_dense(w, gs);
                           run_walk<T>(w, walk_mode::get);
                           return gs;
                         });
    }
  }
  return out;
}

template <element T>
Tensor<T> scatter_value_impl(const Tensor<T>& self, std::int64_t dim, const Tensor<std::int64_t>& index, T value) {
  Tensor<T> out = self.detach().clone();
  scatter_kernel<T>(out, dim, index, full<T>({}, value), false, true);
  if constexpr (differentiable_v<T>) {
    if (self.requires_grad() && grad_enabled()) {
      const Tensor<T> inputs[1] = {self};
      record_function<T>(out, inputs,
                         [dim, ix = kept(index)](const Tensor<T>& g, std::size_t) { return zeroed_at(g, dim, ix); });
    }
  }
  return out;
}

// ---- index_select and index_add: one index vector along dim ----
namespace {
// The walk over self's sizes with dim replaced by the index's length; the base is self with
// stride 0 along dim, the index advances along dim only.
template <class T>
walk select_walk(const Tensor<T>& self, std::int64_t dim, const Tensor<std::int64_t>& index) {
  walk w;
  const std::int64_t n = index.numel();
  w.base = bytes(self);
  if (self.dim() <= 1) {
    w.sizes = {n};
    w.base_strides = {0};
    w.indices.push_back({index.data_ptr(), {index.dim() ? index.stride(0) : 0}, self.dim() ? self.stride(0) : 0,
                         self.dim() ? self.size(0) : 1});
    return w;
  }
  w.sizes = self.sizes().vec();
  w.sizes[static_cast<std::size_t>(dim)] = n;
  w.base_strides = self.strides().vec();
  w.base_strides[static_cast<std::size_t>(dim)] = 0;
  dim_vector is(w.sizes.size(), 0);
  is[static_cast<std::size_t>(dim)] = index.dim() ? index.stride(0) : 0;
  w.indices.push_back({index.data_ptr(), is, self.stride(dim), self.size(dim)});
  return w;
}

template <class T>
void index_add_kernel(const Tensor<T>& self, std::int64_t dim, const Tensor<std::int64_t>& index,
                      const Tensor<T>& source, T alpha) {
  const std::int64_t n = index.numel();
  if (dim != 0 && dim >= source.dim())
    throw index_error("index_add_(): Indexing dim " + str(dim) + " is out of bounds of the source tensor with dim " +
                      str(source.dim()));
  const std::int64_t source_n = source.dim() == 0 ? 1 : source.size(dim);
  if (n != source_n)
    throw shape_error("index_add_(): Number of indices (" + str(n) + ") should be equal to source.size(dim): (" +
                      str(source_n) + "), for dim: " + str(dim));
  if (self.dim() > 1) {
    // PyTorch adds source.select(dim, i) into self.select(dim, index[i]): the slices broadcast.
    if (n > 0 && source.dim() == 0) throw index_error("select() cannot be applied to a 0-dim tensor.");
    check_range(index, 0, self.size(dim), [](std::int64_t) -> void { throw index_error("index out of range in self"); });
    if (n == 0) return;
    const dim_vector self_slice = without(self.sizes(), dim);
    const dim_vector source_slice = without(source.sizes(), dim);
    if (broadcast_shapes(self_slice, source_slice) != self_slice)
      throw shape_error("output with shape " + to_string(self_slice) + " doesn't match the broadcast shape " +
                        to_string(broadcast_shapes(self_slice, source_slice)));
  } else {
    if (source.dim() > 1)
      throw shape_error("source.dim() (" + str(source.dim()) + ") must one or zero for given self.dim() (" +
                        str(self.dim()) + ")");
    check_range(index, 0, self.numel(), [](std::int64_t) -> void { throw index_error("index out of range in self"); });
  }
  walk w = select_walk(self, dim, index);
  w.dense = bytes(source);
  if (self.dim() <= 1) {
    w.dense_strides = {source.dim() ? source.stride(0) : 0};
  } else {
    dim_vector s = broadcast_strides(without(source.sizes(), dim), without(source.strides(), dim), without(w.sizes, dim));
    s.insert(static_cast<std::size_t>(dim), source.stride(dim));
    w.dense_strides = s;
  }
  run_walk<T>(w, walk_mode::add, alpha, !is_one(alpha));
}

template <class T>
void record_index_add(Tensor<T>& out, const Tensor<T>& self, std::int64_t dim, const Tensor<std::int64_t>& index,
                      const Tensor<T>& source, T alpha) {
  if constexpr (differentiable_v<T>) {
    if ((self.requires_grad() || source.requires_grad()) && grad_enabled()) {
      const Tensor<T> inputs[2] = {self, source};
      record_function<T>(out, inputs,
                         [dim, alpha, ix = kept(index), src_sizes = source.sizes().vec()](const Tensor<T>& g, std::size_t i) {
                           if (i == 0) return g;
                           // source: the gradient rows it was added to, times alpha, summed over
                           // the dims its slices were broadcast along
                           Tensor<T> rows = index_select_impl<T>(g, dim, ix);
                           if (!is_one(alpha)) {
                             T a = alpha;  // the gradient of alpha * s is conj(alpha) * g
                             if constexpr (is_complex_v<T>) a = std::conj(alpha);
                             rows = Tensor<T>(rows * a);
                           }
                           if (rows.dim() <= 1) return rows.reshape(src_sizes);
                           // rows: self's sizes with n at dim; source's slices sit right-aligned in self's
                           const Tensor<T> r = rows.movedim(dim, 0);
                           const dim_vector slice = without(src_sizes, dim);
                           dim_vector padded(static_cast<std::size_t>(r.dim()) - slice.size(), 1);
                           padded[0] = r.size(0);
                           for (const std::int64_t v : slice) padded.push_back(v);
                           dim_vector flat = slice;
                           flat.insert(0, r.size(0));
                           return sum_to_sizes(r, padded).reshape(flat).movedim(0, dim);
                         });
    }
  }
}
}  // namespace

template <element T>
Tensor<T> index_select_impl(const Tensor<T>& self, std::int64_t dim, const Tensor<std::int64_t>& index) {
  const std::int64_t n = index.numel();
  if (self.dim() > 1) {
    if (self.size(dim) == 0 && n > 0) throw index_error("index_select(): self indexing axis dim should be positive");
    // PyTorch 1.13 checks dim 1 (and empty inputs) in a separate pass with its own message.
    const std::int64_t size = self.size(dim);
    if (dim == 1 || self.numel() == 0)
      check_range(index, 0, size, [&](std::int64_t v) {
        throw index_error("INDICES element is out of DATA bounds, id=" + str(v) + " axis_dim=" + str(size));
      });
    else
      check_range(index, 0, size, [](std::int64_t) -> void { throw index_error("index out of range in self"); });
  } else {
    check_range(index, 0, self.numel(), [](std::int64_t) -> void { throw index_error("index out of range in self"); });
  }
  dim_vector sizes = self.sizes().vec();
  if (self.dim() > 0) sizes[static_cast<std::size_t>(dim)] = n;
  else if (n != 1) sizes = {n};  // PyTorch gives a 0-dim result here whatever n is
  Tensor<T> out = empty<T>(sizes);
  walk w = select_walk(self, dim, index);
  w.dense = bytes(out);
  w.dense_strides = self.dim() <= 1 ? dim_vector{1} : out.strides().vec();
  run_walk<T>(w, walk_mode::get);
  if (records(self)) record_gather(out, self, [dim, ix = kept(index)](const Tensor<T>& z, const Tensor<T>& g) {
    index_add_kernel<T>(z, dim, ix, g.dim() == 0 ? g.view({1}) : g, convert<T>(1));
  });
  return out;
}

template <element T>
void index_add_into(const Tensor<T>& self, std::int64_t dim, const Tensor<std::int64_t>& index,
                    const Tensor<T>& source, T alpha) {
  prepare_write(self, source.requires_grad());
  index_add_kernel<T>(self, dim, unaliased(self, index), unaliased(self, source), alpha);
}

template <element T>
Tensor<T> index_add_impl(const Tensor<T>& self, std::int64_t dim, const Tensor<std::int64_t>& index,
                         const Tensor<T>& source, T alpha) {
  Tensor<T> out = self.detach().clone();
  index_add_kernel<T>(out, dim, index, source, alpha);
  record_index_add(out, self, dim, index, source, alpha);
  return out;
}

// ---- take ----
namespace {
// take from a strided tensor: each flat index is turned into the element's offset.
template <class T>
struct take_ctx {
  std::size_t nops;
  const T* base;
  dim_vector sizes, strides;
  std::int64_t numel;
};
template <class T>
void take_row(const void* c, char* const* ptrs, const std::int64_t* st, std::int64_t n, loop_status*) {
  const auto& x = *static_cast<const take_ctx<T>*>(c);
  const std::size_t nd = x.sizes.size();
  for (std::int64_t i = 0; i < n; ++i) {
    std::int64_t v = *reinterpret_cast<const std::int64_t*>(ptrs[1] + i * st[1]);
    if (v < 0) v += x.numel;
    std::int64_t off = 0;
    for (std::size_t d = nd; d-- > 0;) {
      off += (v % x.sizes[d]) * x.strides[d];
      v /= x.sizes[d];
    }
    *reinterpret_cast<T*>(ptrs[0] + i * st[0]) = x.base[off];
  }
}
}  // namespace

template <element T>
Tensor<T> take_impl(const Tensor<T>& self, const Tensor<std::int64_t>& index) {
  const std::int64_t n = self.numel();
  if (n == 0 && index.numel() != 0) throw index_error("take(): tried to take from an empty tensor");
  check_range(index, -n, n, [&](std::int64_t v) {
    throw index_error("out of range: tried to access index " + str(v) + " on a tensor of " + str(n) + " elements.");
  });
  Tensor<T> out = empty<T>(index.sizes());
  if (self.is_contiguous()) {
    walk w;
    w.sizes = index.sizes().vec();
    w.dense = bytes(out);
    w.dense_strides = out.strides().vec();
    w.base = bytes(self);
    w.base_strides = dim_vector(w.sizes.size(), 0);
    w.indices.push_back({index.data_ptr(), index.strides().vec(), 1, n});
    run_walk<T>(w, walk_mode::get);
  } else if (out.numel() > 0) {
    const take_ctx<T> ctx{2, self.data_ptr(), self.sizes().vec(), self.strides().vec(), n};
    const loop_operand ops[2] = {{bytes(out), out.strides(), sizeof(T)},
                                 {reinterpret_cast<char*>(index.data_ptr()), index.strides(), sizeof(std::int64_t)}};
    execute(make_plan(out.sizes(), ops), &take_row<T>, nullptr, &ctx);
  }
  if (records(self)) record_gather(out, self, [n, ix = kept(index)](const Tensor<T>& z, const Tensor<T>& g) {
    walk w;  // z is contiguous: flat index i is element i
    w.sizes = ix.sizes().vec();
    set_dense(w, g);
    w.base = bytes(z);
    w.base_strides = dim_vector(w.sizes.size(), 0);
    w.indices.push_back({ix.data_ptr(), ix.strides().vec(), 1, n});
    run_walk<T>(w, walk_mode::add);
  });
  return out;
}

// ---- masks ----
namespace {
template <class T>
struct fill_ctx {
  std::size_t nops;
  T value;
};
// out = mask ? value : self (operands out, self, mask).
template <class T>
void masked_fill_row(const void* c, char* const* ptrs, const std::int64_t* st, std::int64_t n, loop_status*) {
  const T v = static_cast<const fill_ctx<T>*>(c)->value;
  for (std::int64_t i = 0; i < n; ++i)
    *reinterpret_cast<T*>(ptrs[0] + i * st[0]) =
        *reinterpret_cast<const bool*>(ptrs[2] + i * st[2]) ? v : *reinterpret_cast<const T*>(ptrs[1] + i * st[1]);
}
// self = value where mask (operands self, mask).
template <class T>
void masked_set_row(const void* c, char* const* ptrs, const std::int64_t* st, std::int64_t n, loop_status*) {
  const T v = static_cast<const fill_ctx<T>*>(c)->value;
  for (std::int64_t i = 0; i < n; ++i)
    if (*reinterpret_cast<const bool*>(ptrs[1] + i * st[1])) *reinterpret_cast<T*>(ptrs[0] + i * st[0]) = v;
}

template <class T>
Tensor<T> masked_fill_plain(const Tensor<T>& self, const Tensor<bool>& mask, T value) {
  const dim_vector shape = broadcast_shapes(mask.sizes(), self.sizes());  // PyTorch's order, for its message
  Tensor<T> out = empty<T>(shape);
  const dim_vector ss = broadcast_strides(self.sizes(), self.strides(), shape);
  const dim_vector ms = broadcast_strides(mask.sizes(), mask.strides(), shape);
  const loop_operand ops[3] = {{bytes(out), out.strides(), sizeof(T)},
                               {bytes(self), ss, sizeof(T)},
                               {bytes(mask), ms, sizeof(bool)}};
  const fill_ctx<T> ctx{3, value};
  execute(make_plan(shape, ops), &masked_fill_row<T>, nullptr, &ctx);
  return out;
}

// The elements of a tensor (read through strides broadcast to shape) where mask (likewise) is
// true, in row-major order, into out (contiguous, of the right length).
template <class T>
void select_masked(const T* data, int_list strides, const bool* mask, int_list mask_strides, int_list shape, T* out) {
  std::int64_t k = 0;
  for_each_element<2>(shape, {strides, mask_strides}, [&](const auto& off, const dim_vector&) {
    if (mask[off[1]]) out[k++] = data[off[0]];
  });
}
std::int64_t count_true(const bool* mask, int_list strides, int_list shape) {
  std::int64_t n = 0;
  for_each_element<1>(shape, {strides}, [&](const auto& off, const dim_vector&) { n += mask[off[0]] ? 1 : 0; });
  return n;
}
}  // namespace

template <element T>
Tensor<T> masked_fill_impl(const Tensor<T>& self, const Tensor<bool>& mask, T value, const Tensor<T>* value_tensor) {
  Tensor<T> out = masked_fill_plain(self, mask, value);
  if constexpr (differentiable_v<T>) {
    const bool value_grad = value_tensor && value_tensor->requires_grad();
    if ((self.requires_grad() || value_grad) && grad_enabled()) {
      const Tensor<T> inputs[2] = {self, value_grad ? *value_tensor : zeros<T>({})};
      record_function<T>(out, std::span<const Tensor<T>>(inputs, value_grad ? 2 : 1),
                         [sizes = self.sizes().vec(), m = mask.clone()](const Tensor<T>& g, std::size_t i) {
                           if (i == 0) return sum_to_sizes(masked_fill_plain(g, m, convert<T>(0)), sizes);
                           return Tensor<T>(masked_select_impl<T>(g, m).sum());
                         });
    }
  }
  return out;
}

template <element T>
void masked_fill_into(const Tensor<T>& self, const Tensor<bool>& mask, T value) {
  const dim_vector shape = broadcast_shapes(self.sizes(), mask.sizes());
  if (!(shape == self.sizes().vec()))
    throw shape_error("output with shape " + to_string(self.sizes()) + " doesn't match the broadcast shape " +
                      to_string(shape));
  prepare_write(self, false);
  const Tensor<bool> m = unaliased(self, mask);
  const dim_vector ms = broadcast_strides(m.sizes(), m.strides(), shape);
  const loop_operand ops[2] = {{bytes(self), self.strides(), sizeof(T)}, {bytes(m), ms, sizeof(bool)}};
  const fill_ctx<T> ctx{2, value};
  execute(make_plan(shape, ops), &masked_set_row<T>, nullptr, &ctx);
}

template <element T>
Tensor<T> masked_select_impl(const Tensor<T>& self, const Tensor<bool>& mask) {
  const dim_vector shape = broadcast_shapes(mask.sizes(), self.sizes());
  const dim_vector ss = broadcast_strides(self.sizes(), self.strides(), shape);
  const dim_vector ms = broadcast_strides(mask.sizes(), mask.strides(), shape);
  Tensor<T> out = empty<T>({count_true(mask.data_ptr(), ms, shape)});
  select_masked(self.data_ptr(), ss, mask.data_ptr(), ms, shape, out.data_ptr());
  if constexpr (differentiable_v<T>) {
    if (self.requires_grad() && grad_enabled()) {
      const Tensor<T> inputs[1] = {self};
      record_function<T>(out, inputs, [sizes = self.sizes().vec(), shape, m = mask.clone()](const Tensor<T>& g, std::size_t) {
        // the gradient's elements go back to the mask's true positions, in order
        Tensor<T> z = zeros<T>(shape);
        const Tensor<T> gc = g.contiguous();
        const dim_vector mstr = broadcast_strides(m.sizes(), m.strides(), shape);
        const T* from = gc.data_ptr();
        T* to = z.data_ptr();
        const bool* mp = m.data_ptr();
        std::int64_t k = 0;
        for_each_element<2>(shape, {z.strides(), mstr}, [&](const auto& off, const dim_vector&) {
          if (mp[off[1]]) to[off[0]] = from[k++];
        });
        return sum_to_sizes(z, sizes);
      });
    }
  }
  return out;
}

template <element T>
Tensor<std::int64_t> nonzero_impl(const Tensor<T>& self) {
  const T* p = self.data_ptr();
  const int_list strides = self.strides();
  std::int64_t n = 0;
  for_each_element<1>(self.sizes(), {strides}, [&](const auto& off, const dim_vector&) {
    n += convert<bool>(p[off[0]]) ? 1 : 0;
  });
  const std::int64_t nd = self.dim();
  Tensor<std::int64_t> out = empty<std::int64_t>({n, nd});
  std::int64_t* o = out.data_ptr();
  for_each_element<1>(self.sizes(), {strides}, [&](const auto& off, const dim_vector& coord) {
    if (!convert<bool>(p[off[0]])) return;
    std::copy(coord.begin(), coord.end(), o);
    o += nd;
  });
  return out;
}

// ---- advanced indexing ----
namespace {
// What the entries do to self, in PyTorch's applySlicing: integers, slices, ellipsis and none
// are views; index tensors and masks are kept (with the view dim they start at) for one
// gather or put afterwards.
template <class T>
struct sliced {
  Tensor<T> view;
  advanced_indices indices;
};

template <class T>
sliced<T> apply_entries(const Tensor<T>& self, std::span<const tensor_index> entries) {
  using kind = tensor_index::kind;
  std::int64_t specified = 0;
  int ellipses = 0;
  for (const tensor_index& e : entries) {
    switch (e.type()) {
      case kind::integer: case kind::slice: case kind::tensor: ++specified; break;
      case kind::mask: specified += e.as_mask().dim(); break;
      case kind::ellipsis: ++ellipses; break;
      case kind::none: break;
    }
  }
  if (ellipses > 1) throw index_error("an index can only have a single ellipsis ('...')");
  if (specified > self.dim()) throw index_error("too many indices for tensor of dimension " + str(self.dim()));

  sliced<T> s{self, {}};
  std::vector<std::pair<Tensor<bool>, std::int64_t>> masks;  // expanded once the view is final
  std::int64_t d = 0;     // the dim of the view the next entry applies to
  std::int64_t entry = 0;  // the entry's position (PyTorch's messages name it as the dimension)
  const auto select = [&](std::int64_t i) {
    const std::int64_t size = s.view.size(d);
    if (i < -size || i >= size)
      throw index_error("index " + str(i) + " is out of bounds for dimension " + str(entry) + " with size " + str(size));
    s.view = s.view.select(d, i);
  };
  for (const tensor_index& e : entries) {
    switch (e.type()) {
      case kind::integer: select(e.as_integer()); break;
      case kind::slice: {
        const strata::slice& sl = e.as_slice();
        if (sl.step == 0) throw error("slice step cannot be zero");
        if (sl.step < 0) throw error("step must be greater than zero");
        s.view = s.view.slice(d++, sl.start, sl.stop, sl.step);
        break;
      }
      case kind::ellipsis: d += self.dim() - specified; break;
      case kind::none: s.view = s.view.unsqueeze(d++); break;
      case kind::tensor:
        if (e.as_tensor().dim() == 0) {  // libtorch: a 0-dim integer tensor selects
          select(e.as_tensor().item());
        } else {
          s.indices.tensors.push_back(e.as_tensor());
          s.indices.dims.push_back(d++);
        }
        break;
      case kind::mask:
        if (e.as_mask().dim() == 0) {  // a new dim of size 1, kept (index 0) or emptied
          s.view = s.view.unsqueeze(d);
          s.indices.tensors.push_back(e.as_mask().item() ? zeros<std::int64_t>({1}) : empty<std::int64_t>({0}));
          s.indices.dims.push_back(d++);
        } else {
          masks.emplace_back(e.as_mask(), d);
          s.indices.tensors.emplace_back();  // placeholder, replaced below
          s.indices.dims.push_back(-1 - static_cast<std::int64_t>(masks.size() - 1));
          d += e.as_mask().dim();
        }
        break;
    }
    ++entry;
  }
  if (masks.empty()) return s;
  // Masks become the columns of their nonzero(), checked against the final view's sizes.
  advanced_indices expanded;
  for (std::size_t k = 0; k < s.indices.tensors.size(); ++k) {
    if (s.indices.dims[k] >= 0) {
      expanded.tensors.push_back(s.indices.tensors[k]);
      expanded.dims.push_back(s.indices.dims[k]);
      continue;
    }
    const auto& [mask, at] = masks[static_cast<std::size_t>(-1 - s.indices.dims[k])];
    for (std::int64_t j = 0; j < mask.dim(); ++j)
      if (mask.size(j) != s.view.size(at + j))
        throw index_error("The shape of the mask " + to_string(mask.sizes()) + " at index " + str(j) +
                          " does not match the shape of the indexed tensor " + to_string(s.view.sizes()) +
                          " at index " + str(at + j));
    const Tensor<std::int64_t> nz = nonzero_impl<bool>(mask);
    for (std::int64_t j = 0; j < mask.dim(); ++j) {
      expanded.tensors.push_back(nz.select(1, j));
      expanded.dims.push_back(at + j);
    }
  }
  s.indices = std::move(expanded);
  return s;
}

// The gather/put loop of an advanced index: the index tensors broadcast together to B; the
// result is the view's sizes with the indexed dims replaced by B where they were (when they
// are adjacent), else B first, then the other dims in order.
template <class T>
walk advanced_walk(const Tensor<T>& view, const advanced_indices& ix) {
  dim_vector b;
  for (const Tensor<std::int64_t>& t : ix.tensors) {
    try {
      b = broadcast_shapes(b, t.sizes());
    } catch (const shape_error&) {
      std::string shapes;
      for (const Tensor<std::int64_t>& u : ix.tensors) shapes += (shapes.empty() ? "" : ", ") + to_string(u.sizes());
      throw index_error("shape mismatch: indexing tensors could not be broadcast together with shapes " + shapes);
    }
  }
  const std::int64_t first = ix.dims[0], last = ix.dims.back();
  const bool adjacent = last - first + 1 == static_cast<std::int64_t>(ix.dims.size());
  walk w;
  w.base = bytes(view);
  for (std::size_t k = 0; k < ix.tensors.size(); ++k)
    w.indices.push_back({ix.tensors[k].data_ptr(), {}, view.stride(ix.dims[k]), view.size(ix.dims[k])});
  const auto plain_dim = [&](std::int64_t d) {
    w.sizes.push_back(view.size(d));
    w.base_strides.push_back(view.stride(d));
    for (walk_index& i : w.indices) i.strides.push_back(0);
  };
  const auto broadcast_dims = [&] {
    for (std::size_t k = 0; k < ix.tensors.size(); ++k) {
      const dim_vector s = broadcast_strides(ix.tensors[k].sizes(), ix.tensors[k].strides(), b);
      for (const std::int64_t v : s) w.indices[k].strides.push_back(v);
    }
    for (const std::int64_t v : b) {
      w.sizes.push_back(v);
      w.base_strides.push_back(0);
    }
  };
  const auto indexed = [&](std::int64_t d) { return std::find(ix.dims.begin(), ix.dims.end(), d) != ix.dims.end(); };
  if (adjacent) {
    for (std::int64_t d = 0; d < first; ++d) plain_dim(d);
    broadcast_dims();
    for (std::int64_t d = last + 1; d < view.dim(); ++d) plain_dim(d);
  } else {
    broadcast_dims();
    for (std::int64_t d = 0; d < view.dim(); ++d)
      if (!indexed(d)) plain_dim(d);
  }
  if (numel_of(w.sizes) > 0)
    for (std::size_t k = 0; k < ix.tensors.size(); ++k) {
      const std::int64_t size = w.indices[k].size;
      check_range(ix.tensors[k], -size, size, [&](std::int64_t v) {
        throw index_error("index " + str(v) + " is out of bounds for dimension " + str(static_cast<std::int64_t>(k)) +
                          " with size " + str(size));
      });
    }
  return w;
}

advanced_indices kept(const advanced_indices& ix) {
  advanced_indices out{{}, ix.dims};
  for (const Tensor<std::int64_t>& t : ix.tensors) out.tensors.push_back(t.clone());
  return out;
}

// values (or a scalar, value_only) written or added into view at ix.
template <class T>
void put_kernel(const Tensor<T>& view, const advanced_indices& ix, const Tensor<T>& values, bool accumulate,
                bool value_only) {
  walk w = advanced_walk(view, ix);
  w.dense = bytes(values);
  if (value_only) {
    w.dense_strides = dim_vector(w.sizes.size(), 0);
  } else {
    // PyTorch drops the values' leading size-1 dims, then they must expand to the result.
    dim_vector vs = values.sizes().vec(), vt = values.strides().vec();
    while (vs.size() > w.sizes.size() && vs[0] == 1) {
      vs.erase(0);
      vt.erase(0);
    }
    bool fits = vs.size() <= w.sizes.size();
    for (std::size_t i = 1; fits && i <= vs.size(); ++i)
      fits = vs[vs.size() - i] == 1 || vs[vs.size() - i] == w.sizes[w.sizes.size() - i];
    if (!fits)
      throw shape_error("shape mismatch: value tensor of shape " + to_string(values.sizes()) +
                        " cannot be broadcast to indexing result of shape " + to_string(w.sizes));
    w.dense_strides = broadcast_strides(vs, vt, w.sizes);
  }
  run_walk<T>(w, accumulate ? walk_mode::add : walk_mode::put);
}

template <class T>
Tensor<T> gather_advanced(const Tensor<T>& view, const advanced_indices& ix) {
  walk w = advanced_walk(view, ix);
  Tensor<T> out = empty<T>(w.sizes);
  w.dense = bytes(out);
  w.dense_strides = out.strides().vec();
  run_walk<T>(w, walk_mode::get);
  return out;
}

// t.index_put_ after the entries: a write through the view when no index tensor is left.
template <class T>
void put_sliced(const sliced<T>& s, const Tensor<T>& values, bool accumulate, bool value_only) {
  if (!s.indices.tensors.empty()) {
    put_kernel(s.view, s.indices, values, accumulate, value_only);
    return;
  }
  Tensor<T> v = values;
  while (v.dim() > s.view.dim() && v.size(0) == 1) v = v.squeeze(0);  // as libtorch's copy_to
  if (accumulate) s.view.assign(s.view + v);
  else s.view.copy_(v);
}
}  // namespace

template <element T>
Tensor<T> index_impl(const Tensor<T>& self, std::span<const tensor_index> entries) {
  const sliced<T> s = apply_entries(self, entries);
  if (s.indices.tensors.empty()) return s.view;
  Tensor<T> out = gather_advanced(s.view, s.indices);
  if (records(s.view)) record_gather(out, s.view, [ix = kept(s.indices)](const Tensor<T>& z, const Tensor<T>& g) {
    put_kernel(z, ix, g, true, false);
  });
  return out;
}

template <element T>
void index_put_into(const Tensor<T>& self, std::span<const tensor_index> entries, const Tensor<T>& values,
                    bool accumulate, bool value_only) {
  check_inplace(autograd_access<Tensor<T>>::meta(self).get());
  check_inplace_source(values.requires_grad());
  sliced<T> s = apply_entries(self.detach(), entries);
  if (!s.indices.tensors.empty()) {
    check_writable(layout{s.view.sizes().vec(), s.view.strides().vec(), s.view.storage_offset()});
    self.storage().check_writable();
    for (Tensor<std::int64_t>& t : s.indices.tensors) t = unaliased(self, t);
    self.storage().bump_version();
  }
  put_sliced(s, unaliased(self, values), accumulate, value_only);
}

template <element T>
Tensor<T> index_put_impl(const Tensor<T>& self, std::span<const tensor_index> entries, const Tensor<T>& values,
                         bool accumulate) {
  Tensor<T> out = self.detach().clone();
  const bool value_only = values.dim() == 0;
  put_sliced(apply_entries(out, entries), values.detach(), accumulate, value_only);
  if constexpr (differentiable_v<T>) {
    if ((self.requires_grad() || values.requires_grad()) && grad_enabled()) {
      std::vector<tensor_index> saved;
      for (const tensor_index& e : entries) {
        if (e.type() == tensor_index::kind::mask) saved.emplace_back(e.as_mask().clone());
        else if (e.type() == tensor_index::kind::tensor) saved.emplace_back(e.as_tensor().clone());
        else saved.push_back(e);
      }
      const Tensor<T> inputs[2] = {self, values};
      record_function<T>(out, inputs,
                         [saved = std::move(saved), accumulate, vsizes = values.sizes().vec()](const Tensor<T>& g, std::size_t i) {
                           if (i == 0) {  // self: what was overwritten gets no gradient
                             if (accumulate) return g;
                             Tensor<T> z = g.clone();
                             put_sliced(apply_entries(z, saved), zeros<T>({}), false, true);
                             return z;
                           }
                           // values: the gradient where they were written, summed to their sizes
                           Tensor<T> r = index_impl<T>(g, saved);
                           dim_vector target = vsizes;
                           while (target.size() > r.sizes().size() && target[0] == 1) target.erase(0);
                           return sum_to_sizes(r, target).reshape(vsizes);
                         });
    }
  }
  return out;
}

// ---- compiled once per dtype ----
#define STRATA_INDEXING_INSTANCES(T)                                                                               \
  template Tensor<T> index_select_impl<T>(const Tensor<T>&, std::int64_t, const Tensor<std::int64_t>&);           \
  template Tensor<T> gather_impl<T>(const Tensor<T>&, std::int64_t, const Tensor<std::int64_t>&);                 \
  template Tensor<T> scatter_impl<T>(const Tensor<T>&, std::int64_t, const Tensor<std::int64_t>&, const Tensor<T>&, \
                                     bool);                                                                       \
  template Tensor<T> scatter_value_impl<T>(const Tensor<T>&, std::int64_t, const Tensor<std::int64_t>&, T);       \
  template void scatter_into<T>(const Tensor<T>&, std::int64_t, const Tensor<std::int64_t>&, const Tensor<T>&,     \
                                bool, bool);                                                                      \
  template Tensor<T> take_impl<T>(const Tensor<T>&, const Tensor<std::int64_t>&);                                 \
  template Tensor<T> masked_fill_impl<T>(const Tensor<T>&, const Tensor<bool>&, T, const Tensor<T>*);             \
  template void masked_fill_into<T>(const Tensor<T>&, const Tensor<bool>&, T);                                    \
  template Tensor<T> masked_select_impl<T>(const Tensor<T>&, const Tensor<bool>&);                                \
  template Tensor<std::int64_t> nonzero_impl<T>(const Tensor<T>&);                                                \
  template Tensor<T> index_add_impl<T>(const Tensor<T>&, std::int64_t, const Tensor<std::int64_t>&,               \
                                       const Tensor<T>&, T);                                                      \
  template void index_add_into<T>(const Tensor<T>&, std::int64_t, const Tensor<std::int64_t>&, const Tensor<T>&, T); \
  template Tensor<T> index_impl<T>(const Tensor<T>&, std::span<const tensor_index>);                              \
  template void index_put_into<T>(const Tensor<T>&, std::span<const tensor_index>, const Tensor<T>&, bool, bool); \
  template Tensor<T> index_put_impl<T>(const Tensor<T>&, std::span<const tensor_index>, const Tensor<T>&, bool);
STRATA_FOR_EACH_DTYPE(STRATA_INDEXING_INSTANCES)
#undef STRATA_INDEXING_INSTANCES

Tensor<std::int64_t> one_hot_impl(const Tensor<std::int64_t>& x, std::int64_t num_classes) {
  const std::vector<std::int64_t> v = x.to_vector();
  if (num_classes == -1) {
    if (v.empty()) throw error("Can not infer total number of classes from empty tensor.");
    num_classes = *std::max_element(v.begin(), v.end()) + 1;
  } else if (num_classes < 0) {
    throw error("one_hot: num_classes should be -1 or a non-negative number, got " + str(num_classes));
  }
  for (const std::int64_t c : v) {
    if (c < 0) throw error("Class values must be non-negative.");
    if (c >= num_classes) throw error("Class values must be smaller than num_classes.");
  }
  dim_vector sizes = x.sizes().vec();
  sizes.push_back(num_classes);
  Tensor<std::int64_t> out = zeros<std::int64_t>(sizes);
  std::int64_t* p = out.data_ptr();
  for (std::size_t i = 0; i < v.size(); ++i) p[static_cast<std::int64_t>(i) * num_classes + v[i]] = 1;
  return out;
}

template <element R>
Tensor<R> bincount_impl(const Tensor<std::int64_t>& x, const Tensor<R>* weights, std::int64_t minlength) {
  if (x.dim() != 1) throw error("bincount only supports 1-d non-negative integral inputs.");
  if (minlength < 0) throw error("minlength should be >= 0");
  if (weights && (weights->dim() != 1 || weights->size(0) != x.size(0)))
    throw error("weights should be 1-d and have the same length as input");
  const std::vector<std::int64_t> v = x.to_vector();
  std::int64_t n = minlength;
  for (const std::int64_t c : v) {
    if (c < 0) throw error("bincount only supports 1-d non-negative integral inputs.");
    n = std::max(n, c + 1);
  }
  Tensor<R> out = zeros<R>({n});
  R* p = out.data_ptr();
  if (weights) {
    const std::vector<R> w = weights->to_vector();
    for (std::size_t i = 0; i < v.size(); ++i) p[v[i]] += w[i];
  } else {
    for (const std::int64_t c : v) p[c] += 1;
  }
  return out;
}
template Tensor<std::int64_t> bincount_impl<std::int64_t>(const Tensor<std::int64_t>&, const Tensor<std::int64_t>*,
                                                          std::int64_t);
template Tensor<float> bincount_impl<float>(const Tensor<std::int64_t>&, const Tensor<float>*, std::int64_t);
template Tensor<double> bincount_impl<double>(const Tensor<std::int64_t>&, const Tensor<double>*, std::int64_t);
}  // namespace strata::detail
