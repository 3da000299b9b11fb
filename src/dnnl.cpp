// SPDX-License-Identifier: MIT
// Convolutions on oneDNN (see dnnl.hpp). The user's tensors are plain NC(D)(H)W and
// O I/g (D)(H)W; each primitive picks its own (blocked) layouts, and the data is reordered in
// and out. oneDNN fixes a primitive's thread count when it is created, from the calling
// thread's OpenMP setting: the calls set it for the creation and restore it. Primitive
// descriptors come from oneDNN's own cache after the first call of a shape. Every buffer (the
// reordered tensors, the scratchpad) comes from the caller's allocator: strata's blocks, on
// huge pages and reused, where oneDNN's own would touch fresh pages on every call.
#include "dnnl.hpp"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <oneapi/dnnl/dnnl.hpp>
#include <unordered_map>
#include <vector>

#include "parallel.hpp"

namespace strata::detail {
namespace {
using dnnl::memory;
using tag = memory::format_tag;

const dnnl::engine& cpu() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);  // created once, never changed
  return engine;
}

// The calling thread's OpenMP thread count set to n for a scope.
class omp_threads {
 public:
  explicit omp_threads(int n) : before_(omp_get_max_threads()) {
    // Inside an OpenMP region (a user's) oneDNN runs on the calling thread only.
    omp_set_num_threads(omp_in_parallel() ? 1 : std::max(1, n));
  }
  ~omp_threads() { omp_set_num_threads(before_); }
  omp_threads(const omp_threads&) = delete;
  omp_threads& operator=(const omp_threads&) = delete;

 private:
  int before_;
};

tag plain_data(int dims) { return dims == 1 ? tag::ncw : dims == 2 ? tag::nchw : tag::ncdhw; }
tag plain_weights(int dims, bool grouped) {
  if (grouped) return dims == 1 ? tag::goiw : dims == 2 ? tag::goihw : tag::goidhw;
  return dims == 1 ? tag::oiw : dims == 2 ? tag::oihw : tag::oidhw;
}

// The descriptors of one convolution over n samples.
struct conv_descs {
  memory::dims src, wei, dst, stride, dilate, pad_l, pad_r;
  memory::desc src_user, wei_user, dst_user, src_any, wei_any, dst_any;

  conv_descs(const dnnl_conv_shape& c, std::int64_t n) {
    src = {n, c.cin};
    dst = {n, c.cout};
    const bool grouped = c.groups > 1;
    wei = grouped ? memory::dims{c.groups, c.cout / c.groups, c.cin / c.groups} : memory::dims{c.cout, c.cin};
    for (int i = 3 - c.dims; i < 3; ++i) {
      src.push_back(c.in[i]);
      dst.push_back(c.out[i]);
      wei.push_back(c.k[i]);
      stride.push_back(c.stride[i]);
      dilate.push_back(c.dilation[i] - 1);  // oneDNN counts the gaps
      pad_l.push_back(c.pad[i]);
      // The right padding that makes oneDNN's output size the given one.
      pad_r.push_back((c.out[i] - 1) * c.stride[i] + (c.k[i] - 1) * c.dilation[i] + 1 - c.in[i] - c.pad[i]);
    }
    const auto f32 = memory::data_type::f32;
    src_user = memory::desc(src, f32, plain_data(c.dims));
    dst_user = memory::desc(dst, f32, plain_data(c.dims));
    wei_user = memory::desc(wei, f32, plain_weights(c.dims, grouped));
    src_any = memory::desc(src, f32, tag::any);
    dst_any = memory::desc(dst, f32, tag::any);
    wei_any = memory::desc(wei, f32, tag::any);
  }
  dnnl::convolution_forward::primitive_desc forward(bool bias) const {
    const auto prop = dnnl::prop_kind::forward_training;
    const auto algo = dnnl::algorithm::convolution_direct;
    if (bias) {
      const memory::desc b({dst[1]}, memory::data_type::f32, tag::x);
      return {{prop, algo, src_any, wei_any, b, dst_any, stride, dilate, pad_l, pad_r}, user_scratchpad(), cpu()};
    }
    return {{prop, algo, src_any, wei_any, dst_any, stride, dilate, pad_l, pad_r}, user_scratchpad(), cpu()};
  }
  static dnnl::primitive_attr user_scratchpad() {
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    return attr;
  }
};

// A buffer for d from the caller's allocator.
memory buffer(const memory::desc& d, const dnnl_allocator& a) {
  return memory(d, cpu(), a.allocate(a.ctx, d.get_size()));
}
// The user's buffer as the primitive wants it: itself, or a reordered copy.
memory as_wanted(dnnl::stream& s, const memory::desc& user, const memory::desc& wanted, const float* p,
                 const dnnl_allocator& a) {
  memory m(user, cpu(), const_cast<float*>(p));
  if (wanted == user) return m;
  memory r = buffer(wanted, a);
  dnnl::reorder(m, r).execute(s, m, r);
  return r;
}
// The primitive's arguments plus its scratchpad, when it asks for one.
std::unordered_map<int, memory> with_scratchpad(std::unordered_map<int, memory> args, const memory::desc& pad,
                                                const dnnl_allocator& a) {
  if (pad.get_size() > 0) args.emplace(DNNL_ARG_SCRATCHPAD, buffer(pad, a));
  return args;
}
// A result buffer in the primitive's layout, and how to bring it back to the user's.
struct result {
  memory user, mine;
  result(const memory::desc& user_desc, const memory::desc& wanted, float* p, const dnnl_allocator& a)
      : user(user_desc, cpu(), p), mine(wanted == user_desc ? user : buffer(wanted, a)) {}
  void finish(dnnl::stream& s) {
    if (mine != user) dnnl::reorder(mine, user).execute(s, mine, user);
    s.wait();
  }
};
}  // namespace

bool dnnl_conv_forward(const dnnl_conv_shape& c, const float* x, const float* w, const float* bias, float* y,
                       int threads, const dnnl_allocator& a) {
  if (c.n == 0) return false;  // an empty batch: the caller's loops
  try {
    const omp_threads t(threads);
    const conv_descs d(c, c.n);
    const auto pd = d.forward(bias != nullptr);
    dnnl::stream s(cpu());
    const memory src = as_wanted(s, d.src_user, pd.src_desc(), x, a);
    const memory wei = as_wanted(s, d.wei_user, pd.weights_desc(), w, a);
    result dst(d.dst_user, pd.dst_desc(), y, a);
    std::unordered_map<int, memory> args{{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DST, dst.mine}};
    if (bias)
      args.emplace(DNNL_ARG_BIAS, memory({{c.cout}, memory::data_type::f32, tag::x}, cpu(), const_cast<float*>(bias)));
    dnnl::convolution_forward(pd).execute(s, with_scratchpad(std::move(args), pd.scratchpad_desc(), a));
    dst.finish(s);
    return true;
  } catch (const dnnl::error&) {
    return false;
  }
}

bool dnnl_conv_backward_data(const dnnl_conv_shape& c, const float* gy, const float* w, float* gx, int threads,
                             const dnnl_allocator& a) {
  if (c.n == 0) return false;  // an empty batch: the caller's loops
  try {
    const omp_threads t(threads);
    const conv_descs d(c, c.n);
    const auto hint = d.forward(false);
    const dnnl::convolution_backward_data::primitive_desc pd(
        {dnnl::algorithm::convolution_direct, d.src_any, d.wei_any, d.dst_any, d.stride, d.dilate, d.pad_l, d.pad_r},
        conv_descs::user_scratchpad(), cpu(), hint);
    dnnl::stream s(cpu());
    const memory diff_dst = as_wanted(s, d.dst_user, pd.diff_dst_desc(), gy, a);
    const memory wei = as_wanted(s, d.wei_user, pd.weights_desc(), w, a);
    result diff_src(d.src_user, pd.diff_src_desc(), gx, a);
    dnnl::convolution_backward_data(pd).execute(
        s, with_scratchpad({{DNNL_ARG_DIFF_DST, diff_dst}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DIFF_SRC, diff_src.mine}},
                           pd.scratchpad_desc(), a));
    diff_src.finish(s);
    return true;
  } catch (const dnnl::error&) {
    return false;
  }
}

bool dnnl_conv_backward_weights(const dnnl_conv_shape& c, const float* x, const float* gy, float* gw, int threads,
                                const dnnl_allocator& a) {
  if (c.n == 0) return false;  // an empty batch: the caller's loops
  // oneDNN splits a weight gradient's sum over samples by its thread count; here the samples
  // go in a fixed number of ranges, each summed by a one-thread primitive, added in order.
  constexpr std::int64_t ranges = 4;
  const std::int64_t parts = std::max<std::int64_t>(1, std::min(ranges, c.n));
  const std::int64_t wsize = c.cout * (c.cin / c.groups) * c.k[0] * c.k[1] * c.k[2];
  const std::int64_t in_sample = c.cin * c.in[0] * c.in[1] * c.in[2];
  const std::int64_t out_sample = c.cout * c.out[0] * c.out[1] * c.out[2];
  float* partial = static_cast<float*>(a.allocate(a.ctx, static_cast<std::size_t>(parts * wsize) * sizeof(float)));
  std::atomic<bool> ok = true;
  // No exception may leave an OpenMP region: each range keeps its own, rethrown after the join.
  std::vector<std::exception_ptr> failed(static_cast<std::size_t>(parts));
  run_in_parts(c.n, parts, threads, [&](std::int64_t first, std::int64_t last) {
    const std::int64_t part = (first * parts + c.n - 1) / c.n;  // run_in_parts' range index
    try {
      const omp_threads t(1);
      const conv_descs d(c, last - first);
      const auto hint = d.forward(false);
      const dnnl::convolution_backward_weights::primitive_desc pd(
          {dnnl::algorithm::convolution_direct, d.src_any, d.wei_any, d.dst_any, d.stride, d.dilate, d.pad_l, d.pad_r},
          conv_descs::user_scratchpad(), cpu(), hint);
      dnnl::stream s(cpu());
      const memory src = as_wanted(s, d.src_user, pd.src_desc(), x + first * in_sample, a);
      const memory diff_dst = as_wanted(s, d.dst_user, pd.diff_dst_desc(), gy + first * out_sample, a);
      result diff_wei(d.wei_user, pd.diff_weights_desc(), partial + part * wsize, a);
      dnnl::convolution_backward_weights(pd).execute(
          s, with_scratchpad({{DNNL_ARG_SRC, src}, {DNNL_ARG_DIFF_DST, diff_dst}, {DNNL_ARG_DIFF_WEIGHTS, diff_wei.mine}},
                             pd.scratchpad_desc(), a));
      diff_wei.finish(s);
    } catch (const dnnl::error&) {
      ok = false;  // every range fails alike (the same shapes); read after the join
    } catch (...) {
      failed[static_cast<std::size_t>(part)] = std::current_exception();
    }
  });
  for (const std::exception_ptr& e : failed)
    if (e) std::rethrow_exception(e);
  if (!ok) return false;
  std::copy_n(partial, wsize, gw);
  for (std::int64_t p = 1; p < parts; ++p)
    for (std::int64_t i = 0; i < wsize; ++i) gw[i] += partial[static_cast<std::size_t>(p * wsize + i)];
  return true;
}
}  // namespace strata::detail
