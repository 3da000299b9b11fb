// SPDX-License-Identifier: MIT
// strata.distributed on MPI: the process groups (communicators duplicated from
// MPI_COMM_WORLD, errors returned rather than fatal), the dtype and reduction mapping (MPI's
// types, and derived types with user reductions for half, bfloat16 and float128), and every
// operation as its non-blocking MPI call plus a Work that waits with a deadline and then
// writes back what was packed. A non-contiguous tensor is packed into a contiguous copy and
// unpacked by copy_, both the fused engine's strided loops.
module;
#include <mpi.h>
#include <atomic>
#include <chrono>
#include <complex>
#include <cstdint>
#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <exception>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>
module strata.distributed;
import strata.error;
import strata.dtype;
import strata.shape;
import strata.tensor;
import strata.any;

namespace strata::distributed {
struct ProcessGroup::state {
  MPI_Comm comm = MPI_COMM_NULL;  // MPI_COMM_NULL on a rank that is not a member
  int rank = -1, size = 0;
  std::vector<int> ranks;  // the world rank of each group rank
  ~state() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (comm != MPI_COMM_NULL && !finalized) MPI_Comm_free(&comm);
  }
};

struct Work::state {
  const char* name = "";
  std::function<int(MPI_Status*)> call;  // the operation's (blocking) MPI call
  MPI_Status status{};
  std::function<void()> finish;  // writes the results back (runs once, after the call)
  std::vector<AnyTensor> keep;   // buffers MPI reads or writes until completion
  std::vector<int> ranks;  // a receive's group: the world rank of each group rank (for source_rank)
  std::optional<ProcessGroup> group;
  bool p2p = false;  // a send or receive: request is MPI's non-blocking call
  MPI_Request request = MPI_REQUEST_NULL;
  int source = -1;
  bool done = false;         // guarded by the executor's mutex
  std::exception_ptr error;  // likewise: what the call or the write-back threw
};

namespace {
using clock = std::chrono::steady_clock;

// The one MPI connection of this process: what init_process_group set up.
struct runtime {
  bool initialized = false;
  bool own_mpi = false;  // MPI_Init_thread was ours, so MPI_Finalize is too
  int thread_level = MPI_THREAD_SINGLE;
  std::mutex p2p_mutex;  // guards in_flight
  std::vector<std::shared_ptr<Work::state>> in_flight;  // sends and receives not yet complete
  std::atomic<std::int64_t> timeout_ms{30 * 60 * 1000};  // set_timeout may race a watchdog check
  std::chrono::milliseconds timeout() const { return std::chrono::milliseconds(timeout_ms.load()); }
  std::shared_ptr<ProcessGroup::state> world;
  ProcessGroup world_group{nullptr};  // world()'s handle (no state before init_process_group)
  MPI_Datatype half_type = MPI_DATATYPE_NULL, bf16_type = MPI_DATATYPE_NULL, f128_type = MPI_DATATYPE_NULL;
  MPI_Op user_ops[3][4] = {};  // [half, bfloat16, float128][sum, prod, min, max]
  ~runtime();
};
struct executor;
struct watchdog;
executor& exec();
watchdog& dog();
runtime& rt() {
  // The executor and the watchdog are made first, so that they outlive the runtime, whose
  // destructor (at exit, without destroy_process_group) still drains and stops them.
  (void)exec();
  (void)dog();
  static runtime r;
  return r;
}

void check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(rc, text, &length);
  throw distributed_error(std::string("strata.distributed: ") + what + " failed: " + std::string(text, length));
}
// A dtype as torch prints it in messages (torch.float32).
std::string torch_name(dtype d) { return "torch." + std::string(dtype_name(d)); }
void require_init(const char* what) {
  if (!rt().initialized)
    throw distributed_error(std::string("strata.distributed: ") + what +
                            ": Default process group has not been initialized, please make sure to call "
                            "init_process_group.");
}

// ---- dtypes and reductions ----
template <class T, class F>
void user_reduce(void* in, void* inout, int* len, MPI_Datatype*) {
  const T* a = static_cast<const T*>(in);
  T* b = static_cast<T*>(inout);
  for (int i = 0; i < *len; ++i) b[i] = F{}(a[i], b[i]);
}
struct add_f { template <class T> T operator()(const T& a, const T& b) const { return T(a + b); } };
struct mul_f { template <class T> T operator()(const T& a, const T& b) const { return T(a * b); } };
struct min_f { template <class T> T operator()(const T& a, const T& b) const { return b < a ? b : a; } };
struct max_f { template <class T> T operator()(const T& a, const T& b) const { return a < b ? b : a; } };
// half and bfloat16 combine in float and round once.
template <class F>
struct via_float {
  template <class T> T operator()(const T& a, const T& b) const {
    return T(F{}(static_cast<float>(a), static_cast<float>(b)));
  }
};
template <class T, template <class> class Wrap>
void create_user_ops(MPI_Op (&ops)[4]) {
  check(MPI_Op_create(&user_reduce<T, Wrap<add_f>>, 1, &ops[0]), "MPI_Op_create");
  check(MPI_Op_create(&user_reduce<T, Wrap<mul_f>>, 1, &ops[1]), "MPI_Op_create");
  check(MPI_Op_create(&user_reduce<T, Wrap<min_f>>, 1, &ops[2]), "MPI_Op_create");
  check(MPI_Op_create(&user_reduce<T, Wrap<max_f>>, 1, &ops[3]), "MPI_Op_create");
}
template <class F> struct as_is : F {};

MPI_Datatype mpi_type(dtype d) {
  runtime& r = rt();
  switch (d) {
    case dtype::bool_: return MPI_C_BOOL;
    case dtype::uint8: return MPI_UINT8_T;
    case dtype::int8: return MPI_INT8_T;
    case dtype::int16: return MPI_INT16_T;
    case dtype::int32: return MPI_INT32_T;
    case dtype::int64: return MPI_INT64_T;
    case dtype::float16: return r.half_type;
    case dtype::bfloat16: return r.bf16_type;
    case dtype::float32: return MPI_FLOAT;
    case dtype::float64: return MPI_DOUBLE;
    case dtype::float128: return r.f128_type;
    case dtype::complex64: return MPI_C_FLOAT_COMPLEX;
    case dtype::complex128: return MPI_C_DOUBLE_COMPLEX;
  }
  throw distributed_error("strata.distributed: unknown dtype");
}

const char* op_name(ReduceOp op) {
  constexpr const char* names[] = {"SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR"};
  return names[static_cast<int>(op)];
}
[[noreturn]] void refuse(ReduceOp op, dtype d, const char* why) {
  throw distributed_error(std::string("strata.distributed: ReduceOp.") + op_name(op) + " " + why + " (got a " +
                          torch_name(d) + " tensor)");
}
// The MPI reduction of op on dtype d (AVG reduces as SUM; the division follows).
MPI_Op mpi_op(ReduceOp op, dtype d) {
  const bool bitwise = op == ReduceOp::BAND || op == ReduceOp::BOR || op == ReduceOp::BXOR;
  if (d == dtype::bool_) {
    switch (op) {
      case ReduceOp::SUM: case ReduceOp::MAX: case ReduceOp::BOR: return MPI_LOR;
      case ReduceOp::PRODUCT: case ReduceOp::MIN: case ReduceOp::BAND: return MPI_LAND;
      case ReduceOp::BXOR: return MPI_LXOR;
      case ReduceOp::AVG: refuse(op, d, "needs a floating or complex tensor");
    }
  }
  if (category_of(d) == category::integral) {
    switch (op) {
      case ReduceOp::SUM: return MPI_SUM;
      case ReduceOp::PRODUCT: return MPI_PROD;
      case ReduceOp::MIN: return MPI_MIN;
      case ReduceOp::MAX: return MPI_MAX;
      case ReduceOp::BAND: return MPI_BAND;
      case ReduceOp::BOR: return MPI_BOR;
      case ReduceOp::BXOR: return MPI_BXOR;
      case ReduceOp::AVG: refuse(op, d, "needs a floating or complex tensor (average an integer one as float)");
    }
  }
  if (bitwise) refuse(op, d, "needs an integer or bool tensor");
  if (is_complex(d)) {
    if (op == ReduceOp::MIN || op == ReduceOp::MAX) refuse(op, d, "cannot be used with complex tensors");
    return op == ReduceOp::PRODUCT ? MPI_PROD : MPI_SUM;
  }
  const int k = op == ReduceOp::PRODUCT ? 1 : op == ReduceOp::MIN ? 2 : op == ReduceOp::MAX ? 3 : 0;
  switch (d) {
    case dtype::float16: return rt().user_ops[0][k];
    case dtype::bfloat16: return rt().user_ops[1][k];
    case dtype::float128: return rt().user_ops[2][k];
    default: {
      const MPI_Op builtin[] = {MPI_SUM, MPI_PROD, MPI_MIN, MPI_MAX};
      return builtin[k];
    }
  }
}

int count_of(std::int64_t n, const char* name) {
  if (n > std::numeric_limits<int>::max())
    throw distributed_error(std::string("strata.distributed: ") + name +
                            ": a tensor of more than 2^31 - 1 elements does not fit one MPI call");
  return static_cast<int>(n);
}

// ---- groups ----
ProcessGroup::state& member(const ProcessGroup& g, const char* name) {
  require_init(name);
  return g.impl();
}
int group_rank_of(const ProcessGroup::state& g, int global, const char* name, const char* role) {
  for (std::size_t i = 0; i < g.ranks.size(); ++i)
    if (g.ranks[i] == global) return static_cast<int>(i);
  throw distributed_error(std::string("strata.distributed: ") + name + ": " + role + " rank " +
                          std::to_string(global) + " is not part of the group");
}

// ---- work ----
std::string timeout_message(const char* name, std::chrono::milliseconds within, const char* then) {
  const runtime& r = rt();
  return "strata.distributed: " + std::string(name) + " on rank " + std::to_string(r.world ? r.world->rank : -1) +
         " did not complete within " + std::to_string(within.count()) +
         " ms: another rank has failed, is late, or called a different operation (the timeout is "
         "init_process_group's, or set_timeout)" + then;
}

// A blocking MPI call cannot be interrupted: while one runs, the watchdog knows its deadline
// (twice the timeout: a wait() has reported the timeout by then), and past it prints which
// operation did not complete and aborts the job, so that no rank hangs.
struct watchdog {
  struct entry {
    std::uint64_t id;
    const char* name;
    clock::time_point deadline;
  };
  std::mutex m;
  std::condition_variable wake;
  std::vector<entry> active;
  std::uint64_t next = 0;
  bool stop = false;
  std::thread thread;

  std::uint64_t enter(const char* name) {
    const std::lock_guard<std::mutex> guard(m);
    if (!thread.joinable()) thread = std::thread([this] { run(); });
    active.push_back({++next, name, clock::now() + 2 * rt().timeout()});
    return next;
  }
  void leave(std::uint64_t id) {
    const std::lock_guard<std::mutex> guard(m);
    std::erase_if(active, [id](const entry& e) { return e.id == id; });
  }
  void run() {
    std::unique_lock<std::mutex> lock(m);
    while (!stop) {
      // Checked a few times per timeout (at most every second), without a wake-up per call.
      const auto period = std::clamp<std::chrono::milliseconds>(rt().timeout() / 8, std::chrono::milliseconds(10),
                                                                std::chrono::milliseconds(1000));
      wake.wait_for(lock, period);
      for (const entry& e : active)
        if (clock::now() > e.deadline) {
          std::fprintf(stderr, "%s\n", timeout_message(e.name, 2 * rt().timeout(), " (twice the timeout); a "
                                        "blocking MPI call cannot be interrupted, so the job is aborted").c_str());
          std::fflush(stderr);
          MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
  }
  void shutdown() {
    {
      const std::lock_guard<std::mutex> guard(m);
      stop = true;
    }
    wake.notify_all();
    if (thread.joinable()) thread.join();
    stop = false;
    thread = std::thread();
  }
};
watchdog& dog() {
  static watchdog d;
  return d;
}

// Every operation is one blocking MPI call (MPI's blocking collectives are its fastest), run
// in the order this process issued them: on the calling thread when nothing is queued or
// running, else on the executor's thread — every async_op, and a blocking operation issued
// behind one — as torch's ProcessGroupMPI runs its work on one thread. So async and blocking
// calls of the same collective match across ranks, and an async operation progresses while
// the caller computes.
struct executor {
  std::mutex m;
  std::condition_variable changed;
  std::deque<std::shared_ptr<Work::state>> queue;
  bool busy = false, stop = false;
  std::thread thread;

  void submit(std::shared_ptr<Work::state> w) {
    {
      const std::lock_guard<std::mutex> guard(m);
      if (!thread.joinable()) thread = std::thread([this] { run(); });
      queue.push_back(std::move(w));
    }
    changed.notify_all();
  }
  // True (and the executor is taken) when the caller may run an operation itself now.
  bool begin_inline() {
    const std::lock_guard<std::mutex> guard(m);
    if (busy || !queue.empty()) return false;
    busy = true;
    return true;
  }
  void end_inline() {
    {
      const std::lock_guard<std::mutex> guard(m);
      busy = false;
    }
    changed.notify_all();
  }
  void run();
  void shutdown() {
    {
      const std::lock_guard<std::mutex> guard(m);
      stop = true;
    }
    changed.notify_all();
    if (thread.joinable()) thread.join();  // after the queue has drained (or the watchdog aborted)
    stop = false;
    thread = std::thread();
  }
};
executor& exec() {
  static executor e;
  return e;
}

// After w's MPI call returned: the sender of a receive, the write-back, the outcome recorded.
void finished(Work::state& w, std::exception_ptr error) noexcept {
  if (!error) {
    try {
      if (!w.ranks.empty() && w.status.MPI_SOURCE >= 0 && w.status.MPI_SOURCE < static_cast<int>(w.ranks.size()))
        w.source = w.ranks[static_cast<std::size_t>(w.status.MPI_SOURCE)];
      if (w.finish) w.finish();
    } catch (...) {
      error = std::current_exception();
    }
  }
  w.call = nullptr;
  w.finish = nullptr;
  w.keep.clear();
  w.group.reset();
  {
    const std::lock_guard<std::mutex> guard(exec().m);
    w.error = error;
    w.done = true;
  }
  exec().changed.notify_all();
}
// Runs w's MPI call under the watchdog, then its write-back; records the outcome.
void execute(Work::state& w) noexcept {
  std::exception_ptr error;
  try {
    const std::uint64_t id = dog().enter(w.name);
    struct leave_on_exit {
      std::uint64_t id;
      ~leave_on_exit() { dog().leave(id); }
    } leave{id};
    check(w.call(&w.status), w.name);
  } catch (...) {
    error = std::current_exception();
  }
  finished(w, error);
}
void executor::run() {
  std::unique_lock<std::mutex> lock(m);
  for (;;) {
    changed.wait(lock, [&] { return !busy && (stop || !queue.empty()); });
    if (queue.empty()) return;
    const std::shared_ptr<Work::state> w = std::move(queue.front());
    queue.pop_front();
    busy = true;
    lock.unlock();
    execute(*w);
    lock.lock();
    busy = false;
    changed.notify_all();
  }
}
// Waits for w until the timeout; rethrows what its call threw.
// One MPI_Test of a send or receive (progressing it); finishes w when it completed.
bool test_p2p(Work::state& w) {
  int flag = 0;
  check(MPI_Test(&w.request, &flag, &w.status), w.name);
  if (!flag) return false;
  finished(w, nullptr);
  const std::lock_guard<std::mutex> guard(rt().p2p_mutex);
  std::erase_if(rt().in_flight, [&](const std::shared_ptr<Work::state>& p) { return p.get() == &w; });
  return true;
}
void await(Work::state& w) {
  if (w.p2p && !w.done) {
    const clock::time_point deadline = clock::now() + rt().timeout();
    while (!test_p2p(w)) {
      if (clock::now() > deadline) throw distributed_error(timeout_message(w.name, rt().timeout(), ""));
      std::this_thread::yield();
    }
  }
  std::unique_lock<std::mutex> lock(exec().m);
  if (!exec().changed.wait_for(lock, rt().timeout(), [&] { return w.done; }))
    throw distributed_error(timeout_message(w.name, rt().timeout(), ""));
  if (w.error) std::rethrow_exception(w.error);
}

// Issues w, whose MPI call is call(status): run now when the executor is free and the
// operation blocks, else queued; a blocking operation returns once it completed.
template <class Call>
Work launched(std::shared_ptr<Work::state> w, const ProcessGroup& group, bool async_op, Call&& call) {
  w->call = std::forward<Call>(call);
  w->group = group;  // its communicator outlives the call
  if (!async_op && exec().begin_inline()) {
    execute(*w);
    exec().end_inline();
  } else {
    exec().submit(w);
  }
  if (!async_op) await(*w);
  return Work(std::move(w));
}
std::shared_ptr<Work::state> make_work(const char* name) {
  auto w = std::make_shared<Work::state>();
  w->name = name;
  return w;
}

// ---- packing ----
// A contiguous tensor of n elements of dtype d to pack or receive into: the calling thread's
// staging buffer of d when no operation still holds it and it is large enough, else a new one,
// kept for the next call. Fresh memory per call costs its page faults on every call (ten
// times the transfer at 1 MiB on a virtual machine; docs/PERFORMANCE.md); each thread keeps
// its largest recent buffer per dtype until it exits.
AnyTensor staging(std::int64_t n, dtype d) {
  thread_local std::vector<AnyTensor> kept;
  AnyTensor* slot = nullptr;
  for (AnyTensor& k : kept)
    if (k.dtype() == d) slot = &k;
  if (slot && slot->storage().use_count() == 1 && slot->numel() >= n) return slot->narrow(0, 0, n);
  AnyTensor fresh = empty({std::max<std::int64_t>(n, 1)}, d);
  if (!slot) kept.push_back(fresh);
  else if (slot->storage().use_count() == 1) *slot = fresh;
  return fresh.narrow(0, 0, n);
}
// The elements of t in a contiguous tensor: t itself, or a packed copy (the engine's strided copy).
AnyTensor packed(const AnyTensor& t) {
  if (t.is_contiguous()) return t;
  AnyTensor buf = staging(t.numel(), t.dtype()).view(t.sizes());
  buf.copy_(t.detach());
  return buf;
}
// A contiguous buffer MPI writes into for t (t itself when contiguous).
AnyTensor receive_buffer(const AnyTensor& t) {
  t.storage().check_writable();
  return t.is_contiguous() ? t : staging(t.numel(), t.dtype()).view(t.sizes());
}
// After MPI wrote buf for t: unpack, and count the write as in-place (autograd's versions).
void written(const AnyTensor& t, const AnyTensor& buf) {
  if (buf.data_ptr() != t.data_ptr() || !buf.is_alias_of(t)) t.copy_(buf);
  else t.storage().bump_version();
}
void check_same(const AnyTensor& a, const AnyTensor& b, const char* name, const char* what) {
  if (a.dtype() != b.dtype())
    throw distributed_error(std::string("strata.distributed: ") + name + ": " + what + " has dtype " +
                            torch_name(b.dtype()) + ", the tensor " + torch_name(a.dtype()));
  if (a.numel() != b.numel())
    throw distributed_error(std::string("strata.distributed: ") + name + ": " + what + " has " +
                            std::to_string(b.numel()) + " elements (sizes " + to_string(b.sizes()) +
                            "), the tensor " + std::to_string(a.numel()) + " (sizes " + to_string(a.sizes()) + ")");
}
void check_list_size(std::size_t n, int size, const char* name, const char* what) {
  if (static_cast<int>(n) != size)
    throw distributed_error(std::string("strata.distributed: ") + name + ": " + what + " has " + std::to_string(n) +
                            " tensors for a group of " + std::to_string(size) + " ranks");
}
// The tensors of a list in one contiguous 1-D buffer (each checked against like).
AnyTensor concatenated(const std::vector<AnyTensor>& list, const AnyTensor& like, const char* name, const char* what) {
  for (const AnyTensor& t : list) check_same(like, t, name, what);
  const std::int64_t n = like.numel();
  const AnyTensor buf = staging(n * static_cast<std::int64_t>(list.size()), like.dtype());
  for (std::size_t r = 0; r < list.size(); ++r)
    buf.narrow(0, n * static_cast<std::int64_t>(r), n).view(list[r].sizes()).copy_(list[r].detach());
  return buf;
}
// Row r of rows (one rank's elements each) into list[r], in list[r]'s sizes and layout.
void unstack_into(const std::vector<AnyTensor>& list, const AnyTensor& rows) {
  for (std::size_t r = 0; r < list.size(); ++r)
    list[r].copy_(rows.select(0, static_cast<std::int64_t>(r)).view(list[r].sizes()));
}
void divide_for_avg(ReduceOp op, const AnyTensor& t, int size) {
  if (op == ReduceOp::AVG) t /= size;
}
}  // namespace

runtime::~runtime() {
  if (initialized) {
    try {
      destroy_process_group();
    } catch (...) {  // NOLINT: a destructor at exit cannot report
    }
  }
}

// ---- ProcessGroup and Work ----
int ProcessGroup::rank() const noexcept { return state_ ? state_->rank : -1; }
int ProcessGroup::size() const noexcept { return state_ ? state_->size : 0; }
bool ProcessGroup::is_member() const noexcept { return state_ && state_->comm != MPI_COMM_NULL; }
int ProcessGroup::group_rank(int global) const {
  for (std::size_t i = 0; i < impl().ranks.size(); ++i)
    if (impl().ranks[i] == global) return static_cast<int>(i);
  return -1;
}
int ProcessGroup::global_rank(int group_rank) const {
  if (group_rank < 0 || group_rank >= size())
    throw distributed_error("strata.distributed: group rank " + std::to_string(group_rank) + " out of range for a group of " +
                            std::to_string(size()));
  return impl().ranks[static_cast<std::size_t>(group_rank)];
}
ProcessGroup::state& ProcessGroup::impl() const {
  if (!state_)
    throw distributed_error("strata.distributed: Default process group has not been initialized, please make sure "
                            "to call init_process_group.");
  return *state_;
}

bool Work::wait() {
  if (state_) await(*state_);
  return true;
}
bool Work::is_completed() {
  if (!state_) return true;
  {
    const std::lock_guard<std::mutex> guard(exec().m);
    if (state_->done || !state_->p2p) return state_->done;
  }
  return test_p2p(*state_);
}
int Work::source_rank() const { return state_ ? state_->source : -1; }

// ---- setup ----
void init_process_group(std::string_view backend, std::chrono::milliseconds timeout) {
  runtime& r = rt();
  if (backend != "mpi")
    throw distributed_error("strata.distributed: backend \"" + std::string(backend) +
                            "\" is not available: strata's collectives run on MPI (backend \"mpi\")");
  if (r.initialized) throw distributed_error("strata.distributed: trying to initialize the default process group twice!");
  int mpi_up = 0;
  MPI_Initialized(&mpi_up);
  if (mpi_up) {
    MPI_Query_thread(&r.thread_level);
  } else {
    check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &r.thread_level), "MPI_Init_thread");
    r.own_mpi = true;
  }
  if (r.thread_level < MPI_THREAD_MULTIPLE)
    throw distributed_error("strata.distributed: MPI gives thread level " + std::to_string(r.thread_level) +
                            "; strata needs MPI_THREAD_MULTIPLE (its executor thread and sends and receives on "
                            "the caller's thread call MPI at the same time)");
  r.timeout_ms = timeout.count();
  auto w = std::make_shared<ProcessGroup::state>();
  check(MPI_Comm_dup(MPI_COMM_WORLD, &w->comm), "MPI_Comm_dup");
  check(MPI_Comm_set_errhandler(w->comm, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  MPI_Comm_rank(w->comm, &w->rank);
  MPI_Comm_size(w->comm, &w->size);
  for (int i = 0; i < w->size; ++i) w->ranks.push_back(i);
  r.world = std::move(w);
  r.world_group = ProcessGroup(r.world);
  const auto bytes = [](MPI_Datatype& t, int n) {
    check(MPI_Type_contiguous(n, MPI_BYTE, &t), "MPI_Type_contiguous");
    check(MPI_Type_commit(&t), "MPI_Type_commit");
  };
  bytes(r.half_type, static_cast<int>(sizeof(half)));
  bytes(r.bf16_type, static_cast<int>(sizeof(bfloat16)));
  bytes(r.f128_type, static_cast<int>(sizeof(float128)));
  create_user_ops<half, via_float>(r.user_ops[0]);
  create_user_ops<bfloat16, via_float>(r.user_ops[1]);
  create_user_ops<float128, as_is>(r.user_ops[2]);
  r.initialized = true;
}
bool is_initialized() noexcept { return rt().initialized; }
void set_timeout(std::chrono::milliseconds timeout) { rt().timeout_ms = timeout.count(); }
void destroy_process_group() {
  runtime& r = rt();
  if (!r.initialized) return;
  // Operations still queued or running (a wait() that timed out, a late rank) complete first;
  // one whose peers never come is aborted by the watchdog, since MPI_Finalize would wait forever.
  exec().shutdown();
  std::vector<std::shared_ptr<Work::state>> p2p;
  {
    const std::lock_guard<std::mutex> guard(r.p2p_mutex);
    p2p = r.in_flight;
  }
  for (const auto& w : p2p) {
    try {
      await(*w);
    } catch (const distributed_error& e) {
      std::fprintf(stderr, "%s; destroy_process_group cannot finalize MPI with it pending, so the job is aborted\n",
                   e.what());
      std::fflush(stderr);
      MPI_Abort(MPI_COMM_WORLD, 1);
    } catch (...) {  // NOLINT: what the operation threw was reported to its wait()
    }
  }
  {
    const std::lock_guard<std::mutex> guard(r.p2p_mutex);
    r.in_flight.clear();
  }
  dog().shutdown();
  r.initialized = false;
  for (auto& ops : r.user_ops)
    for (MPI_Op& op : ops) MPI_Op_free(&op);
  MPI_Type_free(&r.half_type);
  MPI_Type_free(&r.bf16_type);
  MPI_Type_free(&r.f128_type);
  if (r.world && r.world->comm != MPI_COMM_NULL) MPI_Comm_free(&r.world->comm);
  r.world.reset();
  r.world_group = ProcessGroup(nullptr);
  if (r.own_mpi) MPI_Finalize();
  r.own_mpi = false;
}
const ProcessGroup& world() { return rt().world_group; }
ProcessGroup new_group(const std::vector<int>& ranks) {
  require_init("new_group");
  const ProcessGroup::state& w = *rt().world;
  for (const int r : ranks)
    if (r < 0 || r >= w.size)
      throw distributed_error("strata.distributed: new_group: rank " + std::to_string(r) + " is not in the world of " +
                              std::to_string(w.size) + " ranks");
  auto g = std::make_shared<ProcessGroup::state>();
  g->ranks = ranks;  // sorted, as torch's: group rank i is the i-th smallest world rank
  std::sort(g->ranks.begin(), g->ranks.end());
  g->ranks.erase(std::unique(g->ranks.begin(), g->ranks.end()), g->ranks.end());
  // A collective over the world: in the executor's order, after what this rank issued before.
  auto work = make_work("new_group");
  work->call = [g, comm = w.comm](MPI_Status*) {
    MPI_Group world_group = MPI_GROUP_NULL, sub = MPI_GROUP_NULL;
    int rc = MPI_Comm_group(comm, &world_group);
    if (rc == MPI_SUCCESS) rc = MPI_Group_incl(world_group, static_cast<int>(g->ranks.size()), g->ranks.data(), &sub);
    if (rc == MPI_SUCCESS) rc = MPI_Comm_create(comm, sub, &g->comm);
    if (sub != MPI_GROUP_NULL) MPI_Group_free(&sub);
    if (world_group != MPI_GROUP_NULL) MPI_Group_free(&world_group);
    return rc;
  };
  if (exec().begin_inline()) {
    execute(*work);
    exec().end_inline();
  } else {
    exec().submit(work);
  }
  await(*work);
  if (g->comm != MPI_COMM_NULL) {
    check(MPI_Comm_set_errhandler(g->comm, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
    MPI_Comm_rank(g->comm, &g->rank);
  }
  g->size = static_cast<int>(g->ranks.size());
  return ProcessGroup(std::move(g));
}
int get_rank(const ProcessGroup& group) { return member(group, "get_rank").rank; }
int get_world_size(const ProcessGroup& group) { return member(group, "get_world_size").size; }

// ---- collectives ----
Work barrier(const ProcessGroup& group, bool async_op) {
  const ProcessGroup::state& g = member(group, "barrier");
  if (g.comm == MPI_COMM_NULL) return Work();
  auto w = make_work("barrier");
  const auto call = [=, comm = g.comm](MPI_Status*) {
    return MPI_Barrier(comm);
  };
  return launched(std::move(w), group, async_op, call);
}
Work broadcast(const AnyTensor& tensor, int src, const ProcessGroup& group, bool async_op) {
  const ProcessGroup::state& g = member(group, "broadcast");
  if (g.comm == MPI_COMM_NULL) return Work();
  const int root = group_rank_of(g, src, "broadcast", "source");
  const AnyTensor buf = g.rank == root ? packed(tensor) : receive_buffer(tensor);
  auto w = make_work("broadcast");
  const auto call = [=, comm = g.comm](MPI_Status*) {
    return MPI_Bcast(buf.data_ptr(), count_of(buf.numel(), "broadcast"), mpi_type(buf.dtype()), root, comm);
  };
  w->keep = {buf};
  if (g.rank != root) w->finish = [tensor, buf] { written(tensor, buf); };
  return launched(std::move(w), group, async_op, call);
}
Work all_reduce(const AnyTensor& tensor, ReduceOp op, const ProcessGroup& group, bool async_op) {
  const ProcessGroup::state& g = member(group, "all_reduce");
  if (g.comm == MPI_COMM_NULL) return Work();
  const MPI_Op mop = mpi_op(op, tensor.dtype());
  tensor.storage().check_writable();
  const AnyTensor buf = packed(tensor);
  auto w = make_work("all_reduce");
  const auto call = [=, comm = g.comm](MPI_Status*) {
    return MPI_Allreduce(MPI_IN_PLACE, buf.data_ptr(), count_of(buf.numel(), "all_reduce"), mpi_type(buf.dtype()), mop, comm);
  };
  w->keep = {buf};
  const int size = g.size;
  w->finish = [tensor, buf, op, size] {
    divide_for_avg(op, buf, size);
    written(tensor, buf);
  };
  return launched(std::move(w), group, async_op, call);
}
Work reduce(const AnyTensor& tensor, int dst, ReduceOp op, const ProcessGroup& group, bool async_op) {
  const ProcessGroup::state& g = member(group, "reduce");
  if (g.comm == MPI_COMM_NULL) return Work();
  const int root = group_rank_of(g, dst, "reduce", "destination");
  const MPI_Op mop = mpi_op(op, tensor.dtype());
  const AnyTensor buf = packed(tensor);
  if (g.rank == root) tensor.storage().check_writable();
  auto w = make_work("reduce");
  const auto call = [=, comm = g.comm, me = g.rank](MPI_Status*) {
    return MPI_Reduce(me == root ? MPI_IN_PLACE : buf.data_ptr(), buf.data_ptr(), count_of(buf.numel(), "reduce"), mpi_type(buf.dtype()), mop, root, comm);
  };
  w->keep = {buf};
  if (g.rank == root) {
    const int size = g.size;
    w->finish = [tensor, buf, op, size] {
      divide_for_avg(op, buf, size);
      written(tensor, buf);
    };
  }
  return launched(std::move(w), group, async_op, call);
}
Work all_gather_into_tensor(const AnyTensor& output, const AnyTensor& input, const ProcessGroup& group,
                            bool async_op) {
  const ProcessGroup::state& g = member(group, "all_gather_into_tensor");
  if (g.comm == MPI_COMM_NULL) return Work();
  if (output.dtype() != input.dtype())
    throw distributed_error("strata.distributed: all_gather_into_tensor: output has dtype " +
                            torch_name(output.dtype()) + ", input " + torch_name(input.dtype()));
  if (output.numel() != input.numel() * g.size)
    throw distributed_error("strata.distributed: all_gather_into_tensor: output tensor size must be equal to "
                            "world_size times input tensor size (output " + to_string(output.sizes()) + ", input " +
                            to_string(input.sizes()) + ", " + std::to_string(g.size) + " ranks)");
  const AnyTensor in = packed(input), out = receive_buffer(output);
  auto w = make_work("all_gather_into_tensor");
  const MPI_Datatype t = mpi_type(in.dtype());
  const auto call = [=, comm = g.comm](MPI_Status*) {
    return MPI_Allgather(in.data_ptr(), count_of(in.numel(), "all_gather"), t, out.data_ptr(), count_of(in.numel(), "all_gather"), t, comm);
  };
  w->keep = {in, out};
  w->finish = [output, out] { written(output, out); };
  return launched(std::move(w), group, async_op, call);
}
Work all_gather(const std::vector<AnyTensor>& tensor_list, const AnyTensor& tensor, const ProcessGroup& group,
                bool async_op) {
  const ProcessGroup::state& g = member(group, "all_gather");
  if (g.comm == MPI_COMM_NULL) return Work();
  check_list_size(tensor_list.size(), g.size, "all_gather", "the output list");
  for (const AnyTensor& t : tensor_list) {
    check_same(tensor, t, "all_gather", "an output tensor");
    t.storage().check_writable();
  }
  const AnyTensor in = packed(tensor), out = staging(g.size * tensor.numel(), tensor.dtype()).view({g.size, tensor.numel()});
  auto w = make_work("all_gather");
  const MPI_Datatype t = mpi_type(in.dtype());
  const int n = count_of(in.numel(), "all_gather");
  const auto call = [=, comm = g.comm](MPI_Status*) {
    return MPI_Allgather(in.data_ptr(), n, t, out.data_ptr(), n, t, comm);
  };
  w->keep = {in, out};
  w->finish = [tensor_list, out] { unstack_into(tensor_list, out); };
  return launched(std::move(w), group, async_op, call);
}
Work reduce_scatter_tensor(const AnyTensor& output, const AnyTensor& input, ReduceOp op, const ProcessGroup& group,
                           bool async_op) {
  const ProcessGroup::state& g = member(group, "reduce_scatter_tensor");
  if (g.comm == MPI_COMM_NULL) return Work();
  if (output.dtype() != input.dtype())
    throw distributed_error("strata.distributed: reduce_scatter_tensor: output has dtype " +
                            torch_name(output.dtype()) + ", input " + torch_name(input.dtype()));
  if (input.numel() != output.numel() * g.size)
    throw distributed_error("strata.distributed: reduce_scatter_tensor: input tensor must be the same size as output "
                            "size times world size (input " + to_string(input.sizes()) + ", output " +
                            to_string(output.sizes()) + ", " + std::to_string(g.size) + " ranks)");
  const MPI_Op mop = mpi_op(op, input.dtype());
  const AnyTensor in = packed(input), out = receive_buffer(output);
  auto w = make_work("reduce_scatter");
  const auto call = [=, comm = g.comm](MPI_Status*) {
    return MPI_Reduce_scatter_block(in.data_ptr(), out.data_ptr(), count_of(out.numel(), "reduce_scatter"), mpi_type(in.dtype()), mop, comm);
  };
  w->keep = {in, out};
  const int size = g.size;
  w->finish = [output, out, op, size] {
    divide_for_avg(op, out, size);
    written(output, out);
  };
  return launched(std::move(w), group, async_op, call);
}
Work reduce_scatter(const AnyTensor& output, const std::vector<AnyTensor>& input_list, ReduceOp op,
                    const ProcessGroup& group, bool async_op) {
  const ProcessGroup::state& g = member(group, "reduce_scatter");
  if (g.comm == MPI_COMM_NULL) return Work();
  check_list_size(input_list.size(), g.size, "reduce_scatter", "the input list");
  return reduce_scatter_tensor(output, concatenated(input_list, output, "reduce_scatter", "an input tensor"), op, group,
                               async_op);
}
Work gather(const AnyTensor& tensor, const std::vector<AnyTensor>& gather_list, int dst, const ProcessGroup& group,
            bool async_op) {
  const ProcessGroup::state& g = member(group, "gather");
  if (g.comm == MPI_COMM_NULL) return Work();
  const int root = group_rank_of(g, dst, "gather", "destination");
  if (g.rank == root) {
    check_list_size(gather_list.size(), g.size, "gather", "gather_list");
    for (const AnyTensor& t : gather_list) {
      check_same(tensor, t, "gather", "a gather_list tensor");
      t.storage().check_writable();
    }
  } else if (!gather_list.empty()) {
    throw distributed_error("strata.distributed: gather: Argument ``gather_list`` must NOT be specified on non-destination ranks.");
  }
  const AnyTensor in = packed(tensor);
  const AnyTensor out =
      g.rank == root ? staging(g.size * tensor.numel(), tensor.dtype()).view({g.size, tensor.numel()}) : AnyTensor();
  auto w = make_work("gather");
  const MPI_Datatype t = mpi_type(in.dtype());
  const int n = count_of(in.numel(), "gather");
  const auto call = [=, comm = g.comm, me = g.rank](MPI_Status*) {
    return MPI_Gather(in.data_ptr(), n, t, me == root ? out.data_ptr() : nullptr, n, t, root, comm);
  };
  w->keep = {in, out};
  if (g.rank == root) w->finish = [gather_list, out] { unstack_into(gather_list, out); };
  return launched(std::move(w), group, async_op, call);
}
Work scatter(const AnyTensor& tensor, const std::vector<AnyTensor>& scatter_list, int src, const ProcessGroup& group,
             bool async_op) {
  const ProcessGroup::state& g = member(group, "scatter");
  if (g.comm == MPI_COMM_NULL) return Work();
  const int root = group_rank_of(g, src, "scatter", "source");
  AnyTensor in;
  if (g.rank == root) {
    check_list_size(scatter_list.size(), g.size, "scatter", "scatter_list");
    in = concatenated(scatter_list, tensor, "scatter", "a scatter_list tensor");
  } else if (!scatter_list.empty()) {
    throw distributed_error("strata.distributed: scatter: Argument ``scatter_list`` must NOT be specified on non-source ranks.");
  }
  const AnyTensor out = receive_buffer(tensor);
  auto w = make_work("scatter");
  const MPI_Datatype t = mpi_type(tensor.dtype());
  const int n = count_of(tensor.numel(), "scatter");
  const auto call = [=, comm = g.comm, me = g.rank](MPI_Status*) {
    return MPI_Scatter(me == root ? in.data_ptr() : nullptr, n, t, out.data_ptr(), n, t, root, comm);
  };
  w->keep = {in, out};
  w->finish = [tensor, out] { written(tensor, out); };
  return launched(std::move(w), group, async_op, call);
}
Work all_to_all(const std::vector<AnyTensor>& output_list, const std::vector<AnyTensor>& input_list,
                const ProcessGroup& group, bool async_op) {
  const ProcessGroup::state& g = member(group, "all_to_all");
  if (g.comm == MPI_COMM_NULL) return Work();
  check_list_size(output_list.size(), g.size, "all_to_all", "the output list");
  check_list_size(input_list.size(), g.size, "all_to_all", "the input list");
  const dtype d = input_list[0].dtype();
  std::vector<int> send_counts, send_offsets, recv_counts, recv_offsets;
  std::vector<AnyTensor> flat;
  std::int64_t sent = 0, received = 0;
  for (int r = 0; r < g.size; ++r) {
    const AnyTensor& in = input_list[static_cast<std::size_t>(r)];
    const AnyTensor& out = output_list[static_cast<std::size_t>(r)];
    if (in.dtype() != d || out.dtype() != d)
      throw distributed_error("strata.distributed: all_to_all: every input and output tensor must have dtype " +
                              torch_name(d));
    out.storage().check_writable();
    send_counts.push_back(count_of(in.numel(), "all_to_all"));
    send_offsets.push_back(count_of(sent, "all_to_all"));
    sent += send_counts.back();
    recv_counts.push_back(count_of(out.numel(), "all_to_all"));
    recv_offsets.push_back(count_of(received, "all_to_all"));
    received += recv_counts.back();
    flat.push_back(in.reshape({-1}));
  }
  const AnyTensor in = cat(flat, 0), out = empty({received}, d);
  auto w = make_work("all_to_all");
  const MPI_Datatype t = mpi_type(d);
  const auto call = [=, comm = g.comm](MPI_Status*) {
    return MPI_Alltoallv(in.data_ptr(), send_counts.data(), send_offsets.data(), t, out.data_ptr(), recv_counts.data(), recv_offsets.data(), t, comm);
  };
  w->keep = {in, out};
  w->finish = [output_list, out, recv_counts, recv_offsets] {
    for (std::size_t r = 0; r < output_list.size(); ++r)
      output_list[r].copy_(out.narrow(0, recv_offsets[r], recv_counts[r]).view(output_list[r].sizes()));
  };
  return launched(std::move(w), group, async_op, call);
}

// ---- point to point ----
// Sends and receives are MPI's non-blocking calls, posted at once on the calling thread (as
// torch's ProcessGroupMPI does): they never wait behind a collective, so an irecv and an isend
// issued in either order on two ranks both complete.
namespace {
// The runtime holds a posted send or receive until it completes (MPI still reads or writes its
// buffer if its handle is dropped or its wait timed out); destroy_process_group drains them.
Work posted(std::shared_ptr<Work::state> w, bool async_op) {
  {
    const std::lock_guard<std::mutex> guard(rt().p2p_mutex);
    rt().in_flight.push_back(w);
  }
  Work work(std::move(w));
  if (!async_op) work.wait();
  return work;
}
Work post_send(const AnyTensor& tensor, int dst, const ProcessGroup& group, int tag, bool async_op) {
  const ProcessGroup::state& g = member(group, "send");
  if (g.comm == MPI_COMM_NULL) return Work();
  const int to = group_rank_of(g, dst, "send", "destination");
  const AnyTensor buf = packed(tensor);
  auto w = make_work("send");
  w->p2p = true;
  w->keep = {buf};
  w->group = group;
  check(MPI_Isend(buf.data_ptr(), count_of(buf.numel(), "send"), mpi_type(buf.dtype()), to, tag, g.comm, &w->request),
        "send");
  return posted(std::move(w), async_op);
}
Work post_recv(const AnyTensor& tensor, std::optional<int> src, const ProcessGroup& group, int tag, bool async_op) {
  const ProcessGroup::state& g = member(group, "recv");
  if (g.comm == MPI_COMM_NULL) return Work();
  const int from = src ? group_rank_of(g, *src, "recv", "source") : MPI_ANY_SOURCE;
  const AnyTensor buf = receive_buffer(tensor);
  auto w = make_work("recv");
  w->p2p = true;
  w->keep = {buf};
  w->group = group;
  w->ranks = g.ranks;
  w->finish = [tensor, buf] { written(tensor, buf); };
  check(MPI_Irecv(buf.data_ptr(), count_of(buf.numel(), "recv"), mpi_type(buf.dtype()), from, tag, g.comm,
                  &w->request),
        "recv");
  return posted(std::move(w), async_op);
}
}  // namespace

Work isend(const AnyTensor& tensor, int dst, const ProcessGroup& group, int tag) {
  return post_send(tensor, dst, group, tag, true);
}
Work irecv(const AnyTensor& tensor, std::optional<int> src, const ProcessGroup& group, int tag) {
  return post_recv(tensor, src, group, tag, true);
}
void send(const AnyTensor& tensor, int dst, const ProcessGroup& group, int tag) {
  post_send(tensor, dst, group, tag, false);
}
int recv(const AnyTensor& tensor, std::optional<int> src, const ProcessGroup& group, int tag) {
  return post_recv(tensor, src, group, tag, false).source_rank();
}
}  // namespace strata::distributed
