// SPDX-License-Identifier: MIT
// DistributedDataParallel: parameters grouped into flat buckets (reverse order, one dtype
// each), a post-accumulate-grad hook per parameter that copies its final gradient into its
// bucket, an asynchronous all_reduce per full bucket (run by the executor's thread while the
// backward goes on), and, when the last gradient is final, the wait and the average. Each gradient then is a view of its
// bucket (torch's gradient_as_bucket_view), so later backwards accumulate into the bucket.
module;
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>
module strata.distributed;
import strata.error;
import strata.dtype;
import strata.shape;
import strata.graph;
import strata.tensor;
import strata.any;

namespace strata::distributed {
struct DistributedDataParallel::state {
  struct bucket {
    std::vector<std::size_t> members;     // parameter indices
    std::vector<std::int64_t> offsets;    // each member's first element in flat
    AnyTensor flat;                       // the gradients, contiguous, 1-D
    std::size_t ready = 0;                // members whose gradient is final in this backward
    bool launched = false;
    Work work;
  };
  DistributedDataParallel* owner = nullptr;
  ProcessGroup group{nullptr};
  DDPOptions options;
  std::vector<bucket> buckets;
  std::vector<std::size_t> bucket_of, slot_of;  // per parameter: its bucket and its place in it
  std::vector<bool> seen;                       // per parameter: its hook ran in this backward
  std::size_t ready_total = 0;
  std::size_t next_launch = 0;  // buckets are all-reduced in index order on every rank (as torch's Reducer)

  void launch(bucket& b) {
    b.work = all_reduce(b.flat, ReduceOp::SUM, group, true);
    b.launched = true;
  }
  // Launches the buckets that are full, in index order from next_launch.
  void launch_ready() {
    while (next_launch < buckets.size() && buckets[next_launch].ready == buckets[next_launch].members.size())
      launch(buckets[next_launch++]);
  }
  // After a backward that threw: in-flight all-reduces complete, the next backward starts afresh.
  void reset() noexcept {
    for (bucket& b : buckets) {
      try {
        if (b.launched) b.work.wait();
      } catch (...) {  // NOLINT: the failure being reported is the one that made us reset
      }
      b.ready = 0;
      b.launched = false;
    }
    ready_total = 0;
    next_launch = 0;
    seen.assign(seen.size(), false);
  }
  // The hook of parameter i, its gradient final for this backward.
  void on_ready(std::size_t i, const AnyTensor& p) {
    if (!owner->sync_) return;
    try {
      ready(i, p);
    } catch (...) {
      reset();
      throw;
    }
  }
  void ready(std::size_t i, const AnyTensor& p) {
    if (seen[i])
      throw distributed_error(
          "strata.distributed: DistributedDataParallel: Expected to have finished reduction in the prior iteration "
          "before starting a new one: " + std::to_string(bucket_of.size() - ready_total) + " of " +
          std::to_string(bucket_of.size()) + " parameters received no gradient in the previous backward (every "
          "parameter must take part in every backward)");
    seen[i] = true;
    bucket& b = buckets[bucket_of[i]];
    const std::size_t k = slot_of[i];
    const AnyTensor slice = b.flat.narrow(0, b.offsets[k], p.numel()).view(p.sizes());
    const AnyTensor g = p.grad();
    if (g.data_ptr() != slice.data_ptr()) {
      slice.copy_(g);
      // The gradient becomes the bucket's view (autograd adds into it in place from now on).
      detail::autograd_access<AnyTensor>::meta(p)->grad =
          detail::grad_buffer{slice.storage(), detail::autograd_access<AnyTensor>::view(slice), true, true};
    }
    ++ready_total;
    ++b.ready;
    if (options.overlap) launch_ready();
    if (ready_total == bucket_of.size()) finish();
  }
  // Every gradient is final: the remaining all-reduces, their wait, the average.
  void finish() {
    const auto start = std::chrono::steady_clock::now();
    while (next_launch < buckets.size()) launch(buckets[next_launch++]);
    const int size = group.size();
    for (bucket& b : buckets) {
      b.work.wait();
      b.flat /= size;
      b.ready = 0;
      b.launched = false;
    }
    ready_total = 0;
    next_launch = 0;
    seen.assign(seen.size(), false);
    if (options.broadcast_buffers)  // the next forward starts from rank 0's running statistics
      for (const AnyTensor& buffer : owner->buffers_) broadcast(buffer.detach(), group.global_rank(0), group);
    owner->last_wait_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
};

DistributedDataParallel::DistributedDataParallel(std::vector<AnyTensor> parameters, DDPOptions options,
                                                 const ProcessGroup& group)
    : DistributedDataParallel(std::move(parameters), {}, options, group) {}

DistributedDataParallel::DistributedDataParallel(std::vector<AnyTensor> parameters, std::vector<AnyTensor> buffers,
                                                 DDPOptions options, const ProcessGroup& group)
    : parameters_(std::move(parameters)), buffers_(std::move(buffers)), state_(std::make_shared<state>()) {
  if (!group.is_member())
    throw distributed_error("strata.distributed: DistributedDataParallel: the calling rank is not in the group");
  for (const AnyTensor& p : parameters_) {
    if (!p.requires_grad() || !p.is_leaf())
      throw distributed_error("strata.distributed: DistributedDataParallel: every parameter must be a leaf that "
                              "requires grad (got one of sizes " + to_string(p.sizes()) + ")");
  }
  state& s = *state_;
  s.owner = this;
  s.group = group;
  s.options = options;
  s.bucket_of.resize(parameters_.size());
  s.slot_of.resize(parameters_.size());
  s.seen.assign(parameters_.size(), false);
  // Buckets in reverse parameter order (the order a backward finishes gradients, roughly),
  // one dtype each, at most bucket_cap_mb MiB unless one parameter is larger.
  const double cap = options.bucket_cap_mb * 1024 * 1024;
  std::vector<std::int64_t> sizes;
  for (std::size_t j = parameters_.size(); j-- > 0;) {
    const AnyTensor& p = parameters_[j];
    const bool fresh = s.buckets.empty() ||
                       s.buckets.back().flat.dtype() != p.dtype() ||
                       static_cast<double>((sizes.back() + p.numel()) * p.element_size()) > cap;
    if (fresh) {
      s.buckets.push_back({});
      s.buckets.back().flat = zeros({0}, p.dtype());  // the dtype until the real buffer is made
      sizes.push_back(0);
    }
    state::bucket& b = s.buckets.back();
    s.bucket_of[j] = s.buckets.size() - 1;
    s.slot_of[j] = b.members.size();
    b.members.push_back(j);
    b.offsets.push_back(sizes.back());
    sizes.back() += p.numel();
  }
  for (std::size_t k = 0; k < s.buckets.size(); ++k) {
    s.buckets[k].flat = zeros({sizes[k]}, s.buckets[k].flat.dtype());
    bucket_members_.push_back(s.buckets[k].members);
  }
  // Every rank starts from rank 0's parameters (the elements only: not recorded).
  if (options.broadcast_parameters)
    for (const AnyTensor& p : parameters_) broadcast(p.detach(), group.global_rank(0), group);
  if (options.broadcast_buffers)
    for (const AnyTensor& b : buffers_) broadcast(b.detach(), group.global_rank(0), group);
  const std::weak_ptr<state> weak = state_;
  for (std::size_t i = 0; i < parameters_.size(); ++i)
    parameters_[i].register_post_accumulate_grad_hook([weak, i](const AnyTensor& p) {
      if (const std::shared_ptr<state> st = weak.lock()) st->on_ready(i, p);
    });
}

DistributedDataParallel::~DistributedDataParallel() {
  // An all-reduce still in flight (a backward that threw) completes before the buckets go.
  for (state::bucket& b : state_->buckets) {
    try {
      if (b.launched) b.work.wait();
    } catch (...) {  // NOLINT: a destructor cannot report; the timeout already bounded the wait
    }
  }
}
}  // namespace strata::distributed
