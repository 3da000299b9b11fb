// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>
#include "golden.hpp"
import strata;
using namespace strata;

TEST_CASE("small_vec keeps up to 8 sizes inline and grows past them", "[shape]") {
  dim_vector v{1, 2, 3};
  CHECK(v.is_inline());
  for (std::int64_t i = 4; i <= 8; ++i) v.push_back(i);
  CHECK(v.is_inline());
  v.push_back(9);
  CHECK_FALSE(v.is_inline());
  CHECK(v.size() == 9);
  dim_vector w = v;  // copy of a heap vector
  CHECK(w == v);
  dim_vector m = std::move(w);
  CHECK(m.size() == 9);
  CHECK(m[8] == 9);
  m.insert(0, 0);
  CHECK(m[0] == 0);
  CHECK(m[9] == 9);
  m.erase(0);
  CHECK(m == v);
  dim_vector small{5, 6};
  dim_vector moved = std::move(small);
  CHECK(moved == dim_vector{5, 6});
  m = moved;
  CHECK(m == dim_vector{5, 6});
  dim_vector sixteen(16, 7);
  CHECK(sixteen.size() == 16);
  CHECK(sixteen[15] == 7);
}

TEST_CASE("dim_vector and int_list take the sequences that PyTorch code passes as sizes", "[shape]") {
  const std::vector<std::int64_t> v{2, 3, 4};
  const int_list from_vector = v;
  CHECK(dim_vector(from_vector) == dim_vector{2, 3, 4});
  CHECK(dim_vector(v) == dim_vector{2, 3, 4});
  CHECK(dim_vector(std::span<const std::int64_t>(v)) == dim_vector{2, 3, 4});
  std::int64_t raw[2] = {5, 6};
  const int_list from_span = std::span<std::int64_t>(raw);
  const int_list from_const_span = std::span<const std::int64_t>(raw);
  CHECK(from_span == int_list{5, 6});
  CHECK(from_const_span.data() == raw);
  const std::array<std::int64_t, 3> arr{7, 8, 9};
  CHECK(int_list(arr) == int_list{7, 8, 9});
  CHECK(int_list(raw) == int_list{5, 6});
  CHECK(int_list(std::span<const std::int64_t, 2>(raw)) == int_list{5, 6});
  CHECK(int_list(small_vec<std::int64_t, 16>{1, 2}) == int_list{1, 2});
  CHECK(dim_vector(arr) == dim_vector{7, 8, 9});
  // A class holding one copies and moves it by the copy and move constructors (the
  // constructor from sequences steps aside for a small_vec).
  struct holder {
    dim_vector d;
  };
  holder h{dim_vector{1, 2, 3, 4, 5, 6, 7, 8, 9}};
  const holder copy = h;
  const holder moved = std::move(h);
  CHECK(copy.d == moved.d);
  CHECK(moved.d.size() == 9);
}

TEST_CASE("broadcast_shapes matches PyTorch on a few hundred pairs", "[shape][broadcast]") {
  int ok = 0, failures = 0;
  for (const auto& line : golden::lines("broadcast.txt")) {
    const auto parts = golden::split(line, ';');
    const auto a = golden::parse_shape(parts[0]);
    const auto b = golden::parse_shape(parts[1]);
    INFO(line);
    if (parts[2][0] == '!') {
      try {
        broadcast_shapes(a, b);
        FAIL("no exception");
      } catch (const shape_error& e) {
        CHECK(std::string(e.what()) == parts[2].substr(1));
      }
      ++failures;
    } else {
      CHECK(broadcast_shapes(a, b) == dim_vector(golden::parse_shape(parts[2])));
      ++ok;
    }
  }
  CHECK(ok > 200);
  CHECK(failures > 20);
}

TEST_CASE("broadcast_shapes seeds", "[shape][broadcast]") {
  CHECK(broadcast_shapes({2, 3}, {3}) == dim_vector{2, 3});
  CHECK(broadcast_shapes({5, 3, 4, 1}, {3, 1, 1}) == dim_vector{5, 3, 4, 1});
  CHECK(broadcast_shapes({}, {}) == dim_vector{});
  CHECK(broadcast_shapes({0}, {1}) == dim_vector{0});
  CHECK(broadcast_shapes({2, 1}, {1, 3}, dim_vector{4, 1, 1}) == dim_vector{4, 2, 3});
  CHECK_THROWS_WITH(broadcast_shapes({2, 2}, {2, 3}),
                    "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 1");
  CHECK_THROWS_AS(broadcast_shapes({2}, {0}), shape_error);
}

TEST_CASE("contiguity follows PyTorch's rule", "[shape]") {
  CHECK(contiguous_strides({2, 3, 4}) == dim_vector{12, 4, 1});
  CHECK(contiguous_strides({2, 0, 4}) == dim_vector{4, 4, 1});
  CHECK(contiguous_strides({}) == dim_vector{});
  CHECK(is_contiguous({2, 3}, {3, 1}));
  CHECK_FALSE(is_contiguous({2, 3}, {1, 2}));
  CHECK(is_contiguous({2, 1, 3}, {3, 99, 1}));  // a size-1 dim's stride does not matter
  CHECK(is_contiguous({3, 0}, {5, 7}));          // empty tensors are contiguous
  CHECK(is_contiguous({}, {}));
  CHECK_FALSE(is_contiguous({2, 2}, {2, 0}));
}

TEST_CASE("wrap_dim and numel_of reject bad input", "[shape]") {
  CHECK(wrap_dim(-1, 3) == 2);
  CHECK(wrap_dim(0, 0) == 0);
  CHECK(wrap_dim(-1, 0) == 0);
  CHECK_THROWS_WITH(wrap_dim(3, 3), "Dimension out of range (expected to be in range of [-3, 2], but got 3)");
  CHECK_THROWS_AS(wrap_dim(-4, 3), index_error);
  CHECK(numel_of({2, 3}) == 6);
  CHECK(numel_of({}) == 1);
  CHECK_THROWS_AS(numel_of({2, -1}), shape_error);
  CHECK_THROWS_AS(numel_of({1ll << 40, 1ll << 40}), shape_error);
  CHECK(to_string(int_list{2, 3}) == "[2, 3]");
}
