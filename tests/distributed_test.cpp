// SPDX-License-Identifier: MIT
// strata.distributed under `mpirun -np 2`: every collective and point-to-point operation over
// every dtype and over contiguous, strided, 0-d and empty tensors, against the same reduction
// done locally on both ranks' inputs; torch's shape checks; work handles; a rank that is late
// makes the other time out with a clear error; DistributedDataParallel's averaged gradients
// equal the one-process full-batch run. Each rank runs the same test cases in the same order.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <chrono>
#include <complex>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <vector>
import strata;
import strata.distributed;
namespace st = strata;
namespace dist = strata::distributed;

namespace {
const std::vector<st::dtype> all_dtypes = {
    st::dtype::bool_,   st::dtype::uint8,    st::dtype::int8,    st::dtype::int16,     st::dtype::int32,
    st::dtype::int64,   st::dtype::float16,  st::dtype::bfloat16, st::dtype::float32,  st::dtype::float64,
    st::dtype::float128, st::dtype::complex64, st::dtype::complex128};
bool is_bool(st::dtype d) { return d == st::dtype::bool_; }
bool complex_dtype(st::dtype d) { return d == st::dtype::complex64 || d == st::dtype::complex128; }
bool is_integral(st::dtype d) {
  return d == st::dtype::uint8 || d == st::dtype::int8 || d == st::dtype::int16 || d == st::dtype::int32 ||
         d == st::dtype::int64;
}

// Rank r's elements for dtype d: small values whose products fit every integer dtype.
st::AnyTensor base(st::dtype d, int rank, std::vector<std::int64_t> sizes) {
  std::int64_t n = 1;
  for (const std::int64_t s : sizes) n *= s;
  const auto i = st::AnyTensor(st::arange<std::int64_t>(n));
  if (is_bool(d)) return ((i + rank) % 3 == 0).view(sizes);
  if (is_integral(d)) return (i % 5 + 1 + rank * (i % 3)).to(d).view(sizes);
  const auto v = ((i % 7).to(st::dtype::float64) * 0.5 - 1 + rank * 0.25).to(d).view(sizes);
  if (complex_dtype(d)) return v * std::complex<double>(1.0, rank + 1.0);
  return v;
}
// The layouts each operation is run on: the tensor the operation writes, and a predicate-free
// way to make it from a rank's elements (so that the expected value has the same layout).
struct layout {
  const char* name;
  std::function<st::AnyTensor(st::dtype, int)> make;
};
const std::vector<layout> layouts = {
    {"contiguous", [](st::dtype d, int r) { return base(d, r, {3, 4}); }},
    {"strided", [](st::dtype d, int r) { return base(d, r, {5, 6}).t().narrow(0, 1, 4); }},  // [4, 5]
    {"0-d", [](st::dtype d, int r) { return base(d, r, {1}).select(0, 0); }},
    {"empty", [](st::dtype d, int r) { return base(d, r, {0, 3}); }},
};
bool same(const st::AnyTensor& a, const st::AnyTensor& b) {
  if (a.dtype() != b.dtype() || a.sizes() != b.sizes()) return false;
  return a.numel() == 0 || st::all(a == b).item<bool>();
}
bool close(const st::AnyTensor& a, const st::AnyTensor& b, double tol) {
  if (a.sizes() != b.sizes()) return false;
  return a.numel() == 0 || st::all(st::abs(a - b) <= tol * (1 + st::abs(b))).item<bool>();
}
// The reduction op of both ranks' elements, done locally.
st::AnyTensor expected(dist::ReduceOp op, const st::AnyTensor& a, const st::AnyTensor& b) {
  const bool boolean = a.dtype() == st::dtype::bool_;
  switch (op) {
    case dist::ReduceOp::SUM: return boolean ? st::logical_or(a, b) : a + b;
    case dist::ReduceOp::AVG: return (a + b) / 2;
    case dist::ReduceOp::PRODUCT: return boolean ? st::logical_and(a, b) : a * b;
    case dist::ReduceOp::MIN: return st::minimum(a, b);
    case dist::ReduceOp::MAX: return st::maximum(a, b);
    case dist::ReduceOp::BAND: return a & b;
    case dist::ReduceOp::BOR: return a | b;
    case dist::ReduceOp::BXOR: return a ^ b;
  }
  return a;
}
std::vector<dist::ReduceOp> ops_for(st::dtype d) {
  using R = dist::ReduceOp;
  if (is_bool(d) || is_integral(d)) return {R::SUM, R::PRODUCT, R::MIN, R::MAX, R::BAND, R::BOR, R::BXOR};
  if (complex_dtype(d)) return {R::SUM, R::AVG, R::PRODUCT};
  return {R::SUM, R::AVG, R::PRODUCT, R::MIN, R::MAX};
}
std::string label(st::dtype d, const layout& l) { return std::string(st::dtype_name(d)) + " " + l.name; }
int rank() { return dist::get_rank(); }
int peer() { return 1 - dist::get_rank(); }
}  // namespace

TEST_CASE("the process group is mpirun's two ranks", "[distributed]") {
  REQUIRE(dist::is_initialized());
  REQUIRE(dist::get_world_size() == 2);
  CHECK((rank() == 0 || rank() == 1));
  CHECK(dist::world().size() == 2);
  dist::barrier();
}

TEST_CASE("all_reduce: every op on every dtype and layout equals the local reduction", "[distributed]") {
  for (const st::dtype d : all_dtypes)
    for (const layout& l : layouts)
      for (const dist::ReduceOp op : ops_for(d)) {
        INFO(label(d, l) << " op " << static_cast<int>(op));
        const st::AnyTensor t = l.make(d, rank());
        const st::AnyTensor want = expected(op, l.make(d, 0), l.make(d, 1));
        dist::all_reduce(t, op);
        CHECK(same(t, want));
      }
}

TEST_CASE("a strided all_reduce writes only the view's elements", "[distributed]") {
  const st::AnyTensor whole = base(st::dtype::float32, rank(), {5, 6});
  const st::AnyTensor view = whole.t().narrow(0, 1, 4);
  dist::all_reduce(view);
  const st::AnyTensor want_view = base(st::dtype::float32, 0, {5, 6}).t().narrow(0, 1, 4) +
                                  base(st::dtype::float32, 1, {5, 6}).t().narrow(0, 1, 4);
  CHECK(same(view, want_view));
  CHECK(same(whole.select(1, 0), base(st::dtype::float32, rank(), {5, 6}).select(1, 0)));  // column 0 untouched
  CHECK(same(whole.select(1, 5), base(st::dtype::float32, rank(), {5, 6}).select(1, 5)));
}

TEST_CASE("broadcast and reduce on every dtype and layout", "[distributed]") {
  for (const st::dtype d : all_dtypes)
    for (const layout& l : layouts) {
      INFO(label(d, l));
      const st::AnyTensor b = l.make(d, rank());
      dist::broadcast(b, 1);
      CHECK(same(b, l.make(d, 1)));
      const st::AnyTensor r = l.make(d, rank());
      const dist::ReduceOp op = is_bool(d) ? dist::ReduceOp::BOR : complex_dtype(d) ? dist::ReduceOp::PRODUCT : dist::ReduceOp::MAX;
      dist::reduce(r, 0, op);
      CHECK(same(r, rank() == 0 ? expected(op, l.make(d, 0), l.make(d, 1)) : l.make(d, 1)));
    }
}

TEST_CASE("all_gather, gather and scatter on every dtype and layout", "[distributed]") {
  for (const st::dtype d : all_dtypes)
    for (const layout& l : layouts) {
      INFO(label(d, l));
      const st::AnyTensor mine = l.make(d, rank());
      const std::vector<st::AnyTensor> outs = {st::zeros_like(mine), l.make(d, 0).t().contiguous().t()};
      dist::all_gather(outs, mine);
      CHECK(same(outs[0], l.make(d, 0)));
      CHECK(same(outs[1], l.make(d, 1)));

      const st::AnyTensor stacked = st::zeros({2 * std::max<std::int64_t>(mine.numel(), 0)}, d);
      dist::all_gather_into_tensor(stacked, mine);
      CHECK(same(stacked, st::cat({l.make(d, 0).reshape({-1}), l.make(d, 1).reshape({-1})})));

      std::vector<st::AnyTensor> gathered;
      if (rank() == 0) gathered = {st::zeros_like(mine), st::zeros_like(mine)};
      dist::gather(mine, gathered, 0);
      if (rank() == 0) {
        CHECK(same(gathered[0], l.make(d, 0)));
        CHECK(same(gathered[1], l.make(d, 1)));
      }

      const st::AnyTensor into = l.make(d, rank());
      std::vector<st::AnyTensor> parts;
      if (rank() == 1) parts = {l.make(d, 1), l.make(d, 0)};
      dist::scatter(into, parts, 1);
      CHECK(same(into, l.make(d, 1 - rank())));
    }
}

TEST_CASE("reduce_scatter and all_to_all on every dtype", "[distributed]") {
  for (const st::dtype d : all_dtypes) {
    INFO(st::dtype_name(d));
    const dist::ReduceOp op = is_bool(d) ? dist::ReduceOp::BOR : dist::ReduceOp::SUM;
    // Rank r's input: [4, 3] (strided); chunk k of dim 0 reduced over the ranks goes to rank k.
    const st::AnyTensor in = base(d, rank(), {3, 4}).t();
    const st::AnyTensor out = st::zeros({2, 3}, d);
    dist::reduce_scatter_tensor(out, in, op);
    const st::AnyTensor all = expected(op, base(d, 0, {3, 4}).t(), base(d, 1, {3, 4}).t());
    CHECK(same(out, all.narrow(0, 2 * rank(), 2)));

    const st::AnyTensor out2 = st::zeros({3}, d);
    dist::reduce_scatter(out2, {base(d, rank(), {3}), base(d, rank() + 2, {3})}, op);
    CHECK(same(out2, expected(op, base(d, 2 * rank(), {3}), base(d, 2 * rank() + 1, {3}))));

    // Uneven pieces: rank r sends r + 1 + k elements to rank k.
    std::vector<st::AnyTensor> send, recv;
    for (int k = 0; k < 2; ++k) {
      send.push_back(base(d, rank() + 4 * k, {rank() + 1 + k}));
      recv.push_back(st::zeros({k + 1 + rank()}, d));
    }
    dist::all_to_all(recv, send);
    for (int k = 0; k < 2; ++k) CHECK(same(recv[static_cast<std::size_t>(k)], base(d, k + 4 * rank(), {k + 1 + rank()})));
  }
}

TEST_CASE("send and recv, blocking and not, from a named or any source", "[distributed]") {
  for (const st::dtype d : all_dtypes)
    for (const layout& l : layouts) {
      INFO(label(d, l));
      if (rank() == 0) {
        dist::send(l.make(d, 0), 1);
        const st::AnyTensor got = st::zeros_like(l.make(d, 0));
        CHECK(dist::recv(got) == 1);
        CHECK(same(got, l.make(d, 1)));
      } else {
        const st::AnyTensor got = l.make(d, 1).t().contiguous().t();  // another layout to write into
        CHECK(dist::recv(got, 0) == 0);
        CHECK(same(got, l.make(d, 0)));
        dist::send(l.make(d, 1), 0);
      }
    }
  const st::AnyTensor out = st::AnyTensor(st::arange<float>(6)) * (rank() + 1);
  const st::AnyTensor in = st::AnyTensor(st::zeros<float>({6}));
  dist::Work r = dist::irecv(in, peer(), dist::world(), 7);
  dist::Work s = dist::isend(out, peer(), dist::world(), 7);
  CHECK(s.wait());
  r.wait();
  CHECK(r.source_rank() == peer());
  CHECK(same(in, st::AnyTensor(st::arange<float>(6)) * (peer() + 1)));
}

TEST_CASE("async_op returns a work handle; results are written by wait", "[distributed]") {
  std::vector<st::AnyTensor> ts;
  std::vector<dist::Work> works;
  for (int k = 0; k < 4; ++k) {
    ts.push_back(st::AnyTensor(st::full({1000}, k + rank(), st::dtype::float64)).t());
    works.push_back(dist::all_reduce(ts.back(), dist::ReduceOp::SUM, dist::world(), true));
  }
  const st::AnyTensor strided = st::AnyTensor(st::zeros<double>({10, 2})).select(1, 1);
  if (rank() == 0) strided.fill_(3.5);
  dist::Work b = dist::broadcast(strided, 0, dist::world(), true);
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!works[3].is_completed() && std::chrono::steady_clock::now() < give_up) std::this_thread::yield();
  CHECK(works[3].is_completed());  // completes without wait(): the executor's thread ran it
  for (int k = 0; k < 4; ++k) {
    CHECK(works[static_cast<std::size_t>(k)].wait());
    CHECK(works[static_cast<std::size_t>(k)].is_completed());
    CHECK(same(ts[static_cast<std::size_t>(k)], st::AnyTensor(st::full({1000}, 2 * k + 1, st::dtype::float64))));
  }
  b.wait();
  CHECK(same(strided, st::AnyTensor(st::full({10}, 3.5, st::dtype::float64))));
  dist::barrier(dist::world(), true).wait();
}

TEST_CASE("torch's checks: shapes, list lengths, dtypes, ops and ranks", "[distributed]") {
  const st::AnyTensor t = st::AnyTensor(st::zeros<float>({2, 3}));
  CHECK_THROWS_WITH(dist::all_gather_into_tensor(st::AnyTensor(st::zeros<float>({10})), t),
                    "strata.distributed: all_gather_into_tensor: output tensor size must be equal to world_size times "
                    "input tensor size (output [10], input [2, 3], 2 ranks)");
  CHECK_THROWS_WITH(dist::reduce_scatter_tensor(t, st::AnyTensor(st::zeros<float>({5, 3}))),
                    Catch::Contains("input tensor must be the same size as output size times world size"));
  CHECK_THROWS_WITH(dist::all_gather({t}, t),
                    "strata.distributed: all_gather: the output list has 1 tensors for a group of 2 ranks");
  CHECK_THROWS_WITH(dist::all_gather({t, st::AnyTensor(st::zeros<float>({7}))}, t),
                    Catch::Contains("an output tensor has 7 elements (sizes [7]), the tensor 6 (sizes [2, 3])"));
  CHECK_THROWS_WITH(dist::all_gather({t, st::AnyTensor(st::zeros<double>({2, 3}))}, t),
                    Catch::Contains("an output tensor has dtype torch.float64, the tensor torch.float32"));
  CHECK_THROWS_WITH(dist::all_reduce(st::AnyTensor(st::zeros<std::int64_t>({2})), dist::ReduceOp::AVG),
                    Catch::Contains("ReduceOp.AVG needs a floating or complex tensor"));
  CHECK_THROWS_WITH(dist::all_reduce(t, dist::ReduceOp::BXOR),
                    "strata.distributed: ReduceOp.BXOR needs an integer or bool tensor (got a torch.float32 tensor)");
  CHECK_THROWS_WITH(dist::all_reduce(st::AnyTensor(st::zeros<std::complex<float>>({2})), dist::ReduceOp::MAX),
                    Catch::Contains("ReduceOp.MAX cannot be used with complex tensors"));
  CHECK_THROWS_WITH(dist::broadcast(t, 2), "strata.distributed: broadcast: source rank 2 is not part of the group");
  if (rank() == 1) {
    CHECK_THROWS_WITH(dist::gather(t, {t, t}, 0),
                      Catch::Contains("Argument ``gather_list`` must NOT be specified on non-destination ranks."));
    CHECK_THROWS_WITH(dist::scatter(t, {t, t}, 0),
                      Catch::Contains("Argument ``scatter_list`` must NOT be specified on non-source ranks."));
  }
  CHECK_THROWS_WITH(dist::init_process_group(), "strata.distributed: trying to initialize the default process group twice!");
  CHECK_THROWS_WITH(dist::init_process_group("gloo"), Catch::Contains("backend \"gloo\" is not available"));
  dist::barrier();
}

TEST_CASE("a group of a subset of the ranks", "[distributed]") {
  const dist::ProcessGroup solo = dist::new_group({1});
  CHECK(solo.size() == 1);
  CHECK(solo.is_member() == (rank() == 1));
  CHECK(dist::get_rank(solo) == (rank() == 1 ? 0 : -1));
  const st::AnyTensor t = st::AnyTensor(st::full({3}, rank() + 1.0, st::dtype::float32));
  dist::all_reduce(t, dist::ReduceOp::SUM, solo);  // rank 0 is not a member: a no-op there
  CHECK(same(t, st::AnyTensor(st::full({3}, rank() + 1.0, st::dtype::float32))));
  const dist::ProcessGroup both = dist::new_group({1, 0});  // sorted, as torch's: group rank = world rank
  CHECK(dist::get_rank(both) == rank());
  CHECK(both.global_rank(0) == 0);
  dist::broadcast(t, 1, both);  // src is a world rank, as torch's
  CHECK(same(t, st::AnyTensor(st::full({3}, 2.0, st::dtype::float32))));
}

// wait() reports the timeout as an exception; the operation stays queued and completes when
// the late rank arrives. (A blocking MPI call still running after twice the timeout aborts the
// job with the same message: the CTest test distributed_timeout_abort runs main's --late-rank.)
TEST_CASE("a rank that fails before a collective makes the others time out with a clear error", "[distributed]") {
  dist::set_timeout(std::chrono::milliseconds(2000));
  const st::AnyTensor t = st::AnyTensor(st::ones<float>({4}));
  if (rank() == 0) {
    dist::Work w = dist::all_reduce(t, dist::ReduceOp::SUM, dist::world(), true);
    CHECK_THROWS_WITH(w.wait(), "strata.distributed: all_reduce on rank 0 did not complete within 2000 ms: another "
                                "rank has failed, is late, or called a different operation (the timeout is "
                                "init_process_group's, or set_timeout)");
    CHECK(!w.is_completed());
  } else {
    // This rank's work threw before it reached the collective; it recovers and joins late.
    std::this_thread::sleep_for(std::chrono::milliseconds(2800));
    dist::all_reduce(t);
    CHECK(same(t, st::AnyTensor(st::full({4}, 2.0, st::dtype::float32))));
  }
  dist::set_timeout(std::chrono::seconds(120));
  dist::barrier();  // queued behind rank 0's late all_reduce: both ranks are in step again
  if (rank() == 0) CHECK(same(t, st::AnyTensor(st::full({4}, 2.0, st::dtype::float32))));
}

namespace {
// A two-layer network in float64: tanh(x W1 + b1) W2 + b2, the mean squared error.
struct mlp {
  st::Tensor<double> W1, b1, W2, b2;
  explicit mlp(double shift) {
    W1 = ((st::arange<double>(20) % 7 - 3) / 10 + shift).view(4, 5).requires_grad_();
    b1 = (st::arange<double>(5) / 20 - shift).requires_grad_();
    W2 = ((st::arange<double>(15) % 5 - 2) / 5).view(5, 3).requires_grad_();
    b2 = st::zeros<double>({3}).requires_grad_();
  }
  std::vector<st::Tensor<double>> parameters() const { return {W1, b1, W2, b2}; }
  st::Tensor<double> loss(const st::Tensor<double>& x, const st::Tensor<double>& y) const {
    auto out = (x.matmul(W1) + b1).tanh().matmul(W2) + b2;
    return ((out - y) * (out - y)).mean();
  }
  void step(double lr) const {
    st::no_grad guard;
    for (const auto& p : parameters()) {
      p -= lr * p.grad();
      p.grad().zero_();
    }
  }
};
st::Tensor<double> batch_x() { return (st::arange<double>(32) * 0.37).sin().view(8, 4).eval(); }
st::Tensor<double> batch_y() { return (st::arange<double>(24) * 0.11).cos().view(8, 3).eval(); }
// Every parameter of rank 0 equals rank 1's, element for element.
bool equal_on_both_ranks(const mlp& m) {
  for (const auto& p : m.parameters()) {
    const st::AnyTensor mine = p.detach().reshape({-1});
    const st::AnyTensor both = st::zeros({2 * mine.numel()}, st::dtype::float64);
    dist::all_gather_into_tensor(both, mine);
    if (!same(both.narrow(0, 0, mine.numel()), both.narrow(0, mine.numel(), mine.numel()))) return false;
  }
  return true;
}
}  // namespace

TEST_CASE("DistributedDataParallel: each rank on half of each batch trains as one process on the whole batch",
          "[distributed][ddp]") {
  for (const double cap_mb : {25.0, 1e-4})
    for (const bool overlap : {true, false}) {
      INFO("bucket_cap_mb " << cap_mb << " overlap " << overlap);
      const mlp model(rank() == 0 ? 0.0 : 0.3);  // rank 1 starts elsewhere: the broadcast fixes it
      dist::DistributedDataParallel ddp(model, dist::DDPOptions().bucket_cap(cap_mb).overlap_backward(overlap));
      CHECK(ddp.buckets().size() == (cap_mb > 1 ? 1u : 4u));
      CHECK(ddp.buckets().front().front() == 3);  // buckets in reverse order: b2 first
      CHECK(equal_on_both_ranks(model));
      const mlp reference(0.0);  // the one-process run on the whole batch
      const auto x = batch_x(), y = batch_y();
      for (int step = 0; step < 4; ++step) {
        model.loss(x.narrow(0, 4 * rank(), 4), y.narrow(0, 4 * rank(), 4)).backward();
        reference.loss(x, y).backward();
        for (std::size_t k = 0; k < 4; ++k)
          CHECK(close(model.parameters()[k].grad(), reference.parameters()[k].grad(), 1e-12));
        model.step(0.2);
        reference.step(0.2);
        CHECK(equal_on_both_ranks(model));
        for (std::size_t k = 0; k < 4; ++k) CHECK(close(model.parameters()[k], reference.parameters()[k], 1e-12));
      }
    }
}

TEST_CASE("DistributedDataParallel: no_sync accumulates locally; the next backward averages the sum",
          "[distributed][ddp]") {
  const mlp model(0.0);
  dist::DistributedDataParallel ddp(model, dist::DDPOptions().bucket_cap(1e-4));
  const auto x = batch_x(), y = batch_y();
  const auto part = [&](int r, int half) { return std::pair(x.narrow(0, 4 * r + 2 * half, 2), y.narrow(0, 4 * r + 2 * half, 2)); };
  {
    auto guard = ddp.no_sync();
    const auto [xa, ya] = part(rank(), 0);
    model.loss(xa, ya).backward();
  }
  // Local only: rank 0's and rank 1's gradients differ here.
  const st::AnyTensor local = model.b2.grad().clone();
  const st::AnyTensor both = st::zeros({6}, st::dtype::float64);
  dist::all_gather_into_tensor(both, local);
  CHECK(!same(both.narrow(0, 0, 3), both.narrow(0, 3, 3)));
  const auto [xb, yb] = part(rank(), 1);
  model.loss(xb, yb).backward();
  // The average over the ranks of both micro-batches' gradients.
  const mlp reference(0.0);
  for (int r = 0; r < 2; ++r)
    for (int half = 0; half < 2; ++half) {
      const auto [xr, yr] = part(r, half);
      reference.loss(xr, yr).backward();
    }
  for (std::size_t k = 0; k < 4; ++k)
    CHECK(close(model.parameters()[k].grad(), reference.parameters()[k].grad() / 2, 1e-12));
}

TEST_CASE("DistributedDataParallel over a module: batch norm's running statistics are rank 0's after each backward",
          "[distributed][ddp]") {
  st::nn::BatchNorm1d<float> bn(st::nn::BatchNormOptions(3));
  dist::DistributedDataParallel ddp(bn);
  CHECK(ddp.parameters().size() == 2);  // weight, bias
  const auto x = (st::arange<float>(12).view(4, 3) * (rank() + 1)).eval();  // different batches per rank
  bn.forward(x).square().sum().backward();
  // Rank 0's batch means [4.5, 5.5, 6.5], times the momentum 0.1, on both ranks.
  CHECK(close(*bn.running_mean, st::tensor({0.45f, 0.55f, 0.65f}), 1e-6));
  const st::AnyTensor both = st::zeros({6}, st::dtype::float32);
  dist::all_gather_into_tensor(both, *bn.running_var);
  CHECK(same(both.narrow(0, 0, 3), both.narrow(0, 3, 3)));
}

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "--late-rank") {
    // Rank 1 fails before a blocking all_reduce and never arrives: rank 0's watchdog prints
    // the timeout and aborts the job (mpirun's exit status is then not 0).
    dist::init_process_group("mpi", std::chrono::milliseconds(2000));
    const st::AnyTensor t = st::AnyTensor(st::ones<float>({4}));
    if (dist::get_rank() == 0) dist::all_reduce(t);
    else std::this_thread::sleep_for(std::chrono::seconds(60));
    dist::destroy_process_group();
    return 0;
  }
  if (argc > 1 && std::string(argv[1]) == "--no-destroy") {
    // A program that ends without destroy_process_group (a dropped isend among its operations):
    // the runtime drains and finalizes at exit, and the exit status is 0.
    dist::init_process_group("mpi", std::chrono::seconds(60));
    const st::AnyTensor u = st::AnyTensor(st::ones<float>({4}));
    dist::all_reduce(u, dist::ReduceOp::SUM, dist::world(), true);  // never waited for
    const st::AnyTensor t = st::AnyTensor(st::ones<float>({4})), got = st::AnyTensor(st::zeros<float>({4}));
    if (dist::get_rank() == 0) dist::isend(t, 1);  // handle dropped at once
    else dist::recv(got, 0);
    return dist::get_rank() == 1 && got.sum().item<float>() != 4.0f ? 1 : 0;
  }
  dist::init_process_group("mpi", std::chrono::seconds(120));
  const int failures = Catch::Session().run(argc, argv);
  // Every rank's result decides: one failing rank fails the run on all.
  const st::AnyTensor failed = st::AnyTensor(st::full({1}, failures, st::dtype::int64));
  dist::all_reduce(failed, dist::ReduceOp::MAX);
  dist::destroy_process_group();
  return failed.item<std::int64_t>() > 0 ? 1 : 0;
}
