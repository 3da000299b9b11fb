// SPDX-License-Identifier: MIT
// The only door to oneDNN (libdnnl, the library libtorch's CPU convolutions run on): a plain
// translation unit, so that no module interface or consumer sees its headers.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>

namespace strata::detail {
/// A float32 convolution of contiguous N C spatial... tensors over `dims` spatial dims (1-3):
/// x [n, cin, in...], w [cout, cin / groups, k...], y [n, cout, out...]; torch's stride,
/// symmetric padding and dilation (1 = none) per spatial dim.
struct dnnl_conv_shape {
  int dims = 2;
  std::int64_t n = 0, cin = 0, cout = 0, groups = 1;
  std::array<std::int64_t, 3> in{}, out{}, k{}, stride{}, pad{}, dilation{};
};
/// Where a call's buffers (reordered tensors, oneDNN's scratchpad) come from: allocate(ctx,
/// bytes) returns memory that stays valid until the call returns (thread-safe).
struct dnnl_allocator {
  void* (*allocate)(void* ctx, std::size_t bytes);
  void* ctx;
};
/// y = conv(x, w) (+ bias when not null) on `threads` threads; false (nothing written) when
/// oneDNN does not take the shape.
bool dnnl_conv_forward(const dnnl_conv_shape& c, const float* x, const float* w, const float* bias, float* y,
                       int threads, const dnnl_allocator& buffers);
/// gx = the input gradient of conv for the output gradient gy, on `threads` threads.
bool dnnl_conv_backward_data(const dnnl_conv_shape& c, const float* gy, const float* w, float* gx, int threads,
                             const dnnl_allocator& buffers);
/// gw = the weight gradient of conv for input x and output gradient gy: the samples in a fixed
/// number of ranges, each on one thread, their sums added in order (the same bits for any
/// thread count).
bool dnnl_conv_backward_weights(const dnnl_conv_shape& c, const float* x, const float* gy, float* gw, int threads,
                                const dnnl_allocator& buffers);
}  // namespace strata::detail
