// SPDX-License-Identifier: MIT
// strata.distributed: PyTorch's torch.distributed on MPI (Open MPI, MPICH): process groups,
// the collectives and point-to-point operations on tensors of every dtype, work handles for
// asynchronous operations, and DistributedDataParallel's bucketed gradient all-reduce that
// overlaps the backward. An optional part (the strata::distributed CMake target, built when
// MPI is found): MPI's headers and library are seen by src/distributed*.cpp only.
module;
#include <chrono>
export module strata.distributed;
import strata.std;
import strata.error;
import strata.dtype;
import strata.shape;
import strata.tensor;
import strata.any;

export namespace strata::distributed {
/// A failed or timed-out collective, a process group used wrongly, or an MPI error
/// (torch.distributed.DistBackendError).
class distributed_error : public error {
 public:
  using error::error;
};

/// The reduction of all_reduce, reduce and reduce_scatter (torch.distributed.ReduceOp).
enum class ReduceOp { SUM, AVG, PRODUCT, MIN, MAX, BAND, BOR, BXOR };

/// A subset of the ranks that run collectives together (the world group holds every rank).
class ProcessGroup {
 public:
  /// Rank of the calling process within the group (-1 when it is not a member).
  int rank() const noexcept;
  /// Number of ranks in the group.
  int size() const noexcept;
  /// True when the calling process belongs to the group.
  bool is_member() const noexcept;
  /// The group's rank of world rank global_rank (-1 when not a member).
  int group_rank(int global_rank) const;
  /// The world rank of the group's rank group_rank.
  int global_rank(int group_rank) const;
  /// The implementation's state (src/distributed.cpp).
  struct state;
  /// A group over st (for the implementation).
  explicit ProcessGroup(std::shared_ptr<state> st) noexcept : state_(std::move(st)) {}
  /// The implementation's state.
  state& impl() const;

 private:
  std::shared_ptr<state> state_;
};

/// An operation in flight (async_op = true) or done (torch.distributed.Work): wait() blocks
/// until it completes (within the group's timeout) and writes the results into the tensors.
class Work {
 public:
  /// A completed operation.
  Work() = default;
  /// Blocks until the operation completes; distributed_error on a timeout or an MPI error.
  /// Returns true, as torch's.
  bool wait();
  /// True once the operation has completed (results written by wait()).
  bool is_completed();
  /// For point-to-point receives from any source: the rank that sent (after wait()).
  int source_rank() const;
  /// The implementation's state.
  struct state;
  /// A handle to st (for the implementation).
  explicit Work(std::shared_ptr<state> st) noexcept : state_(std::move(st)) {}

 private:
  std::shared_ptr<state> state_;
};

/// Joins the processes mpirun started (MPI_Init_thread, the thread level checked): backend
/// "mpi"; timeout bounds every wait for a collective (a rank that fails does not hang the others).
void init_process_group(std::string_view backend = "mpi",
                        std::chrono::milliseconds timeout = std::chrono::minutes(30));
/// True between init_process_group and destroy_process_group.
bool is_initialized() noexcept;
/// Completes what is in flight (within the timeout, else MPI_Abort) and finalizes MPI.
void destroy_process_group();
/// The group of every rank.
const ProcessGroup& world();
/// A group of the given world ranks (every rank must call it, with the same ranks, as torch's).
ProcessGroup new_group(const std::vector<int>& ranks);
/// The calling process's rank in group (world: 0 .. world_size - 1).
int get_rank(const ProcessGroup& group = world());
/// The number of ranks in group.
int get_world_size(const ProcessGroup& group = world());
/// The wait timeout of every operation from now on.
void set_timeout(std::chrono::milliseconds timeout);

/// Blocks until every rank of group has reached it.
Work barrier(const ProcessGroup& group = world(), bool async_op = false);
/// Copies tensor of rank src into tensor of every rank.
Work broadcast(const AnyTensor& tensor, int src, const ProcessGroup& group = world(), bool async_op = false);
/// Reduces tensor over the ranks; every rank gets the result (in place).
Work all_reduce(const AnyTensor& tensor, ReduceOp op = ReduceOp::SUM, const ProcessGroup& group = world(),
                bool async_op = false);
/// Reduces tensor over the ranks into tensor of rank dst.
Work reduce(const AnyTensor& tensor, int dst, ReduceOp op = ReduceOp::SUM, const ProcessGroup& group = world(),
            bool async_op = false);
/// tensor_list[r] = tensor of rank r, on every rank.
Work all_gather(const std::vector<AnyTensor>& tensor_list, const AnyTensor& tensor,
                const ProcessGroup& group = world(), bool async_op = false);
/// output = the ranks' inputs concatenated along dim 0 (or stacked: output [world, ...input]).
Work all_gather_into_tensor(const AnyTensor& output, const AnyTensor& input, const ProcessGroup& group = world(),
                            bool async_op = false);
/// output of rank r = the reduction over the ranks of their input_list[r].
Work reduce_scatter(const AnyTensor& output, const std::vector<AnyTensor>& input_list, ReduceOp op = ReduceOp::SUM,
                    const ProcessGroup& group = world(), bool async_op = false);
/// output of rank r = the reduction over the ranks of chunk r of their input (dim 0 split in world parts).
Work reduce_scatter_tensor(const AnyTensor& output, const AnyTensor& input, ReduceOp op = ReduceOp::SUM,
                           const ProcessGroup& group = world(), bool async_op = false);
/// gather_list[r] on rank dst = tensor of rank r (gather_list empty on the other ranks).
Work gather(const AnyTensor& tensor, const std::vector<AnyTensor>& gather_list = {}, int dst = 0,
            const ProcessGroup& group = world(), bool async_op = false);
/// tensor of rank r = scatter_list[r] of rank src (scatter_list empty on the other ranks).
Work scatter(const AnyTensor& tensor, const std::vector<AnyTensor>& scatter_list = {}, int src = 0,
             const ProcessGroup& group = world(), bool async_op = false);
/// output_list[r] = input_list[me] of rank r (sizes may differ between pairs).
Work all_to_all(const std::vector<AnyTensor>& output_list, const std::vector<AnyTensor>& input_list,
                const ProcessGroup& group = world(), bool async_op = false);
/// Sends tensor to rank dst (blocking).
void send(const AnyTensor& tensor, int dst, const ProcessGroup& group = world(), int tag = 0);
/// Receives into tensor from rank src (any rank when src is unset); returns the sender's rank.
int recv(const AnyTensor& tensor, std::optional<int> src = std::nullopt, const ProcessGroup& group = world(),
         int tag = 0);
/// send without waiting: the Work completes when tensor may be written again.
Work isend(const AnyTensor& tensor, int dst, const ProcessGroup& group = world(), int tag = 0);
/// recv without waiting: the elements are in tensor after wait().
Work irecv(const AnyTensor& tensor, std::optional<int> src = std::nullopt, const ProcessGroup& group = world(),
           int tag = 0);

/// DistributedDataParallel's options.
struct DDPOptions {
  double bucket_cap_mb = 25;                ///< a bucket is all-reduced once this many MiB of gradients are final
  bool broadcast_parameters = true;         ///< copy rank 0's parameters to every rank at construction
  bool overlap = true;                      ///< all-reduce buckets during the backward (false: after it)
  bool broadcast_buffers = true;            ///< copy rank 0's buffers (batch norm's running statistics) to every rank after each synchronised backward
  /// Sets bucket_cap_mb.
  DDPOptions& bucket_cap(double mb) { bucket_cap_mb = mb; return *this; }
  /// Sets overlap.
  DDPOptions& overlap_backward(bool on) { overlap = on; return *this; }
};

/// torch.nn.parallel.DistributedDataParallel over a model's parameters: rank 0's parameters
/// are broadcast at construction; during each backward every gradient, once final, is copied
/// into a flat bucket (in reverse parameter order, bucket_cap_mb each), a full bucket is
/// all-reduced asynchronously while the backward goes on, and when the backward returns every
/// gradient is the average over the ranks. Every parameter must receive a gradient in each
/// backward (torch's find_unused_parameters=False). Not copyable; destroy before
/// destroy_process_group.
class DistributedDataParallel {
 public:
  /// Wraps parameters (floating dtypes; they must require grad).
  explicit DistributedDataParallel(std::vector<AnyTensor> parameters, DDPOptions options = {},
                                   const ProcessGroup& group = world());
  /// Wraps parameters and buffers: the buffers are rank 0's on every rank at construction and
  /// after each synchronised backward (torch's broadcast_buffers).
  DistributedDataParallel(std::vector<AnyTensor> parameters, std::vector<AnyTensor> buffers, DDPOptions options,
                          const ProcessGroup& group = world());
  /// Wraps the parameters and buffers of a module (anything with parameters(), e.g. an
  /// nn::Module; named_buffers() when it has them).
  template <class M>
    requires requires(const M& m) { m.parameters(); }
  explicit DistributedDataParallel(const M& module, DDPOptions options = {}, const ProcessGroup& group = world())
      : DistributedDataParallel(to_any(module.parameters()), buffers_of(module), options, group) {}
  DistributedDataParallel(const DistributedDataParallel&) = delete;
  DistributedDataParallel& operator=(const DistributedDataParallel&) = delete;
  ~DistributedDataParallel();

  /// Gradient accumulation: while the guard lives, backward() leaves gradients local (no_sync()).
  class no_sync_guard {
   public:
    explicit no_sync_guard(DistributedDataParallel& ddp) : ddp_(ddp) { ddp_.sync_ = false; }
    ~no_sync_guard() { ddp_.sync_ = true; }
    no_sync_guard(const no_sync_guard&) = delete;
    no_sync_guard& operator=(const no_sync_guard&) = delete;

   private:
    DistributedDataParallel& ddp_;
  };
  /// Skips the all-reduce in backward passes while the returned guard lives (torch's no_sync()).
  [[nodiscard]] no_sync_guard no_sync() { return no_sync_guard(*this); }
  /// The parameters, in the order given.
  const std::vector<AnyTensor>& parameters() const noexcept { return parameters_; }
  /// The number of buckets and the parameters (indices) of each.
  const std::vector<std::vector<std::size_t>>& buckets() const noexcept { return bucket_members_; }
  /// Seconds the last synchronised backward spent waiting for all-reduces after its last
  /// gradient was final (what the overlap did not hide).
  double last_wait_seconds() const noexcept { return last_wait_; }
  /// The implementation's state (src/distributed_ddp.cpp).
  struct state;

 private:
  template <class T>
  static std::vector<AnyTensor> to_any(const std::vector<T>& ts) {
    return std::vector<AnyTensor>(ts.begin(), ts.end());
  }
  template <class M>
  static std::vector<AnyTensor> buffers_of(const M& module) {
    std::vector<AnyTensor> out;
    if constexpr (requires { module.named_buffers(); })
      for (const auto& [name, t] : module.named_buffers()) out.push_back(t);
    return out;
  }
  std::vector<AnyTensor> parameters_, buffers_;
  std::vector<std::vector<std::size_t>> bucket_members_;
  std::shared_ptr<state> state_;
  bool sync_ = true;
  double last_wait_ = 0;
};
}  // namespace strata::distributed

