// SPDX-License-Identifier: MIT
// Loop planning and overlap analysis: plain code, compiled once.
module;
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <span>
#include <string>
#include <utility>
#include <vector>
module strata.loop;

namespace strata::detail {
namespace {
// Should dim b be walked inside dim a? Asked of the operands in order, skipping those that
// broadcast along either dim (stride 0) or cannot tell (equal strides).
bool walk_inside(std::int64_t a, std::int64_t b, std::span<const loop_operand> ops) {
  for (const loop_operand& op : ops) {
    const std::int64_t sa = op.strides[static_cast<std::size_t>(a)];
    const std::int64_t sb = op.strides[static_cast<std::size_t>(b)];
    if (sa == 0 || sb == 0 || sa == sb) continue;
    return sb < sa;
  }
  return false;
}

// Dims with size > 1, innermost first, ordered by the operands' strides. Starts from the
// row-major order and insertion-sorts (stable: ties keep the row-major order).
dim_vector loop_order(int_list sizes, std::span<const loop_operand> ops) {
  dim_vector order;
  for (std::int64_t d = static_cast<std::int64_t>(sizes.size()) - 1; d >= 0; --d)
    if (sizes[static_cast<std::size_t>(d)] != 1) order.push_back(d);
  for (std::size_t i = 1; i < order.size(); ++i)
    for (std::size_t j = i; j > 0 && walk_inside(order[j - 1], order[j], ops); --j)
      std::swap(order[j - 1], order[j]);
  return order;
}
}  // namespace

dim_vector fresh_strides(int_list sizes, std::span<const loop_operand> inputs) {
  const dim_vector order = loop_order(sizes, inputs);
  dim_vector strides = contiguous_strides(sizes);
  std::int64_t running = 1;
  for (const std::int64_t d : order) {
    strides[static_cast<std::size_t>(d)] = running;
    running *= sizes[static_cast<std::size_t>(d)];
  }
  return strides;
}

dim_vector broadcast_strides(int_list sizes, int_list strides, int_list target) {
  dim_vector out(target.size(), 0);
  const std::size_t lead = target.size() - sizes.size();
  for (std::size_t d = 0; d < sizes.size(); ++d)
    if (sizes[d] == target[lead + d]) out[lead + d] = strides[d];
  return out;
}

loop_plan flat_plan(std::int64_t numel, std::span<const loop_operand> ops) {
  loop_plan p;
  p.nops = static_cast<std::int64_t>(ops.size());
  p.numel = numel;
  p.sizes.push_back(numel);
  for (const loop_operand& op : ops) {
    p.strides.push_back(op.itemsize);
    p.base.push_back(op.data);
  }
  return p;
}

loop_plan make_plan(int_list sizes, std::span<const loop_operand> ops) {
  loop_plan p;
  p.nops = static_cast<std::int64_t>(ops.size());
  p.numel = numel_of(sizes);
  for (const loop_operand& op : ops) p.base.push_back(op.data);
  const dim_vector order = loop_order(sizes, ops);
  for (const std::int64_t d : order) {
    const auto du = static_cast<std::size_t>(d);
    const std::size_t last = p.sizes.size();
    // Merge d into the previous (inner) dim when every operand steps through both evenly.
    bool merge = last > 0;
    for (std::size_t k = 0; merge && k < ops.size(); ++k)
      merge = ops[k].strides[du] * ops[k].itemsize ==
              p.strides[(last - 1) * ops.size() + k] * p.sizes[last - 1];
    if (merge) {
      p.sizes[last - 1] *= sizes[du];
      continue;
    }
    p.sizes.push_back(sizes[du]);
    for (const loop_operand& op : ops) p.strides.push_back(op.strides[du] * op.itemsize);
  }
  if (p.sizes.empty()) {  // a single element
    p.sizes.push_back(1);
    for (std::size_t k = 0; k < ops.size(); ++k) p.strides.push_back(0);
  }
  // Tile when an operand is strided along the inner dim but unit-strided along another:
  // walking tile x tile blocks keeps both its cache lines and the others' in L1.
  const std::size_t n = p.sizes.size();
  if (n >= 2 && p.sizes[0] >= tile_rows) {
    for (std::size_t k = 0; k < ops.size() && !p.tiled; ++k) {
      const std::int64_t w = ops[k].itemsize;
      const std::int64_t s0 = p.strides[k];
      if (s0 == w || s0 == 0) continue;
      for (std::size_t d = 1; d < n; ++d) {
        if (p.strides[d * ops.size() + k] != w || p.sizes[d] < tile_rows) continue;
        if (d != 1) {  // bring the dim into position 1
          std::swap(p.sizes[1], p.sizes[d]);
          for (std::size_t j = 0; j < ops.size(); ++j)
            std::swap(p.strides[ops.size() + j], p.strides[d * ops.size() + j]);
        }
        p.tiled = true;
        break;
      }
    }
  }
  return p;
}

namespace {
struct stride_size {
  std::int64_t stride, size;
};
}  // namespace

bool has_internal_overlap(int_list sizes, int_list strides) {
  small_vec<stride_size, 16> dims;  // dims with size > 1 (no allocation up to rank 16)
  for (std::size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 0) return false;
    if (sizes[d] == 1) continue;
    if (strides[d] == 0) return true;
    dims.push_back({strides[d] < 0 ? -strides[d] : strides[d], sizes[d]});
  }
  std::sort(dims.begin(), dims.end(), [](stride_size a, stride_size b) { return a.stride < b.stride; });
  // Sufficient: each stride steps past everything the smaller dims reach.
  std::int64_t reach = 0;
  bool nested = true;
  for (const auto& [stride, size] : dims) {
    if (stride <= reach) { nested = false; break; }
    reach += stride * (size - 1);
  }
  if (nested) return false;
  // Otherwise decide exactly by marking every element's offset, if the span is modest.
  constexpr std::int64_t max_span = std::int64_t{1} << 26;
  if (reach >= max_span) return true;  // cannot tell cheaply: refuse rather than risk it
  std::vector<bool> seen(static_cast<std::size_t>(reach + 1), false);
  std::vector<std::int64_t> idx(dims.size(), 0);
  std::int64_t off = 0;
  for (;;) {
    if (seen[static_cast<std::size_t>(off)]) return true;
    seen[static_cast<std::size_t>(off)] = true;
    std::size_t d = 0;
    for (; d < dims.size(); ++d) {
      off += dims[d].stride;
      if (++idx[d] < dims[d].size) break;
      off -= dims[d].stride * idx[d];
      idx[d] = 0;
    }
    if (d == dims.size()) return false;
  }
}

std::string overlap_message() {
  return "unsupported operation: more than one element of the written-to tensor refers to a single "
         "memory location. Please clone() the tensor before performing the operation.";
}

void throw_stale_input(std::uint64_t built, std::uint64_t now) {
  throw error("this lazy expression reads a tensor that was written in place after the expression was built "
              "(its version was " + std::to_string(built) + ", now " + std::to_string(now) + "): PyTorch "
              "computes an expression where it is written, strata where it is evaluated, so the result would "
              "use the new values. Evaluate the expression into a tensor before the write "
              "(strata::Tensor y = ...; or .eval()).");
}

void check_writable(const layout& l) {
  // A contiguous tensor never overlaps itself: skip the analysis in the common case.
  if (!is_contiguous(l.sizes, l.strides) && has_internal_overlap(l.sizes, l.strides))
    throw overlap_error(overlap_message());
}

overlap memory_overlap(const layout& a, std::int64_t wa, const layout& b, std::int64_t wb) {
  const std::int64_t na = numel_of(a.sizes), nb = numel_of(b.sizes);
  if (na == 0 || nb == 0) return overlap::none;
  if (wa == wb && a.offset == b.offset && a.sizes == b.sizes && a.strides == b.strides)
    return overlap::same;
  // Byte ranges [lo, hi) of each view.
  auto range = [](const layout& l, std::int64_t w) {
    std::int64_t lo = l.offset * w, hi = l.offset * w;
    for (std::size_t d = 0; d < l.sizes.size(); ++d) {
      const std::int64_t span = (l.sizes[d] - 1) * l.strides[d] * w;
      (span < 0 ? lo : hi) += span;
    }
    return std::pair{lo, hi + w};
  };
  const auto [alo, ahi] = range(a, wa);
  const auto [blo, bhi] = range(b, wb);
  if (ahi <= blo || bhi <= alo) return overlap::none;
  // Every element of a starts at a.offset*wa modulo g (the gcd of all byte strides), and
  // likewise for b: if no start of b can fall within an element of a (nor the reverse),
  // the views interleave without touching.
  std::int64_t g = 0;
  for (std::size_t d = 0; d < a.sizes.size(); ++d)
    if (a.sizes[d] > 1) g = std::gcd(g, a.strides[d] * wa);
  for (std::size_t d = 0; d < b.sizes.size(); ++d)
    if (b.sizes[d] > 1) g = std::gcd(g, b.strides[d] * wb);
  if (g == 0) return overlap::partial;  // single elements whose ranges intersect
  const std::int64_t r = (((b.offset * wb - a.offset * wa) % g) + g) % g;  // b - a, mod g
  // Overlap needs some y - x in (-wb, wa) with y - x = r (mod g).
  if (r >= wa && g - r >= wb) return overlap::none;
  return overlap::partial;
}
}  // namespace strata::detail
