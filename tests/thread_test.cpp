// SPDX-License-Identifier: MIT
// Several user threads evaluating expressions at once, some dividing by zero, each must get
// exactly its own result or its own error (the loop's status belongs to the call). Also run
// under ThreadSanitizer (the tsan preset).
#include <catch2/catch.hpp>
#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>
import strata;

namespace st = strata;

TEST_CASE("user threads see only their own loop errors and results", "[thread]") {
  constexpr int threads = 4, rounds = 300;
  const auto numerator = st::arange(std::int64_t{1}, std::int64_t{4097}).view({64, 64});
  const auto good = st::full<std::int64_t>({64}, 3);
  auto bad = st::full<std::int64_t>({64}, 3);
  bad.narrow(0, 17, 1).fill_(0);  // one zero divisor in each row
  const std::int64_t want = st::sum(st::floor_divide(numerator, good)).item();

  std::atomic<int> wrong{0}, missed{0}, spurious{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      for (int r = 0; r < rounds; ++r) {
        const bool divide_by_zero = (t + r) % 2 == 0;
        try {
          if (divide_by_zero) {
            // element-wise and inside a reduction: both must report
            if (r % 4 < 2) st::Tensor<std::int64_t> q = st::floor_divide(numerator, bad);
            else (void)st::sum(st::remainder(numerator, bad)).item();
            missed.fetch_add(1);
          } else {
            const std::int64_t got = st::sum(st::floor_divide(numerator, good)).item();
            st::Tensor<std::int64_t> q = st::fmod(numerator, good);
            if (got != want || q.to_vector()[4] != 2) wrong.fetch_add(1);
          }
        } catch (const st::error& e) {
          if (!divide_by_zero || std::string(e.what()) != "ZeroDivisionError") spurious.fetch_add(1);
        }
      }
    });
  }
  for (auto& th : pool) th.join();
  CHECK(wrong.load() == 0);
  CHECK(missed.load() == 0);
  CHECK(spurious.load() == 0);
}

TEST_CASE("one call's zero division does not leak into the next call on the same thread", "[thread]") {
  const auto a = st::from_vector<std::int32_t>({4, 5, 6});
  const auto z = st::from_vector<std::int32_t>({1, 0, 2});
  CHECK_THROWS_WITH(st::eval(st::floor_divide(a, z)), "ZeroDivisionError");
  CHECK(st::eval(st::floor_divide(a, 2)).to_vector() == std::vector<std::int32_t>{2, 2, 3});
}

TEST_CASE("threads using strata's own thread pool at once", "[thread]") {
  // Large enough to run multi-threaded inside each call (above the grain).
  const auto x = st::ones<float>({512, 1024});
  std::vector<std::thread> pool;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 3; ++t) {
    pool.emplace_back([&, t] {
      for (int r = 0; r < 20; ++r) {
        st::Tensor<float> y = x * static_cast<float>(t + 1) + 1.0f;
        const float s = st::sum(y).item();
        const float m = st::amax(y, {1}).to_vector()[100];
        if (s != 512.0f * 1024.0f * static_cast<float>(t + 2) || m != static_cast<float>(t + 2)) wrong.fetch_add(1);
      }
    });
  }
  for (auto& th : pool) th.join();
  CHECK(wrong.load() == 0);
}

TEST_CASE("user threads multiplying matrices at once (GEMM and fused einsums)", "[thread]") {
  constexpr int threads = 3, rounds = 20;
  const auto a = st::arange<double>(96 * 80).view({96, 80}) / 1000.0;
  const st::Tensor<double> A = a, B = A.t() + 1.0;
  const st::Tensor<double> want = st::matmul(A, B);  // [96, 96], on the BLAS
  const double want_dot = st::Tensor<double>(st::einsum("ij,ij->", A, A)).item();
  std::atomic<int> wrong{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (int r = 0; r < rounds; ++r) {
        const st::Tensor<double> c = st::matmul(A, B);
        if (!st::Tensor<bool>(st::all(c == want)).item()) ++wrong;
        if (st::Tensor<double>(st::einsum("ij,ij->", A, A)).item() != want_dot) ++wrong;
      }
    });
  }
  for (auto& th : pool) th.join();
  CHECK(wrong == 0);
}
