// SPDX-License-Identifier: MIT
// The loop engine: plan (broadcast, reorder, coalesce, tile) and execute (threads, rows).
// Everything here is plain code compiled once in src/; an expression supplies only the
// innermost row kernel, called through a function pointer once per row segment.
module;
#include <cstdint>
#include <span>
export module strata.loop;
import strata.error;
import strata.shape;
import strata.tensor;

export namespace strata {
/// Sets how many threads strata's loops may use (at least 1).
void set_num_threads(int n);
/// How many threads strata's loops may use (default: OpenMP's maximum).
int get_num_threads();
}  // namespace strata

export namespace strata::detail {
/// Elements per thread below which a loop runs single-threaded and inline.
inline constexpr std::int64_t grain = 32768;
/// Tile (elements along dim 0 x rows along dim 1) for the blocked walk when operands disagree
/// about the fastest dim: 16 rows use a whole cache line of a transposed float operand, and
/// 256-element rows keep the per-row call cheap while 256 lines (16 KiB) stay in L1.
inline constexpr std::int64_t tile = 256;
inline constexpr std::int64_t tile_rows = 16;

/// One operand of a loop: its first element and its element strides broadcast to the
/// loop's sizes (0 along broadcast dims).
struct loop_operand {
  char* data;
  int_list strides;
  std::int64_t itemsize;
};

/// A row kernel: n elements; ptrs[k] and strides[k] (bytes) for each operand k, output first.
using row_fn = void (*)(const void* ctx, char* const* ptrs, const std::int64_t* strides, std::int64_t n);

/// The loop after planning: dims innermost first, size-1 dims dropped, contiguous dims merged.
struct loop_plan {
  std::int64_t nops = 0;
  std::int64_t numel = 0;
  dim_vector sizes;                     ///< innermost first; [1] for a single element
  small_vec<std::int64_t, 48> strides;  ///< bytes: strides[d * nops + k]
  small_vec<char*, 8> base;             ///< operand k's first element
  bool tiled = false;                   ///< walk dims 0 and 1 in tile x tile blocks
};

/// Plans a loop over sizes for ops (operand 0 is the output).
loop_plan make_plan(int_list sizes, std::span<const loop_operand> ops);

/// Element strides for a fresh output of the given sizes that follow the inputs' memory
/// order (PyTorch's rule for an undefined output): eval(a.t() * 2) walks a's memory.
dim_vector fresh_strides(int_list sizes, std::span<const loop_operand> inputs);

/// Runs fn over the plan, splitting across threads above the grain.
void execute(const loop_plan& plan, row_fn fn, const void* ctx);

/// True when two elements of a view share memory (stride 0 with size > 1, overlapping
/// unfold or as_strided windows); decided exactly up to a large span, conservatively beyond.
bool has_internal_overlap(int_list sizes, int_list strides);

/// How two views of the same storage relate.
enum class overlap { none, same, partial };
/// Compares views a and b (element layouts with the given itemsizes) of one storage; reasons
/// about strides, so interleaved but disjoint views (x[:, ::2], x[:, 1::2]) are `none`.
overlap memory_overlap(const layout& a, std::int64_t itemsize_a, const layout& b, std::int64_t itemsize_b);

/// Raised by integer division kernels on a zero divisor; read and reset by the caller.
void flag_zero_division() noexcept;
/// Number of zero divisions flagged so far (atomic, never reset).
std::int64_t zero_divisions() noexcept;
}  // namespace strata::detail
