// SPDX-License-Identifier: MIT
// The loop engine (internal): one iteration context for element-wise assignment and for
// reductions. Planning (broadcast, reorder, coalesce, tile, overlap) and execution (the
// odometer, threads, pairwise trees, per-call status) are plain code compiled once in src/;
// an expression supplies only row kernels, called through function pointers.
//
// This module is strata's internal layer: strata.tensor, strata.expr and strata.io import it,
// nothing re-exports it, so none of its names are visible to users of `import strata;`.
export module strata.loop;
import strata.std;
import strata.error;
import strata.dtype;
import strata.shape;

export namespace strata::detail {
// ---- element types and conversion ----
template <class T> inline constexpr bool is_complex_v = false;
template <class T> inline constexpr bool is_complex_v<std::complex<T>> = true;
template <class T> inline constexpr bool is_reduced_float_v = std::is_same_v<T, half> || std::is_same_v<T, bfloat16>;

/// The type arithmetic runs in: half and bfloat16 compute in float and round once when stored.
template <class T>
using compute_t = std::conditional_t<is_reduced_float_v<T>, float, T>;

/// Float-to-integer conversion as x86's cvtt instructions do it (what PyTorch's casts give
/// on this platform), without C++'s undefined behaviour: out of range gives the minimum of
/// int32 (targets up to 32 bits, then narrowed modulo 2^bits) or of int64.
template <class To>
To float_to_integer(double d) noexcept {
  if constexpr (sizeof(To) == 8) {
    if (!(d >= -0x1p63 && d < 0x1p63)) return static_cast<To>(std::numeric_limits<std::int64_t>::min());
    return static_cast<To>(static_cast<std::int64_t>(d));
  } else {
    if (!(d > -0x1p31 - 1.0 && d < 0x1p31)) return static_cast<To>(std::numeric_limits<std::int32_t>::min());
    return static_cast<To>(static_cast<std::int32_t>(d));
  }
}

/// Converts one element as PyTorch's copy_ does (complex to real keeps the real part).
template <class To, class From>
constexpr To convert(const From& v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (is_complex_v<From> && !is_complex_v<To>) {
    if constexpr (std::is_same_v<To, bool>) return v.real() != 0 || v.imag() != 0;
    else return convert<To>(v.real());
  } else if constexpr (is_complex_v<To>) {
    using R = typename To::value_type;
    if constexpr (is_complex_v<From>) return To(static_cast<R>(v.real()), static_cast<R>(v.imag()));
    else return To(convert<R>(v), R(0));
  } else if constexpr (is_reduced_float_v<From>) {
    return convert<To>(static_cast<float>(v));
  } else if constexpr (is_reduced_float_v<To>) {
    return To(convert<float>(v));
  } else if constexpr (std::is_same_v<To, bool>) {
    return v != 0;
  } else if constexpr (std::is_same_v<From, bool>) {
    return static_cast<To>(v ? 1 : 0);
  } else if constexpr (std::is_integral_v<To> && std::is_same_v<From, float128>) {
    const double d = static_cast<double>(v);
    if (!(d >= -0x1p63 && d < 0x1p63)) return float_to_integer<To>(d);
    if constexpr (sizeof(To) == 8) return static_cast<To>(static_cast<std::int64_t>(v));
    return float_to_integer<To>(static_cast<double>(static_cast<std::int64_t>(v)));
  } else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>) {
    return float_to_integer<To>(static_cast<double>(v));
  } else {
    return static_cast<To>(v);  // integer <-> integer (modular), to/from float and float128
  }
}

// ---- type lists (the leaf types of an expression) ----
template <class... Ts> struct type_list {};
template <class A, class B> struct concat;
template <class... A, class... B> struct concat<type_list<A...>, type_list<B...>> { using type = type_list<A..., B...>; };
template <class... Ls> struct concat_all { using type = type_list<>; };
template <class L, class... Ls> struct concat_all<L, Ls...> {
  using type = typename concat<L, typename concat_all<Ls...>::type>::type;
};
template <std::size_t K, class L> struct leaf_at;
template <std::size_t K, class T, class... Ts> struct leaf_at<K, type_list<T, Ts...>> : leaf_at<K - 1, type_list<Ts...>> {};
template <class T, class... Ts> struct leaf_at<0, type_list<T, Ts...>> { using type = T; };
template <class L> struct all_trivial;
template <class... Ts> struct all_trivial<type_list<Ts...>> {
  static constexpr bool value = (__is_trivially_copyable(Ts) && ...);
};

// ---- hooks between the parts ----
/// Lazy expression nodes (not tensors, not scalars) mark themselves with this flag.
template <class E>
concept lazy_expression = requires { E::is_strata_expression; };
/// The version of an expression's leaf that is not checked when the expression is evaluated.
inline constexpr std::uint64_t unversioned = ~std::uint64_t{0};
/// Throws the error for an expression evaluated after one of its inputs was written in place.
[[noreturn]] void throw_stale_input(std::uint64_t built, std::uint64_t now);
/// The sum_to a view's gradient needs (an expand's), supplied by strata.expr.
template <class T>
struct reductions;

// ---- the metadata of a strided view ----
/// Element (i0, i1, ...) sits at offset + sum(i_k * strides[k]).
struct layout {
  dim_vector sizes;
  dim_vector strides;
  std::int64_t offset = 0;
};

// ---- the plan ----
/// Elements per thread below which a loop runs single-threaded and inline.
inline constexpr std::int64_t grain = 32768;
/// Tile (elements along dim 0 x rows along dim 1) for the blocked walk when operands disagree
/// about the fastest dim: 16 x 16 is one register transpose of 4-byte elements with AVX-512
/// (a 1 KiB buffer), and rows of 16 run the row loop at a length known at compile time. The
/// executor walks tiles in blocks of 16 x 16 tiles. Measured on W5 (`a.t() + b`, 4096^2 f32,
/// Zen 4): 64 x 64 tiles walked in bands of rows ran at 0.55x of a blocked hand loop.
inline constexpr std::int64_t tile = 16;
inline constexpr std::int64_t tile_rows = 16;
/// Rows of a large plan are walked a few at a time, `piece` elements of each in turn (see
/// src/execute.cpp, run_elements): at most `piece_rows` rows, handed to the tile kernel as
/// runs of piece x rows tiles.
inline constexpr std::int64_t piece = 64;
inline constexpr std::int64_t piece_rows = 4;
static_assert(piece * piece_rows <= tile * tile_rows, "a tile kernel's buffers hold a piece of every row");
/// At most this many operands (output included) and dims in one loop.
inline constexpr std::size_t max_operands = 64;

/// One operand of a loop: its first element and its element strides broadcast to the
/// loop's sizes (0 along broadcast dims).
struct loop_operand {
  char* data;
  int_list strides;
  std::int64_t itemsize;
};

/// The loop after planning: dims innermost first, size-1 dims dropped, contiguous dims merged.
/// For a reduction, operand 0 is the output with stride 0 along the reduced dims.
struct loop_plan {
  std::int64_t nops = 0;
  std::int64_t numel = 0;
  dim_vector sizes;                     ///< innermost first; [1] for a single element
  small_vec<std::int64_t, 48> strides;  ///< bytes: strides[d * nops + k]
  small_vec<char*, 8> base;             ///< operand k's first element
  bool tiled = false;                   ///< walk dims 0 and 1 in tile x tile_rows blocks
};

/// Plans a loop over sizes for ops (operand 0 is the output).
loop_plan make_plan(int_list sizes, std::span<const loop_operand> ops);
/// The plan of a loop whose operands are all contiguous with the same sizes: one flat dim.
loop_plan flat_plan(std::int64_t numel, std::span<const loop_operand> ops);

/// Element strides for a fresh output of the given sizes that follow the inputs' memory
/// order (PyTorch's rule for an undefined output): eval(a.t() * 2) walks a's memory.
dim_vector fresh_strides(int_list sizes, std::span<const loop_operand> inputs);

/// Strides of a view (sizes, strides) broadcast to target (stride 0 along new and expanded
/// dims); the caller has checked that the shapes broadcast.
dim_vector broadcast_strides(int_list sizes, int_list strides, int_list target);

// ---- per-call status ----
/// What a loop found while running (an integer division by zero, ...): one per call, so two
/// user threads evaluating at once never see each other's errors.
class loop_status {
 public:
  /// Records an integer division by zero (any thread of this call may).
  inline void zero_division() noexcept { flags_.fetch_or(zero_division_flag, std::memory_order_relaxed); }
  /// Throws the error the loop recorded, if any.
  void raise() const;

 private:
  static constexpr unsigned zero_division_flag = 1;
  std::atomic<unsigned> flags_{0};
};

// ---- element-wise execution ----
/// A row kernel: n elements; ptrs[k] and strides[k] (bytes) for each operand k, output first.
using row_fn = void (*)(const void* ctx, char* const* ptrs, const std::int64_t* strides, std::int64_t n,
                        loop_status* status);

/// A run of tiles: `count` tiles of n0 x n1 elements (dims 0 and 1), tile c of operand k at
/// ptrs[k] + c * step[k]; s0[k] and s1[k] step operand k along dims 0 and 1 (all in bytes).
/// The tiles of a tiled plan, or pieces (`piece` x up to `piece_rows`) of rows an untiled plan
/// walks a few at a time, or (`flat`) n1 short rows computed as one row of n0 * n1 elements.
struct tile_span {
  const std::int64_t* s0;
  const std::int64_t* s1;
  const std::int64_t* step;
  std::int64_t count, n0, n1;
  std::int64_t nops;   ///< operands, output included
  bool prefetch;       ///< the operands are beyond the caches: prefetch_tile pays
  bool flat = false;   ///< one tile of n1 short rows computed as one row, the output continuing
                       ///< its row into the next (s1 = n0 * s0)
  /// A flat span's rows across several dims: row j of operand k at ptrs[k] + rows_at[j * nops + k]
  /// (the output's still continuing) instead of ptrs[k] + j * s1[k]; null along dim 1 alone.
  const std::int64_t* rows_at = nullptr;
};
/// A tile kernel: runs the tiles of span (one call per run, so its setup is paid once a run).
using tile_fn = void (*)(const void* ctx, char* const* ptrs, const tile_span& span, loop_status* status);
/// Prefetches the lines tile c + 2 of span reads, if span.prefetch and the tile is in span: a
/// tile reads 16 short rows of each operand, too many streams for the hardware prefetchers.
void prefetch_tile(char* const* ptrs, const tile_span& span, std::int64_t c);
/// Runs the tiles of span row by row through fn, as the operands lie (for kernels without a
/// tile path of their own, and tiles with nothing to transpose).
void run_tile_rows(row_fn fn, const void* ctx, char* const* ptrs, const tile_span& span, loop_status* status);

/// Runs on each thread after its last row or tile (a kernel with streaming stores fences them).
using finish_fn = void (*)();

/// Runs fn over the plan (a tiled plan hands runs of whole tiles to tile, or, without one, their
/// rows to fn), splitting across threads above the grain; throws what the loop recorded in its
/// status.
void execute(const loop_plan& plan, row_fn fn, tile_fn tile, const void* ctx, finish_fn finish = nullptr);

// ---- reductions ----
/// The row kernels of one reduction, on accumulators of acc_size bytes (at most 64). The
/// executor owns the walk, the threads and the pairwise trees; these only touch rows.
struct reduce_kernel {
  const void* ctx;
  std::int64_t acc_size;
  /// acc[0..n) = the identity (constructs accumulators in raw memory).
  void (*init)(void* acc, std::int64_t n);
  /// dst[j] = combine(dst[j], src[j]) for j < n.
  void (*combine)(void* dst, const void* src, std::int64_t n);
  /// *acc = combine(*acc, the reduction of n elements along dim 0 at ptrs[1..]).
  void (*inner)(const void* ctx, char* const* ptrs, const std::int64_t* strides, std::int64_t n, void* acc,
                loop_status* status);
  /// acc[j] = combine(acc[j], element j along dim 0 of each of `rows` rows) for j < n, the
  /// rows one at a time in order (rows of up to 4 KiB of accumulators), or taken outer_group
  /// at a time and combined pairwise in registers first; row r's operands are at
  /// ptrs[i] + r * row_step[i].
  void (*outer)(const void* ctx, char* const* ptrs, const std::int64_t* strides, std::int64_t n, void* acc,
                loop_status* status, std::int64_t rows, const std::int64_t* row_step);
  /// outer() of consecutive tree leaves of leaf_rows rows each (`rows` in all, the last leaf
  /// possibly shorter), each from the identity into its own n accumulators at
  /// out + leaf * out_stride bytes: one call for a run of leaves, the bits of one outer() each.
  void (*leaves)(const void* ctx, char* const* ptrs, const std::int64_t* strides, std::int64_t n, loop_status* status,
                 std::int64_t rows, const std::int64_t* row_step, std::int64_t leaf_rows, char* out,
                 std::int64_t out_stride);
  /// For each of count outputs (output k at ptrs[0] + k * step[0], its inputs at
  /// ptrs[i] + k * step[i]): reduce n elements along dim 0 and write the result (combine it
  /// into the accumulator there when add).
  void (*rows)(const void* ctx, char* const* ptrs, const std::int64_t* strides, std::int64_t n,
               std::int64_t count, const std::int64_t* step, loop_status* status, bool add);
  /// out[j * stride] = acc[j] for j < n (out is the accumulator type).
  void (*store)(char* out, std::int64_t stride, const void* acc, std::int64_t n);
  /// The values are an expression's (computed by the staging): runs of short rows whose inputs
  /// repeat a row or are broadcast along it are computed as one run (runs_as_one), not only
  /// rows back to back.
  bool computes_runs = false;
};

inline constexpr std::int64_t reduce_chunk = 512;    ///< elements evaluated at a time
inline constexpr std::int64_t reduce_block = 4096;   ///< inner reductions: elements per tree leaf
inline constexpr std::int64_t reduce_rows = 64;      ///< outer reductions: rows per tree leaf
inline constexpr std::int64_t outer_segment = 4096;  ///< outer reductions: kept elements per task
inline constexpr std::int64_t outer_group = 8;       ///< outer reductions: long rows combined in registers
inline constexpr int parallel_split = 16;            ///< tree leaves' groups that may run in parallel
inline constexpr std::int64_t short_row = 16;        ///< rows this short are reduced across their neighbours

/// Lanes for outer reductions of short rows lying back to back (x [N, 5] summed over dim 0):
/// the rows per period, the fewest whole rows of n accumulators of `size` bytes that fill
/// whole 64-byte vectors, at least eight of them (independent chains); 0 when the rows are
/// longer than short_row or a period would pass 1 KiB (16 vectors).
constexpr std::int64_t short_period(std::int64_t n, std::int64_t size) {
  if (n <= 0 || n > short_row) return 0;
  const std::int64_t k = 64 / std::gcd(n * size, std::int64_t{64});
  const std::int64_t m = (512 + k * n * size - 1) / (k * n * size);
  return k * m * n * size <= 1024 ? k * m : 0;
}
/// True when in every input (operands 1..nops-1) runs of n elements, s[k] bytes apart,
/// follow one another `step[k]` bytes apart: together they are one run (step == n * s).
constexpr bool back_to_back(const std::int64_t* s, const std::int64_t* step, std::size_t nops, std::int64_t n) {
  for (std::size_t k = 1; k < nops; ++k)
    if (step[k] != n * s[k]) return false;
  return true;
}
/// True when every input (operands 1..nops-1) either continues its run of n elements into the
/// next (step == n * s), repeats the run (step == 0: w in x[N, 5] * w) or holds one value a
/// run (s == 0): the staging computes such runs as one (compute_runs).
constexpr bool runs_as_one(const std::int64_t* s, const std::int64_t* step, std::size_t nops, std::int64_t n) {
  for (std::size_t k = 1; k < nops; ++k)
    if (step[k] != n * s[k] && step[k] != 0 && s[k] != 0) return false;
  return true;
}

/// Runs the reduction planned in p (operand 0: the accumulator-typed output, stride 0 along
/// reduced dims). Every result is a fixed-shape pairwise tree over blocks whose top
/// parallel_split groups are the same for any thread count: bitwise identical with 1 or N
/// threads. Throws what the loop recorded in its status.
void reduce_execute(const loop_plan& p, const reduce_kernel& k);

// ---- overlap ----
/// True when two elements of a view share memory (stride 0 with size > 1, overlapping
/// unfold or as_strided windows); decided exactly up to a large span, conservatively beyond.
bool has_internal_overlap(int_list sizes, int_list strides);

/// PyTorch's message for a write into a tensor whose elements share memory.
std::string overlap_message();
/// Throws overlap_error when a tensor about to be written has elements sharing memory.
void check_writable(const layout& l);

/// How two views of the same storage relate.
enum class overlap { none, same, partial };
/// Compares views a and b (element layouts with the given itemsizes) of one storage; reasons
/// about strides, so interleaved but disjoint views (x[:, ::2], x[:, 1::2]) are `none`.
overlap memory_overlap(const layout& a, std::int64_t itemsize_a, const layout& b, std::int64_t itemsize_b);
/// Whether writing a view (element size wd) from another view of the same storage (element
/// size ws) that relates to it as o must go through a temporary: an exact alias reads each
/// element just before overwriting it (safe) unless the element sizes differ.
constexpr bool needs_temporary(overlap o, std::int64_t wd, std::int64_t ws) noexcept {
  return o == overlap::partial || (o == overlap::same && wd != ws);
}

// ---- threads ----
/// Sets how many threads loops may use (at least 1).
void set_thread_count(int n);
/// How many threads loops may use (default: OpenMP's maximum).
int thread_count();

// ---- vector math (src/vmath.cpp: SLEEF, dispatched on the running CPU) ----
// Declared for the global module: src/vmath.cpp is a plain translation unit (src/vmath.hpp).
extern "C++" {
/// The functions vmath evaluates (SLEEF's 1.0-ulp variants).
enum class vfn : int { exp, expm1, log, log1p, sin, cos, tan, tanh, count };
/// y[i] = f(x[i]) for i < n (x == y allowed).
void vmath(vfn f, const float* x, float* y, std::int64_t n);
/// y[i] = f(x[i]) for i < n (x == y allowed).
void vmath(vfn f, const double* x, double* y, std::int64_t n);
/// y[i] = pow(x[i], e[i]) for i < n (y may be x or e).
void vpow(const float* x, const float* e, float* y, std::int64_t n);
/// y[i] = pow(x[i], e[i]) for i < n (y may be x or e).
void vpow(const double* x, const double* e, double* y, std::int64_t n);
}

/// Values per chunk when an expression is evaluated node by node (vector math inside).
inline constexpr std::int64_t vchunk = 512;
/// An operation with an array form for compute type F (exp, tanh, sigmoid, ... on float/double).
template <class Op, class F>
concept chunk_op = (std::is_same_v<F, float> || std::is_same_v<F, double>) &&
                   requires(F* x, std::int64_t n) { Op::apply_chunk(x, x, n); };
/// A binary operation with an array form for compute type F (pow).
template <class Op, class F>
concept chunk_op2 = (std::is_same_v<F, float> || std::is_same_v<F, double>) &&
                    requires(F* x, std::int64_t n) { Op::apply_chunk2(x, x, n); };

/// True when some node of E evaluates by array functions (then E is evaluated by chunks).
template <class E>
constexpr bool uses_vmath() {
  if constexpr (requires { E::has_vmath; }) return E::has_vmath;
  else return false;
}

// ---- row kernels (templates: instantiated where an expression is assigned) ----
/// Member I of a pack.
template <std::size_t I, class T>
struct pack_slot {
  T value;
};
template <class Seq, class... Ts>
struct pack_base;
template <std::size_t... I, class... Ts>
struct pack_base<std::index_sequence<I...>, Ts...> : pack_slot<I, Ts>... {};
/// A plain aggregate of Ts, member I read by get<I>: the row kernels' operand pointers and
/// buffers. Not a std::tuple: every expression instantiates a few, and a tuple's constructor
/// constraints (type traits whose specializations load from every module strata is built
/// of) were a fifth of the compile time of a translation unit assigning one expression.
template <class... Ts>
struct pack : pack_base<std::index_sequence_for<Ts...>, Ts...> {};
/// A pack of the values ts.
template <class... Ts>
pack<Ts...> make_pack(Ts... ts) {
  return pack<Ts...>{{{ts}...}};
}
/// Member I of a pack.
template <std::size_t I, class T>
constexpr const T& get(const pack_slot<I, T>& s) noexcept {
  return s.value;
}
template <std::size_t I, class T>
constexpr T& get(pack_slot<I, T>& s) noexcept {
  return s.value;
}

/// The pointers a row kernel hands to an expression's at<I>(args, i): one per leaf, plus the
/// call's status for operations that can fail (integer division by zero).
template <class Tuple>
struct row_args {
  Tuple ptrs;
  loop_status* status;
};

/// Scratch for one chunk of an operand; deliberately left uninitialized (the user-provided
/// constructor keeps even a value-initialized one from zeroing its data on every row).
template <class T, std::size_t N>
struct chunk_buffer {
  chunk_buffer() {}  // NOLINT: user-provided so that value-initialization does not zero data
  alignas(64) T data[N];
};

/// Reads a strided operand: p[i] is the element i * stride bytes further.
template <class T>
struct strided_ptr {
  const char* p;
  std::int64_t stride;
  T operator[](std::int64_t i) const { return *reinterpret_cast<const T*>(p + i * stride); }
};

// Data movement by element width (w bytes), compiled once in src/gather.cpp and shared by every
// expression, reduction and derivative.
/// dst[i] = the element at src + i * stride, i < n; stride 0 fills. Strides of 2 and 4
/// elements, and of 3 for 4- and 8-byte elements (a channel of RGB data), are vectorised.
void gather(const char* src, std::int64_t stride, std::int64_t n, std::int64_t w, char* dst);
/// Row j of dst (n0 elements of w bytes) = n0 copies of the element at src + j * s1, j < n1.
void fill_rows(const char* src, std::int64_t s1, std::int64_t n0, std::int64_t n1, std::int64_t w, char* dst);
/// Row j of dst (n0 elements of w bytes, back to back) = the n0 elements at src + j * s1, s0
/// bytes apart, j < n1.
void gather_rows(const char* src, std::int64_t s0, std::int64_t s1, std::int64_t n0, std::int64_t n1, std::int64_t w,
                 char* dst);
/// The same with row j at src + at[j * step] (rows across several dims).
void gather_rows_at(const char* src, std::int64_t s0, const std::int64_t* at, std::int64_t step, std::int64_t n0,
                    std::int64_t n1, std::int64_t w, char* dst);
/// One step of moving a row's strided operands into the buffers of the row loop, for any chunk
/// of the row (worked out once a row by plan_gather, run for each chunk by gather_jobs).
struct gather_job {
  /// A strided operand; a channel group (channels of the same stride-3 data read from the same
  /// vector loads); single channels of up to four stride-3 operands read in one loop.
  enum class kind : std::uint8_t { strided, channels, streams };
  kind how;
  int count;            ///< streams: how many; channels: bit c for channel c
  std::int64_t stride;  ///< bytes between elements, the same for every source of the job
  std::int64_t w;       ///< bytes an element
  const char* src[4];   ///< element 0 of each source (channels: of the lowest channel)
  char* dst[4];         ///< each source's buffer (channels: by channel, null for one not read)
};
/// Plans a row of count operands (ptrs[k], byte stride s[k], w[k] bytes each) for the row
/// loop: in[k] = buf[k] for an operand read through a buffer (a broadcast operand's already
/// holds its value), or the buffer of an earlier operand that reads the same elements; unit-
/// stride operands are left to the caller (read in place). Writes the jobs that fill the
/// buffers to jobs (at most count) and returns how many. Operands of stride 3 (4- or 8-byte
/// elements): channels of the same data come out of the same vector loads, single channels of
/// different data are read in one loop, up to four at a time.
std::size_t plan_gather(char* const* ptrs, const std::int64_t* s, const std::int64_t* w, std::size_t count,
                        char* const* buf, const char** in, gather_job* jobs);
/// Runs the jobs for elements [c, c + len) of a row of n elements.
void gather_jobs(const gather_job* jobs, std::size_t count, std::int64_t c, std::int64_t len, std::int64_t n);
/// The element at dst + i * stride = src[i], i < n.
void scatter(const char* src, std::int64_t n, std::int64_t w, char* dst, std::int64_t stride);
/// dst[j * n0 + i] = element (i, j) at src + i * s0 + j * w (i < n0, j < n1): a tile read
/// along dim 1 written along dim 0, through in-register transposes of 4- and 8-byte elements.
void transpose_in(const char* src, std::int64_t s0, std::int64_t w, char* dst, std::int64_t n0, std::int64_t n1);
/// Element (i, j) at out + i * s0 + j * w = buf[j * n0 + i]: transpose_in's inverse.
void transpose_out(const char* buf, std::int64_t w, char* out, std::int64_t s0, std::int64_t n0, std::int64_t n1);

/// What an element-wise loop computes, with every decision about data movement left to the
/// staging executor (src/stage.cpp): the expression's arithmetic on unit-stride operands. A
/// kernel<O, E> fills one of these; the executor calls it on operands read in place or staged
/// into L1 buffers (filled, gathered, channels, transposed tiles).
struct compute_fns {
  /// n elements; operand k (the output first) unit-stride at ptrs[k].
  void (*contiguous)(const void* ctx, char* const* ptrs, std::int64_t n, loop_status* st);
  /// tiles x rows rows of `tile` (rows16) or `piece` (rows64) unit-stride elements; row r of
  /// tile t of operand k at ptrs[k] + t * tstep[k] + r * step[k]: the loop at a length known
  /// at compile time, a whole run of tiles in one call.
  void (*rows16)(const void* ctx, char* const* ptrs, const std::int64_t* tstep, const std::int64_t* step,
                 std::int64_t tiles, std::int64_t rows, loop_status* st);
  void (*rows64)(const void* ctx, char* const* ptrs, const std::int64_t* tstep, const std::int64_t* step,
                 std::int64_t tiles, std::int64_t rows, loop_status* st);
  /// Element types that are not trivially copyable (float128) cannot be staged by bytes: n
  /// elements at any byte strides s[k]. Null for the others.
  row_fn strided;
  std::size_t nops;            ///< operands, the output first
  const std::int64_t* widths;  ///< bytes an element, per operand
  bool copy;                   ///< a plain copy (out = a tensor of its type): rows are moved, not computed
};
/// Runs an element-wise loop over a plan: each row's operands are read in place, filled,
/// gathered or transposed into L1 buffers as the plan's strides need, and fns computes on
/// unit-stride data. Throws what the loop recorded in its status.
void run_compute(const loop_plan& plan, const void* ctx, const compute_fns& fns);
/// One row of n elements at byte strides s[k] through fns (operand 0 the output): what a
/// reduction's values need.
void compute_row(const void* ctx, const compute_fns& fns, char* const* ptrs, const std::int64_t* s, std::int64_t n,
                 loop_status* st);
/// `runs` runs of n elements, run r of operand k at ptrs[k] + r * step[k], through fns, the
/// inputs as runs_as_one allows and the output's runs back to back: computed as one row.
void compute_runs(const void* ctx, const compute_fns& fns, char* const* ptrs, const std::int64_t* s,
                  const std::int64_t* step, std::int64_t n, std::int64_t runs, loop_status* status);

/// Bytes an element of the output O and of each leaf type.
template <class O, class L> struct operand_widths;
template <class O, class... Ts> struct operand_widths<O, type_list<Ts...>> {
  static constexpr std::int64_t value[] = {static_cast<std::int64_t>(sizeof(O)), static_cast<std::int64_t>(sizeof(Ts))...};
};

/// The arithmetic of `out = e` for an output of type O, for any E with value_type, leaf_types,
/// leaf_count and at<I>(args, i) (or eval_chunk, with vector math): a plain indexed loop the
/// compiler vectorises, at a run-time length or at the staging executor's two known lengths.
/// This is all an assignment instantiates per expression.
template <class O, class E>
struct kernel {
  using leaves = typename E::leaf_types;
  static constexpr std::size_t N = E::leaf_count;
  const E* e;

  // n is an int64 or a std::integral_constant (a loop of known length).
  template <class P, class Len>
  void plain(O* out, const P& p, Len n) const {
    using V = compute_t<typename E::value_type>;
    if constexpr (uses_vmath<E>()) {
      // Vector math inside: node by node, a chunk at a time, through L1 buffers.
      chunk_buffer<V, vchunk> buf;
      for (std::int64_t c = 0; c < n; c += vchunk) {
        const std::int64_t len = n - c < vchunk ? n - c : vchunk;
        if constexpr (std::is_same_v<O, V>) {
          e->template eval_chunk<0>(p, c, len, out + c);  // straight into the output
        } else {
          e->template eval_chunk<0>(p, c, len, buf.data);
          for (std::int64_t i = 0; i < len; ++i) out[c + i] = convert<O>(buf.data[i]);
        }
      }
    } else if constexpr (std::is_same_v<Len, std::int64_t>) {
      for (std::int64_t i = 0; i < n; ++i) out[i] = convert<O>(static_cast<V>(e->template at<0>(p, i)));
    } else {
      // A known length: kept a loop for the vectoriser (unrolled first, the unknown aliasing
      // of out and the inputs would leave it scalar).
#pragma clang loop unroll(disable)
      for (std::int64_t i = 0; i < n; ++i) out[i] = convert<O>(static_cast<V>(e->template at<0>(p, i)));
    }
  }
  template <std::size_t... K>
  static auto inputs(const char* const* in, loop_status* st, std::index_sequence<K...>) {
    return row_args<pack<const typename leaf_at<K, leaves>::type*...>>{
        make_pack(reinterpret_cast<const typename leaf_at<K, leaves>::type*>(in[K])...), st};
  }

  static void contiguous(const void* ctx, char* const* ptrs, std::int64_t n, loop_status* st) {
    static_cast<const kernel*>(ctx)->plain(reinterpret_cast<O*>(ptrs[0]),
                                           inputs(ptrs + 1, st, std::make_index_sequence<N>{}), n);
  }
  // The rows are walked by a scalar loop (vectorised across rows, the loop would gather).
  template <std::int64_t L>
  static void rows(const void* ctx, char* const* ptrs, const std::int64_t* tstep, const std::int64_t* step,
                   std::int64_t tiles, std::int64_t count, loop_status* st) {
    const auto& self = *static_cast<const kernel*>(ctx);
    char* p[N + 1];
    for (std::int64_t t = 0; t < tiles; ++t) {
      for (std::size_t k = 0; k <= N; ++k) p[k] = ptrs[k] + t * tstep[k];
#pragma clang loop vectorize(disable) interleave(disable)
      for (std::int64_t r = 0; r < count; ++r) {
        self.plain(reinterpret_cast<O*>(p[0]), inputs(p + 1, st, std::make_index_sequence<N>{}),
                   std::integral_constant<std::int64_t, L>{});
        for (std::size_t k = 0; k <= N; ++k) p[k] += step[k];
      }
    }
  }
  // float128 and friends: one strided loop, no buffers.
  template <std::size_t... K>
  void strided_run(char* const* ptrs, const std::int64_t* s, std::int64_t n, loop_status* st,
                   std::index_sequence<K...>) const {
    const row_args<pack<strided_ptr<typename leaf_at<K, leaves>::type>...>> p{
        make_pack(strided_ptr<typename leaf_at<K, leaves>::type>{ptrs[K + 1], s[K + 1]}...), st};
    for (std::int64_t i = 0; i < n; ++i)
      *reinterpret_cast<O*>(ptrs[0] + i * s[0]) =
          convert<O>(static_cast<compute_t<typename E::value_type>>(e->template at<0>(p, i)));
  }
  static void strided(const void* ctx, char* const* ptrs, const std::int64_t* s, std::int64_t n, loop_status* st) {
    static_cast<const kernel*>(ctx)->strided_run(ptrs, s, n, st, std::make_index_sequence<N>{});
  }

  static constexpr bool trivial = all_trivial<leaves>::value && __is_trivially_copyable(O);
  static constexpr bool copy = requires { E::is_plain_leaf; } && std::is_same_v<typename E::value_type, O>;
  static constexpr compute_fns fns() {
    constexpr const std::int64_t* w = operand_widths<O, leaves>::value;
    if constexpr (trivial) return {&contiguous, &rows<tile>, &rows<piece>, nullptr, N + 1, w, copy};
    else return {&contiguous, nullptr, nullptr, &strided, N + 1, w, false};
  }
};

/// Runs kernel<O, E> for e over a planned loop (operand 0 the output).
template <class O, class E>
void run_kernel(const loop_plan& plan, const E& e) {
  const kernel<O, E> k{&e};
  static constexpr compute_fns fns = kernel<O, E>::fns();
  run_compute(plan, &k, fns);
}

/// Reduces a contiguous array with W interleaved accumulators (256 bytes: four 512-bit
/// registers, enough independent chains and loads in flight to reach memory bandwidth; the
/// same for any ISA, so the bits are too), then combines them pairwise. An array shorter than
/// a 64-byte vector is combined in index order, as PyTorch adds a short row ((a + b) + c for
/// three channels: torch's bits). An Op with a
/// NaN-ignoring `fast` combine (amax, amin) runs it on half as many lanes beside a NaN mask
/// (one max and one unordered compare per vector) instead of a NaN-propagating select.
template <class Op, class A, class V>
A chunk_reduce(const V* in, std::int64_t n) {
  // Elements of another type (all(x) of floats) are converted as they are read.
  const auto b = [in](std::int64_t i) { return convert<A>(in[i]); };
  if constexpr (std::is_arithmetic_v<A>) {
    constexpr int W = sizeof(A) >= 4 ? static_cast<int>(256 / sizeof(A)) : 64;
    std::int64_t i = 0;
    if constexpr (std::is_floating_point_v<A> && requires { Op::fast(A{}, A{}); }) {
      constexpr int M = W / 2;  // the mask doubles the live registers
      A lanes[M];
      bool nan[M] = {};
      for (A& a : lanes) a = Op::template identity<A>();
      for (; i + M <= n; i += M)
        for (int k = 0; k < M; ++k) {
          lanes[k] = Op::fast(lanes[k], b(i + k));
          nan[k] |= b(i + k) != b(i + k);
        }
      bool any = false;
      for (int k = 0; k < M; ++k) any |= nan[k];
      for (std::int64_t j = i; j < n; ++j) any |= b(j) != b(j);
      if (any) return std::numeric_limits<A>::quiet_NaN();
      for (int k = 0; i < n; ++i, ++k) lanes[k] = Op::fast(lanes[k], b(i));
      for (int w = M / 2; w >= 1; w /= 2)
        for (int k = 0; k < w; ++k) lanes[k] = Op::fast(lanes[k], lanes[k + w]);
      return lanes[0];
    } else {
      if (n < 64 / static_cast<std::int64_t>(sizeof(A))) {  // shorter than a vector: in index order
        A a = Op::template identity<A>();
        for (; i < n; ++i) a = Op::combine(a, b(i));
        return a;
      }
      A acc[W];
      for (A& a : acc) a = Op::template identity<A>();
      for (; i + W <= n; i += W)
        for (int k = 0; k < W; ++k) acc[k] = Op::combine(acc[k], b(i + k));
      for (int k = 0; i < n; ++i, ++k) acc[k] = Op::combine(acc[k], b(i));
      for (int w = W / 2; w >= 1; w /= 2)
        for (int k = 0; k < w; ++k) acc[k] = Op::combine(acc[k], acc[k + w]);
      return acc[0];
    }
  } else {
    A acc = Op::template identity<A>();
    for (std::int64_t i = 0; i < n; ++i) acc = Op::combine(acc, b(i));
    return acc;
  }
}

/// all (AllOf) or any of a contiguous array of 4- or 8-byte numbers as they lie, without
/// converting them to bool: each element's key (its bits, without a float's sign bit) is 0
/// exactly when the element is zero of either sign (NaN's is not: bool(NaN) is true), so
/// all() is "the smallest key is not 0" and any() "the largest key is not 0" — one integer
/// min or max a vector (after an and for floats), no masks. The loop is not unrolled: unrolled, its loads
/// were issued out of address order and a flat all() from DRAM ran 40% slower (reduce_bench).
template <bool AllOf, class V>
bool truth_reduce(const V* in, std::int64_t n) {
  static_assert(sizeof(V) == 4 || sizeof(V) == 8);
  using U = std::conditional_t<sizeof(V) == 4, std::uint32_t, std::uint64_t>;
  constexpr int W = static_cast<int>(256 / sizeof(V));
  const auto key = [in](std::int64_t j) {
    U u;
    std::memcpy(&u, in + j, sizeof u);
    if constexpr (std::is_floating_point_v<V>) u &= ~U(0) >> 1;
    return u;
  };
  const auto pick = [](U a, U b) { return AllOf ? (a < b ? a : b) : (a > b ? a : b); };
  U acc[W];
  for (U& a : acc) a = AllOf ? ~U(0) : U(0);
  std::int64_t i = 0;
#pragma clang loop unroll(disable)
  for (; i + W <= n; i += W)
    for (int k = 0; k < W; ++k) acc[k] = pick(acc[k], key(i + k));
  for (; i < n; ++i) acc[0] = pick(acc[0], key(i));
  for (int w = W / 2; w >= 1; w /= 2)
    for (int k = 0; k < w; ++k) acc[k] = pick(acc[k], acc[k + w]);
  return acc[0] != 0;
}

/// acc[j] = combine(acc[j], a pairwise tree over v[0][j] .. v[R-1][j]) for j < n: R rows are
/// summed in registers, so each accumulator is loaded and stored once per group (W7b).
template <class Op, int R, class A>
void combine_rows(const A* const* v, A* __restrict acc, std::int64_t n) {
  const A* __restrict row[R];
  for (int q = 0; q < R; ++q) row[q] = v[q];
#pragma clang loop unroll_count(4)
  for (std::int64_t j = 0; j < n; ++j) {
    A t[R];
    for (int q = 0; q < R; ++q) t[q] = row[q][j];
    for (int w = 1; w < R; w *= 2)
      for (int q = 0; q + w < R; q += 2 * w) t[q] = Op::combine(t[q], t[q + w]);
    acc[j] = Op::combine(acc[j], t[0]);
  }
}
/// acc[j] = combine(acc[j], v[j]) for j < n: one row into the accumulators (a plain loop the
/// compiler unrolls as it would a hand-written one: four vectors loaded before they are added).
template <class Op, class A>
void combine_row(const A* __restrict v, A* __restrict acc, std::int64_t n) {
  for (std::int64_t j = 0; j < n; ++j) acc[j] = Op::combine(acc[j], v[j]);
}
/// lane[i % L] = combine(lane[i % L], v[i]) for i < m, L = V 64-byte vectors of lanes held in
/// registers across the run (the short rows of an outer reduction, a period of rows at a time).
template <class Op, class A, int V>
void combine_periods(const A* __restrict v, std::int64_t m, A* __restrict lane) {
  constexpr std::int64_t L = V * 64 / static_cast<std::int64_t>(sizeof(A));
  A t[L];
  for (std::int64_t j = 0; j < L; ++j) t[j] = lane[j];
  std::int64_t i = 0;
  for (; i + L <= m; i += L)
    for (std::int64_t j = 0; j < L; ++j) t[j] = Op::combine(t[j], v[i + j]);
  for (std::int64_t j = 0; i + j < m; ++j) t[j] = Op::combine(t[j], v[i + j]);
  for (std::int64_t j = 0; j < L; ++j) lane[j] = t[j];
}
/// f.template operator()<C>() with C = count for C's start <= count <= 16 (16 for any other
/// count): a run-time count of lanes or vectors made the compile-time one a loop is written for.
template <int C, class F>
void as_constant(std::int64_t count, F&& f) {
  if constexpr (C < 16)
    if (count != C) return as_constant<C + 1>(count, f);
  f.template operator()<C>();
}
/// The same for `lanes` lanes filling 1 to 16 whole 64-byte vectors.
template <class Op, class A>
void combine_periods(const A* v, std::int64_t m, A* lane, std::int64_t lanes) {
  as_constant<1>(lanes * static_cast<std::int64_t>(sizeof(A)) / 64,
                  [&]<int V>() { combine_periods<Op, A, V>(v, m, lane); });
}
/// acc[j] = combine(acc[j], lanes j, j + N, ..., j + (k - 1) N combined in order) for j < N: the
/// periods of a periodic reduction folded, the N chains side by side in registers.
template <class Op, class A, int N>
void fold_lanes(const A* __restrict lane, std::int64_t k, A* __restrict acc) {
  A a[N];
  for (int j = 0; j < N; ++j) a[j] = lane[j];
  for (std::int64_t r = 1; r < k; ++r)
    for (int j = 0; j < N; ++j) a[j] = Op::combine(a[j], lane[r * N + j]);
  for (int j = 0; j < N; ++j) acc[j] = Op::combine(acc[j], a[j]);
}
/// The same for 1 <= n <= short_row lanes a period.
template <class Op, class A>
void fold_lanes(const A* lane, std::int64_t n, std::int64_t k, A* acc) {
  static_assert(short_row == 16);
  as_constant<1>(n, [&]<int N>() { fold_lanes<Op, A, N>(lane, k, acc); });
}
/// res[o] = the reduction of v[o * N .. o * N + N) in index order from the identity, o < m:
/// many short rows back to back, vectorised across rows (interleaved loads).
template <class Op, class A, int N>
void fold_rows(const A* __restrict v, std::int64_t m, A* __restrict res) {
  for (std::int64_t o = 0; o < m; ++o) {
    A a = Op::template identity<A>();
    for (int j = 0; j < N; ++j) a = Op::combine(a, v[o * N + j]);
    res[o] = a;
  }
}
/// The same for rows of n elements: 2 to 7 at compile time; longer rows one at a time (rows of
/// 8 or more vectorise worse across rows than the plain loop: docs/PERFORMANCE.md).
template <class Op, class A>
void fold_rows(const A* v, std::int64_t n, std::int64_t m, A* res) {
  switch (n) {
    case 2: return fold_rows<Op, A, 2>(v, m, res);
    case 3: return fold_rows<Op, A, 3>(v, m, res);
    case 4: return fold_rows<Op, A, 4>(v, m, res);
    case 5: return fold_rows<Op, A, 5>(v, m, res);
    case 6: return fold_rows<Op, A, 6>(v, m, res);
    case 7: return fold_rows<Op, A, 7>(v, m, res);
    default:
      for (std::int64_t o = 0; o < m; ++o) {
        A a = Op::template identity<A>();
        for (std::int64_t j = 0; j < n; ++j) a = Op::combine(a, v[o * n + j]);
        res[o] = a;
      }
  }
}
/// The same for a group of 1 <= rows <= outer_group rows.
template <class Op, class A>
void combine_rows(const A* const* v, std::int64_t rows, A* acc, std::int64_t n) {
  static_assert(outer_group == 8);
  switch (rows) {
    case 1: return combine_rows<Op, 1>(v, acc, n);
    case 2: return combine_rows<Op, 2>(v, acc, n);
    case 3: return combine_rows<Op, 3>(v, acc, n);
    case 4: return combine_rows<Op, 4>(v, acc, n);
    case 5: return combine_rows<Op, 5>(v, acc, n);
    case 6: return combine_rows<Op, 6>(v, acc, n);
    case 7: return combine_rows<Op, 7>(v, acc, n);
    default: return combine_rows<Op, 8>(v, acc, n);
  }
}

/// What all/any may read in place: none, or a plain tensor of 4- or 8-byte floats or integers.
enum class truth_kind { none, f32, f64, i32, i64 };

/// Where a reduction's values come from, described at run time: the reduction's loops
/// (reduction_kernels<Op, A>) are compiled once per operation and accumulator, whatever the
/// expression, and read the values a chunk at a time.
template <class A>
struct value_source {
  /// An expression's compute kernel (ctx its kernel<A, E>): values computed through compute_row.
  const compute_fns* fns;
  /// Or, without fns: n values along dim 0 (input k at ptrs[k], byte stride s[k], k >= 1) into
  /// buf, returning buf (a derivative's tape, einsum's products).
  const A* (*values)(const void* ctx, char* const* ptrs, const std::int64_t* s, std::int64_t n, A* buf,
                     loop_status* st);
  const void* ctx;
  std::size_t operands;   ///< inputs (operands 1..operands; operand 0 is the output)
  bool in_place = false;  ///< input 1 alone, a tensor of A: a unit-stride run is read where it lies
  /// Input 1 alone, a plain tensor of 4- or 8-byte numbers: all/any read it in place (unit
  /// stride) by truth_reduce, without converting to bool.
  truth_kind truth = truth_kind::none;
  /// A row reduced by the source's own kernel (einsum's dot of two contiguous rows): true if
  /// it did; null for other sources.
  bool (*reduce_row)(const void* ctx, char* const* ptrs, const std::int64_t* s, std::int64_t n, A& out) = nullptr;
};

/// The values of expression e, computed by k (which must outlive the reduction), as a
/// reduction by Op accumulating in A reads them.
template <class Op, class A, class E>
value_source<A> source_of(const kernel<A, E>& k) {
  static constexpr compute_fns fns = kernel<A, E>::fns();
  value_source<A> v{&fns, nullptr, &k, E::leaf_count};
  if constexpr (requires { E::is_plain_leaf; }) {
    using V = typename E::value_type;
    v.in_place = std::is_same_v<V, A>;
    if constexpr (requires { Op::all_of; } && std::is_same_v<A, bool> && std::is_arithmetic_v<V> &&
                  (sizeof(V) == 4 || sizeof(V) == 8)) {
      if constexpr (std::is_floating_point_v<V>) v.truth = sizeof(V) == 4 ? truth_kind::f32 : truth_kind::f64;
      else v.truth = sizeof(V) == 4 ? truth_kind::i32 : truth_kind::i64;
    }
  }
  return v;
}
/// A kernel that would not outlive the reduction.
template <class Op, class A, class E>
void source_of(const kernel<A, E>&&) = delete;

/// The row kernels of a reduction by Op, accumulating in A, of the values src produces (see
/// reduce_kernel): an expression's, a derivative's in backward, einsum's products. Compiled
/// once per (Op, A) in src/reduce.cpp for the common pairs.
template <class Op, class A>
struct reduction_kernels {
  static_assert(sizeof(A) <= 64 && std::is_trivially_destructible_v<A>,
                "reduction_kernels: accumulators are raw, never-destroyed memory of at most 64 bytes");
  value_source<A> src;
  /// Elements of A in 4 KiB: the outer kernels' chunk of values.
  static constexpr std::int64_t chunk = sizeof(A) >= 4096 ? 1 : 4096 / static_cast<std::int64_t>(sizeof(A));

  // Pointers moved m elements along dim 0.
  void step(char** p, const std::int64_t* s, std::int64_t m) const {
    for (std::size_t k = 1; k <= src.operands; ++k) p[k] += m * s[k];
  }
  // True when runs of rows of n values are computed as one run (runs_values): the inputs' rows
  // back to back, or, for an expression's values, each input continuing, repeating or
  // broadcast along its rows.
  bool runs_flat(const std::int64_t* s, const std::int64_t* row_step, std::int64_t n) const {
    return back_to_back(s, row_step, src.operands + 1, n) || (src.fns && runs_as_one(s, row_step, src.operands + 1, n));
  }
  // The values of `rows` rows of n elements (row r of input k at p[k] + r * row_step[k]) as one
  // contiguous run of rows * n, the inputs as runs_flat allows.
  const A* runs_values(char* const* p, const std::int64_t* s, const std::int64_t* row_step, std::int64_t n,
                       std::int64_t rows, A* buf, loop_status* st) const {
    if (back_to_back(s, row_step, src.operands + 1, n)) return values(p, s, rows * n, buf, st);
    char* q[max_operands];
    std::int64_t qs[max_operands], qstep[max_operands];
    q[0] = reinterpret_cast<char*>(buf);
    qs[0] = sizeof(A);
    qstep[0] = n * static_cast<std::int64_t>(sizeof(A));
    for (std::size_t k = 1; k <= src.operands; ++k) {
      q[k] = p[k];
      qs[k] = s[k];
      qstep[k] = row_step[k];
    }
    compute_runs(src.ctx, *src.fns, q, qs, qstep, n, rows, st);
    return buf;
  }
  // n values along dim 0 as a contiguous array: in place when they lie so, else into buf.
  [[gnu::always_inline]] const A* values(char* const* p, const std::int64_t* s, std::int64_t n, A* buf, loop_status* st) const {
    if (src.in_place && s[1] == static_cast<std::int64_t>(sizeof(A))) return reinterpret_cast<const A*>(p[1]);
    if (!src.fns) return src.values(src.ctx, p, s, n, buf, st);
    char* q[max_operands];
    std::int64_t qs[max_operands];
    q[0] = reinterpret_cast<char*>(buf);
    qs[0] = sizeof(A);
    // The inputs copied one by one for the usual few (a loop would become two calls of memcpy).
    switch (const std::size_t m = src.operands) {
      default:
        for (std::size_t k = 5; k <= m; ++k) {
          q[k] = p[k];
          qs[k] = s[k];
        }
        [[fallthrough]];
      case 4: q[4] = p[4], qs[4] = s[4]; [[fallthrough]];
      case 3: q[3] = p[3], qs[3] = s[3]; [[fallthrough]];
      case 2: q[2] = p[2], qs[2] = s[2]; [[fallthrough]];
      case 1: q[1] = p[1], qs[1] = s[1]; [[fallthrough]];
      case 0: break;
    }
    compute_row(src.ctx, *src.fns, q, qs, n, st);
    return buf;
  }
  A reduce(char* const* ptrs, const std::int64_t* s, std::int64_t n, loop_status* st) const {
    // A short row: its values in index order from the identity, as short_rows folds them, so
    // that every path (one row, a run of rows, partials) gives a short row the same bits.
    if (n <= short_row) {
      chunk_buffer<A, short_row> buf;
      A a;
      fold_rows<Op>(values(ptrs, s, n, buf.data, st), n, 1, &a);
      return a;
    }
    // A plain tensor of the accumulator type is read in place. (Converting other types into
    // bool lanes in the same loop measured slower for all/any of floats than the byte buffer
    // below; truth_reduce keeps the elements' width instead.)
    if (src.in_place && s[1] == static_cast<std::int64_t>(sizeof(A)))
      return chunk_reduce<Op, A>(reinterpret_cast<const A*>(ptrs[1]), n);
    // all/any of a plain tensor of 4- or 8-byte numbers: read in place too.
    if constexpr (requires { Op::all_of; }) {
      const auto row = [&]<class V>(const V*) { return truth_reduce<Op::all_of>(reinterpret_cast<const V*>(ptrs[1]), n); };
      const std::int64_t w = s[1];
      switch (src.truth) {
        case truth_kind::none: break;
        case truth_kind::f32: if (w == 4) return row(static_cast<const float*>(nullptr)); break;
        case truth_kind::f64: if (w == 8) return row(static_cast<const double*>(nullptr)); break;
        case truth_kind::i32: if (w == 4) return row(static_cast<const std::uint32_t*>(nullptr)); break;
        case truth_kind::i64: if (w == 8) return row(static_cast<const std::uint64_t*>(nullptr)); break;
      }
    }
    // A source with a kernel of its own for this row (einsum's dot of two contiguous rows).
    if (src.reduce_row)
      if (A out; src.reduce_row(src.ctx, ptrs, s, n, out)) return out;
    chunk_buffer<A, reduce_chunk> buf;
    char* p[max_operands];
    for (std::size_t k = 0; k <= src.operands; ++k) p[k] = ptrs[k];
    A acc = Op::template identity<A>();
    for (std::int64_t c = 0; c < n; c += reduce_chunk) {
      const std::int64_t m = n - c < reduce_chunk ? n - c : reduce_chunk;
      acc = Op::combine(acc, chunk_reduce<Op, A>(values(p, s, m, buf.data, st), m));
      step(p, s, m);
    }
    return acc;
  }

  static void init(void* acc, std::int64_t n) {
    for (std::int64_t j = 0; j < n; ++j) std::construct_at(static_cast<A*>(acc) + j, Op::template identity<A>());
  }
  static void combine(void* dst, const void* src, std::int64_t n) {
    A* d = static_cast<A*>(dst);
    const A* s = static_cast<const A*>(src);
    for (std::int64_t j = 0; j < n; ++j) d[j] = Op::combine(d[j], s[j]);
  }
  static void inner(const void* ctx, char* const* ptrs, const std::int64_t* s, std::int64_t n, void* acc,
                    loop_status* st) {
    A& a = *static_cast<A*>(acc);
    a = Op::combine(a, static_cast<const reduction_kernels*>(ctx)->reduce(ptrs, s, n, st));
  }
  static void outer(const void* ctx, char* const* ptrs, const std::int64_t* s, std::int64_t n, void* acc,
                    loop_status* st, std::int64_t rows, const std::int64_t* row_step) {
    const auto& self = *static_cast<const reduction_kernels*>(ctx);
    // Each row's values a chunk at a time (in place when they are a contiguous tensor of A):
    // 4 KiB a row, 32 KiB for a group, in L1 beside the accumulators.
    chunk_buffer<A, chunk> buf[outer_group];
    const std::int64_t period = short_period(n, sizeof(A));
    if (period > 0 && rows >= period && self.runs_flat(s, row_step, n))
      return self.periodic(ptrs, s, row_step, n, static_cast<A*>(acc), st, rows, period, buf[0].data);
    if (n <= chunk) {
      // Rows of up to 4 KiB one at a time, each combined straight into the accumulators: the
      // rows are read in memory order, one stream. Measured (one thread, 2^24 floats from
      // DRAM): W7b's 4 KiB rows 2.6 -> 1.9-2.0 ms (the one-row hand loop: 1.7-1.8; with the
      // combine loop kept at two vectors an iteration, 2.3-2.5); rows of 64-512 floats
      // 10.4-4.6 -> 2.6-3.3 ms.
      // Eight rows a vector at a time keep eight streams; it pays only for longer rows (16 KiB
      // rows of [4096, 4096]: 2.5 ms against 3.2 one at a time).
      for (std::int64_t r = 0; r < rows; ++r) {
        char* p[max_operands];
        for (std::size_t k = 0; k <= self.src.operands; ++k) p[k] = ptrs[k] + r * row_step[k];
        combine_row<Op>(self.values(p, s, n, buf[0].data, st), static_cast<A*>(acc), n);
      }
      return;
    }
    for (std::int64_t r0 = 0; r0 < rows; r0 += outer_group) {
      const std::int64_t group = rows - r0 < outer_group ? rows - r0 : outer_group;
      for (std::int64_t c = 0; c < n; c += chunk) {
        const std::int64_t m = n - c < chunk ? n - c : chunk;
        const A* v[outer_group];
        for (std::int64_t r = 0; r < group; ++r) {
          char* p[max_operands];
          for (std::size_t k = 0; k <= self.src.operands; ++k) p[k] = ptrs[k] + (r0 + r) * row_step[k] + c * s[k];
          v[r] = self.values(p, s, m, buf[r].data, st);
        }
        combine_rows<Op>(v, group, static_cast<A*>(acc) + c, m);
      }
    }
  }
  // True when rows of n values s apart, row_step apart, are one run of a plain tensor of A.
  bool runs_in_place(const std::int64_t* s, const std::int64_t* row_step, std::int64_t n) const {
    return src.in_place && s[1] == static_cast<std::int64_t>(sizeof(A)) && back_to_back(s, row_step, src.operands + 1, n);
  }
  // Short rows computed as one run (outer; runs_flat): the rows x n values are one run, read a
  // chunk of whole periods at a time; value i goes into lane i % (k * n), lanes combined a vector at a time,
  // then each accumulator j combines lanes j, j + n, ... in order. The same bits for any threads.
  void periodic(char* const* ptrs, const std::int64_t* s, const std::int64_t* row_step, std::int64_t n, A* acc,
                loop_status* st, std::int64_t rows, std::int64_t k, A* buf) const {
    // A plain tensor of A read in place is one run; anything else is computed a chunk at a time.
    const bool in_place = runs_in_place(s, row_step, n);
    const std::int64_t lanes = k * n, total = rows * n, per_chunk = in_place ? total : chunk / lanes * lanes;
    chunk_buffer<A, 1024 / sizeof(A) + 1> lane;
    init(lane.data, lanes);
    char* p[max_operands];
    for (std::size_t q = 0; q <= src.operands; ++q) p[q] = ptrs[q];
    for (std::int64_t c = 0; c < total; c += per_chunk) {
      const std::int64_t m = std::min(per_chunk, total - c);
      const A* v = runs_values(p, s, row_step, n, m / n, buf, st);
      combine_periods<Op>(v, m, lane.data, lanes);
      for (std::size_t q = 1; q <= src.operands; ++q) p[q] += m / n * row_step[q];
    }
    fold_lanes<Op>(lane.data, n, k, acc);
  }
  // Many short rows (inner: x [N, 5] summed over dim 1), a block of outputs at a time, each
  // output's elements combined in index order from the identity (the bits of reduce() for a
  // row shorter than a vector). When the outputs' rows are computed as one run (runs_flat), a
  // block's values are one run (in place from a tensor of A); otherwise element j of every
  // output in the block is one run, combined into the block's results a vector at a time.
  void short_rows(char* const* ptrs, const std::int64_t* s, std::int64_t n, std::int64_t count,
                  const std::int64_t* step_by, loop_status* st, bool add) const {
    constexpr std::int64_t block = sizeof(A) >= 1024 ? 1 : 1024 / static_cast<std::int64_t>(sizeof(A));
    chunk_buffer<A, short_row * block> buf;
    chunk_buffer<A, block> res;
    const bool flat = runs_flat(s, step_by, n);
    char* p[max_operands];
    for (std::int64_t o0 = 0; o0 < count; o0 += block) {
      const std::int64_t m = std::min(block, count - o0);
      for (std::size_t q = 0; q <= src.operands; ++q) p[q] = ptrs[q] + o0 * step_by[q];
      if (flat) {
        fold_rows<Op>(runs_values(p, s, step_by, n, m, buf.data, st), n, m, res.data);
      } else {
        init(res.data, m);
        for (std::int64_t j = 0; j < n; ++j) {
          combine_row<Op>(values(p, step_by, m, buf.data, st), res.data, m);
          step(p, s, 1);
        }
      }
      for (std::int64_t o = 0; o < m; ++o) {
        A& out = *reinterpret_cast<A*>(ptrs[0] + (o0 + o) * step_by[0]);
        out = Op::combine(add ? out : Op::template identity<A>(), res.data[o]);
      }
    }
  }
  // Leaves of periodic's in-place path, from v: leaf values each (at least a period; the last
  // may be shorter), whole periods of rows of N, into N accumulators each, out_stride bytes
  // apart. With N known, so are the period and the vectors of lanes: each leaf's lanes stay in
  // registers from the identity through its values (combine_periods, inlined) to its fold
  // (fold_lanes, unrolled): periodic's bits per leaf, without its calls and lane buffer.
  template <int N>
  static void period_leaves(const A* v, std::int64_t total, std::int64_t leaf, char* out, std::int64_t out_stride) {
    constexpr std::int64_t k = short_period(N, sizeof(A));
    constexpr int V = static_cast<int>(k * N * static_cast<std::int64_t>(sizeof(A)) / 64);
    for (std::int64_t i = 0; i < total; i += leaf, out += out_stride) {
      A t[V * 64 / sizeof(A)];
      for (A& a : t) a = Op::template identity<A>();
      combine_periods<Op, A, V>(v + i, total - i < leaf ? total - i : leaf, t);
      init(out, N);
      fold_lanes<Op, A, N>(t, k, reinterpret_cast<A*>(out));
    }
  }
  static void leaves(const void* ctx, char* const* ptrs, const std::int64_t* s, std::int64_t n, loop_status* st,
                     std::int64_t rows, const std::int64_t* row_step, std::int64_t leaf_rows, char* out,
                     std::int64_t out_stride) {
    const auto& self = *static_cast<const reduction_kernels*>(ctx);
    char* p[max_operands];
    for (std::size_t k = 0; k <= self.src.operands; ++k) p[k] = ptrs[k];
    // Short rows of a plain tensor of A back to back: the leaves of whole periods (all but a last
    // one shorter than a period) by period_leaves, the bits outer's periodic path gives each leaf.
    const std::int64_t period = short_period(n, sizeof(A));
    std::int64_t r = 0;
    if (period > 0 && self.runs_in_place(s, row_step, n)) {
      r = rows % leaf_rows != 0 && rows % leaf_rows < period ? rows - rows % leaf_rows : rows;
      as_constant<1>(n, [&]<int N>() {
        if constexpr (short_period(N, sizeof(A)) > 0)
          period_leaves<N>(reinterpret_cast<const A*>(p[1]), r * n, leaf_rows * n, out, out_stride);
      });
      p[1] += r * row_step[1];
      out += (r + leaf_rows - 1) / leaf_rows * out_stride;
    }
    for (; r < rows; r += leaf_rows, out += out_stride) {
      const std::int64_t m = rows - r < leaf_rows ? rows - r : leaf_rows;
      init(out, n);
      outer(ctx, p, s, n, out, st, m, row_step);
      for (std::size_t k = 1; k <= self.src.operands; ++k) p[k] += m * row_step[k];
    }
  }
  static void rows(const void* ctx, char* const* ptrs, const std::int64_t* s, std::int64_t n, std::int64_t count,
                   const std::int64_t* step_by, loop_status* st, bool add) {
    const auto& self = *static_cast<const reduction_kernels*>(ctx);
    if (n <= short_row) return self.short_rows(ptrs, s, n, count, step_by, st, add);
    char* p[max_operands];
    for (std::size_t k = 0; k <= self.src.operands; ++k) p[k] = ptrs[k];
    for (std::int64_t r = 0; r < count; ++r) {
      // identity combined with the row: the same bits as the tree's single leaf
      A& out = *reinterpret_cast<A*>(p[0]);
      out = Op::combine(add ? out : Op::template identity<A>(), self.reduce(p, s, n, st));
      for (std::size_t k = 0; k <= self.src.operands; ++k) p[k] += step_by[k];
    }
  }
  static void store(char* out, std::int64_t stride, const void* acc, std::int64_t n) {
    const A* a = static_cast<const A*>(acc);
    for (std::int64_t j = 0; j < n; ++j) *reinterpret_cast<A*>(out + j * stride) = a[j];
  }

  reduce_kernel erased() const {
    return {this, sizeof(A), &init, &combine, &inner, &outer, &leaves, &rows, &store, src.fns != nullptr};
  }
};
}  // namespace strata::detail
