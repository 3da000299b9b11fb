// SPDX-License-Identifier: MIT
// Autograd: PyTorch's examples, hand-checked derivatives, graph semantics and errors.
#include <catch2/catch.hpp>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <optional>
#include <thread>
#include <vector>
#include "check_close.hpp"
#include "tensor_values.hpp"
import strata;
using namespace strata;

TEST_CASE("PyTorch's broadcasting example: B's gradient is summed back to its shape", "[autograd]") {
  auto A = from_vector<float>({1, 2, 3}).requires_grad_();
  auto B = from_vector<float>({1}).requires_grad_();
  Tensor<float> C = A + B;
  sum(C).backward();
  test::check_close(as_doubles(A.grad()), {1, 1, 1}, 1e-6);
  test::check_close(as_doubles(B.grad()), {3}, 1e-6);
  CHECK(A.grad().sizes() == A.sizes());
  CHECK(B.grad().sizes() == B.sizes());
}

TEST_CASE("hand-checked derivatives", "[autograd]") {
  SECTION("exp, relu, a constant weight") {
    auto x = from_vector<double>({0.5, -1, 2, 0}).requires_grad_();
    auto w = from_vector<double>({1, 2, 3, 4});
    Tensor<double> L = sum(exp(x) * w + relu(x) * x);
    L.backward();
    // d/dx = w e^x + (x > 0 ? 2x : 0)
    test::check_close(as_doubles(x.grad()), {std::exp(0.5) + 1, 2 * std::exp(-1.0), 3 * std::exp(2.0) + 4, 4}, 1e-6);
  }
  SECTION("amax shares the gradient among ties") {
    auto m = from_vector<float>({1, 3, 3, 2}, {2, 2}).requires_grad_();
    amax(m).backward();
    test::check_close(as_doubles(m.grad()), {0, 0.5, 0.5, 0}, 1e-6);
  }
  SECTION("prod with a zero") {
    auto p = from_vector<float>({1, 0, 3, 2}, {2, 2}).requires_grad_();
    sum(prod(p, {1})).backward();
    test::check_close(as_doubles(p.grad()), {0, 1, 2, 3}, 1e-6);
  }
  SECTION("views: t, narrow") {
    auto v = from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3}).requires_grad_();
    Tensor<float> s = v.t() * 2;
    sum(s.narrow(0, 1, 2)).backward();
    test::check_close(as_doubles(v.grad()), {0, 2, 2, 0, 2, 2}, 1e-6);
  }
}

TEST_CASE("PyTorch 1.13's conventions at the awkward points", "[autograd]") {
  const double inf = std::numeric_limits<double>::infinity();
  SECTION("relu'(0) = 0, abs'(0) = 0, sqrt'(0) = inf") {
    auto x = from_vector<double>({-1, 0, 2}).requires_grad_();
    sum(relu(x) + abs(x)).backward();
    test::check_close(as_doubles(x.grad()), {-1, 0, 2}, 1e-6);
    auto z = from_vector<double>({0, 4}).requires_grad_();
    sum(sqrt(z)).backward();
    test::check_close(as_doubles(z.grad()), {inf, 0.25}, 1e-6);
  }
  SECTION("clamp passes the gradient on the closed interval") {
    auto x = from_vector<float>({-2, -1, 0, 1, 2}).requires_grad_();
    sum(clamp(x, -1, 1)).backward();
    test::check_close(as_doubles(x.grad()), {0, 1, 1, 1, 0}, 1e-6);
  }
  SECTION("maximum and minimum split ties in halves") {
    auto a = from_vector<float>({1, 2, 3}).requires_grad_();
    auto b = from_vector<float>({3, 2, 1}).requires_grad_();
    sum(maximum(a, b) + 2 * minimum(a, b)).backward();
    test::check_close(as_doubles(a.grad()), {2, 1.5, 1}, 1e-6);
    test::check_close(as_doubles(b.grad()), {1, 1.5, 2}, 1e-6);
  }
  SECTION("where sends nothing to the condition; comparisons and rounding give zeros") {
    auto x = from_vector<float>({1, -2, 3}).requires_grad_();
    auto y = from_vector<float>({10, 20, 30}).requires_grad_();
    sum(where(x > 0, x * y, y) + floor(x) + sign(y) + round(x * 3)).backward();
    test::check_close(as_doubles(x.grad()), {10, 0, 30}, 1e-6);
    test::check_close(as_doubles(y.grad()), {1, 1, 3}, 1e-6);
  }
  SECTION("pow: both operands; x^0 has a zero gradient at x = 0") {
    auto x = from_vector<double>({0, 2, 3}).requires_grad_();
    auto p = from_vector<double>({0, 3, 0.5}).requires_grad_();
    sum(pow(x, p)).backward();
    test::check_close(as_doubles(x.grad()), {0, 12, 0.5 / std::sqrt(3.0)}, 1e-6);
    test::check_close(as_doubles(p.grad()), {0, 8 * std::log(2.0), std::sqrt(3.0) * std::log(3.0)}, 1e-6);
  }
  SECTION("mixed dtypes: each gradient has its input's dtype") {
    auto f = from_vector<float>({1, 2}).requires_grad_();
    auto d = from_vector<double>({3, 4}).requires_grad_();
    auto h = from_vector<half>({half(0.5f), half(1.5f)}).requires_grad_();
    Tensor<double> y = f * d + cast<double>(h) * f;
    sum(y).backward();
    CHECK(f.grad().dtype() == dtype::float32);
    CHECK(d.grad().dtype() == dtype::float64);
    CHECK(h.grad().dtype() == dtype::float16);
    test::check_close(as_doubles(f.grad()), {3.5, 5.5}, 1e-6);
    test::check_close(as_doubles(d.grad()), {1, 2}, 1e-6);
    test::check_close(as_doubles(h.grad()), {1, 2}, 1e-6);
  }
  SECTION("integer and bool tensors may not require grad") {
    auto i = from_vector<std::int32_t>({1, 2});
    CHECK_THROWS_WITH(i.requires_grad_(), Catch::Contains("only Tensors of floating point and complex dtype can require gradients"));
    auto x = from_vector<float>({1.5f, 2.5f}).requires_grad_();
    Tensor<std::int64_t> r = cast<std::int64_t>(x);  // not differentiable: not recorded
    CHECK_FALSE(r.requires_grad());
  }
  SECTION("complex: the gradient of sum(|z|^2) is 2z (PyTorch's conjugate convention)") {
    using C = std::complex<double>;
    auto z = from_vector<C>({C(1, 2), C(-3, 0.5)}).requires_grad_();
    sum(cast<double>(z * conj(z))).backward();  // cast to real keeps the real part
    const auto g = z.grad().to_vector();
    CHECK(g[0] == C(2, 4));
    CHECK(g[1] == C(-6, 1));
  }
}

TEST_CASE("reductions: dims, keepdim, mean, prod, amin", "[autograd]") {
  auto x = from_vector<double>({1, 2, 3, 4, 5, 6}, {2, 3}).requires_grad_();
  SECTION("mean over dim 1, keepdim, times a weight") {
    auto w = from_vector<double>({10, 20}, {2, 1});
    sum(mean(x * x, {1}, true) * w).backward();
    test::check_close(as_doubles(x.grad()), {20. / 3, 40. / 3, 60. / 3, 160. / 3, 200. / 3, 240. / 3}, 1e-6);
  }
  SECTION("prod over dim 0 without zeros") {
    sum(prod(x, {0})).backward();
    test::check_close(as_doubles(x.grad()), {4, 5, 6, 1, 2, 3}, 1e-6);
  }
  SECTION("amin over all: the single minimum gets it") {
    amin(x * -1).backward();
    test::check_close(as_doubles(x.grad()), {0, 0, 0, 0, 0, -1}, 1e-6);
  }
  SECTION("sum_to of an expression") {
    Tensor<double> s = sum_to(x * 2, {3});
    sum(s * from_vector<double>({1, 2, 3})).backward();
    test::check_close(as_doubles(x.grad()), {2, 4, 6, 2, 4, 6}, 1e-6);
  }
}

TEST_CASE("views carry PyTorch's backward", "[autograd]") {
  auto x = arange<double>(12).view({3, 4}).detach().requires_grad_();
  SECTION("expand sums back; permute, select, diagonal, unsqueeze") {
    auto r = from_vector<double>({1, 2, 3, 4}).requires_grad_();
    sum(r.unsqueeze(0).expand({3, 4}) * x).backward();
    test::check_close(as_doubles(r.grad()), {12, 15, 18, 21}, 1e-6);
    test::check_close(as_doubles(x.grad()), {1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4}, 1e-6);
  }
  SECTION("select and diagonal lay the gradient into zeros") {
    sum(x.select(1, 2) * 2 + x.diagonal()).backward();
    test::check_close(as_doubles(x.grad()), {1, 0, 2, 0, 0, 1, 2, 0, 0, 0, 3, 0}, 1e-6);
  }
  SECTION("overlapping unfold windows add up") {
    auto v = from_vector<double>({1, 2, 3, 4, 5}).requires_grad_();
    sum(v.unfold(0, 3, 1)).backward();  // windows [0..2], [1..3], [2..4]
    test::check_close(as_doubles(v.grad()), {1, 2, 3, 2, 1}, 1e-6);
  }
  SECTION("reshape of a non-contiguous view, flatten, movedim, transpose") {
    Tensor<double> y = x.t().reshape({12}) * 1;
    sum(y * arange<double>(12)).backward();
    // y[k] = x.t() flattened: x.t()[i][j] = x[j][i], k = i * 3 + j
    test::check_close(as_doubles(x.grad()), {0, 3, 6, 9, 1, 4, 7, 10, 2, 5, 8, 11}, 1e-6);
  }
  SECTION("a view of a non-leaf") {
    Tensor<double> y = x * x;
    sum(y.narrow(1, 1, 2).movedim(0, 1)).backward();
    test::check_close(as_doubles(x.grad()), {0, 2, 4, 0, 0, 10, 12, 0, 0, 18, 20, 0}, 1e-6);
  }
  SECTION("as_strided lays the gradient back into the tensor's elements") {
    auto v = from_vector<float>({0, 1, 2, 3, 4}).requires_grad_();
    Tensor<float> y = v.as_strided({2, 2}, {2, 1}, 0) * 1.0f;
    sum(y).backward();
    test::check_close(as_doubles(v.grad()), {1, 1, 1, 1, 0}, 1e-6);
    auto u = from_vector<float>({0, 1, 2, 3, 4}).requires_grad_();
    sum(u.as_strided({2, 3}, {1, 1}, 1)).backward();  // overlapping rows: contributions add
    test::check_close(as_doubles(u.grad()), {0, 1, 2, 2, 1}, 1e-6);
  }
  SECTION("clone and to<U> pass the gradient, converted") {
    Tensor<float> f = x.to<float>();
    sum(f.clone() * 3).backward();
    CHECK(x.grad().dtype() == dtype::float64);
    test::check_close(as_doubles(x.grad()), std::vector<double>(12, 3), 1e-6);
  }
}

TEST_CASE("graph semantics", "[autograd]") {
  auto x = from_vector<double>({1, 2, 3}).requires_grad_();
  SECTION("leaves and non-leaves") {
    CHECK(x.is_leaf());
    CHECK(x.requires_grad());
    CHECK_FALSE(x.has_grad());
    Tensor<double> y = x * 2;
    CHECK_FALSE(y.is_leaf());
    CHECK(y.requires_grad());
    auto c = from_vector<double>({1});
    CHECK(c.is_leaf());
    CHECK_FALSE(c.requires_grad());
    CHECK_THROWS_WITH(c.grad(), Catch::Contains("has_grad() is false"));
  }
  SECTION("gradients accumulate over two backward calls, in place like PyTorch") {
    sum(x * x).backward();
    const Tensor<double> held = x.grad();
    sum(x * x).backward();
    test::check_close(as_doubles(x.grad()), {4, 8, 12}, 1e-6);
    test::check_close(as_doubles(held), {4, 8, 12}, 1e-6);  // the same elements
    zero_grad(x);
    test::check_close(as_doubles(x.grad()), {0, 0, 0}, 1e-6);
    sum(x * 3).backward();
    test::check_close(as_doubles(x.grad()), {3, 3, 3}, 1e-6);
  }
  SECTION("a gradient that is also an operand of the expression is not overwritten while read") {
    // The tape writes contiguous gradients in place unless the gradient's memory is read by
    // the same pass: here x.grad() is an operand at two positions, after x's first position.
    std::vector<double> v(1000);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = 0.01 * static_cast<double>(i);
    auto w = from_vector<double>(v).requires_grad_();
    sum(w * w).backward();  // w.grad() = 2w
    const Tensor<double> g = w.grad();
    sum(w * g + w * g).backward();  // adds 2 g: 6w in all
    const std::vector<double> got = as_doubles(w.grad());
    for (std::size_t i = 0; i < v.size(); ++i) CHECK(got[i] == Approx(6 * v[i]));
  }
  SECTION("a gradient that is an operand beside a broadcast input: the operand is read unchanged") {
    // w's gradient (a sum_to, as w is broadcast) is added into w.grad() before y's pass reads g.
    auto w = from_vector<double>({1, 2, 3}).requires_grad_();
    auto y = from_vector<double>({1, 1, 1, 1, 1, 1}, {2, 3}).requires_grad_();
    sum(w * w).backward();  // w.grad() = 2w
    const Tensor<double> g = w.grad();
    sum(w * g + y * g).backward();  // w.grad() += 2 * 2w, y.grad() = 2w on each row
    test::check_close(as_doubles(w.grad()), {6, 12, 18}, 1e-12);
    test::check_close(as_doubles(y.grad()), {2, 4, 6, 2, 4, 6}, 1e-12);
  }
  SECTION("retain_graph: a second backward needs it") {
    Tensor<double> y = exp(x);
    Tensor<double> L = sum(y * y);
    L.backward(std::nullopt, true);
    L.backward();
    for (int i = 0; i < 3; ++i) CHECK(x.grad().to_vector()[i] == Approx(4 * std::exp(2.0 * (i + 1))));
    CHECK_THROWS_WITH(L.backward(), Catch::Contains("Trying to backward through the graph a second time"));
  }
  SECTION("no_grad records nothing; enable_grad inside it records again") {
    {
      no_grad guard;
      CHECK_FALSE(is_grad_enabled());
      Tensor<double> y = x * 2;
      CHECK_FALSE(y.requires_grad());
      {
        enable_grad on;
        Tensor<double> z = x * 2;
        CHECK(z.requires_grad());
      }
      CHECK_FALSE(is_grad_enabled());
      x.assign(x - 0.5);  // the optimizer's step: allowed without grad mode
    }
    CHECK(is_grad_enabled());
    test::check_close(as_doubles(x.detach()), {0.5, 1.5, 2.5}, 1e-6);
  }
  SECTION("grad mode is per thread") {
    no_grad guard;
    bool other = false;
    std::thread t([&] { other = is_grad_enabled(); });
    t.join();
    CHECK(other);
  }
  SECTION("detach cuts the graph") {
    Tensor<double> y = x * x;
    sum(y.detach() * x).backward();
    test::check_close(as_doubles(x.grad()), {1, 4, 9}, 1e-6);
  }
  SECTION("non-leaf inputs chain through several assignments") {
    Tensor<double> y = x * 2;
    Tensor<double> z = y * y;
    sum(z).backward();
    test::check_close(as_doubles(x.grad()), {8, 16, 24}, 1e-6);
    CHECK_FALSE(y.has_grad());
  }
  SECTION("a tensor used twice in one expression: the gradients add") {
    sum(x * x * x + x).backward();
    test::check_close(as_doubles(x.grad()), {4, 13, 28}, 1e-6);
  }
  SECTION("a diamond across several assignments") {
    Tensor<double> a = x * 2;
    Tensor<double> b = exp(a);
    Tensor<double> c = a * 3;
    sum(b + c).backward();
    for (int i = 0; i < 3; ++i) CHECK(x.grad().to_vector()[i] == Approx(2 * (std::exp(2.0 * (i + 1)) + 3)));
  }
  SECTION("backward(gradient) for a non-scalar output") {
    Tensor<double> y = x * x;
    y.backward(from_vector<double>({1, 0.5, 2}));
    test::check_close(as_doubles(x.grad()), {2, 2, 12}, 1e-6);
  }
  SECTION("the user's gradient tensor is not written by accumulation") {
    auto g = from_vector<double>({1, 1, 1});
    Tensor<double> y = x * 1;
    y.backward(g, true);
    y.backward(g);
    test::check_close(as_doubles(g), {1, 1, 1}, 1e-6);
    test::check_close(as_doubles(x.grad()), {2, 2, 2}, 1e-6);
  }
  SECTION("strata::grad returns gradients and leaves grad() alone") {
    auto w = from_vector<double>({2, 2, 2}).requires_grad_();
    Tensor<double> L = sum(x * w * x);
    const auto g = grad(L, std::vector<Tensor<double>>{x, w});
    test::check_close(as_doubles(g[0]), {4, 8, 12}, 1e-6);
    test::check_close(as_doubles(g[1]), {1, 4, 9}, 1e-6);
    CHECK_FALSE(x.has_grad());
    CHECK_FALSE(w.has_grad());
  }
  SECTION("grad with retain_graph, then backward") {
    Tensor<double> L = sum(x * x);
    const auto g = grad(L, std::vector<Tensor<double>>{x}, std::nullopt, true);
    test::check_close(as_doubles(g[0]), {2, 4, 6}, 1e-6);
    L.backward();
    test::check_close(as_doubles(x.grad()), {2, 4, 6}, 1e-6);
  }
  SECTION("grad of a non-leaf input") {
    Tensor<double> y = x * 3;
    Tensor<double> L = sum(y * y);
    const auto g = grad(L, std::vector<Tensor<double>>{y});
    test::check_close(as_doubles(g[0]), {6, 12, 18}, 1e-6);
  }
}

TEST_CASE("errors, with PyTorch's messages", "[autograd]") {
  auto x = from_vector<float>({1, 2, 3}).requires_grad_();
  auto c = from_vector<float>({1, 2, 3});
  SECTION("backward of a tensor that does not require grad") {
    CHECK_THROWS_WITH(c.backward(), Catch::Contains("element 0 of tensors does not require grad and does not have a grad_fn"));
    CHECK_THROWS_WITH(grad(c, std::vector<Tensor<float>>{x}), Catch::Contains("does not require grad"));
  }
  SECTION("a non-scalar output needs a gradient, of its shape") {
    Tensor<float> y = x * 2;
    CHECK_THROWS_WITH(y.backward(), Catch::Contains("grad can be implicitly created only for scalar outputs"));
    CHECK_THROWS_WITH(y.backward(from_vector<float>({1, 2})), Catch::Contains("Mismatch in shape"));
  }
  SECTION("in-place writes into a leaf that requires grad") {
    const char* leaf = "a leaf Variable that requires grad is being used in an in-place operation.";
    CHECK_THROWS_WITH(x.fill_(0), Catch::Contains(leaf));
    CHECK_THROWS_WITH(x.assign(c * 2), Catch::Contains(leaf));
    CHECK_THROWS_WITH(x.copy_(c), Catch::Contains(leaf));
    CHECK_THROWS_WITH(x += 1, Catch::Contains(leaf));
    CHECK_THROWS_WITH(x.narrow(0, 0, 1).fill_(0),
                      Catch::Contains("a view of a leaf Variable that requires grad is being used in an in-place operation."));
    test::check_close(as_doubles(x.detach()), {1, 2, 3}, 1e-6);
  }
  SECTION("a tensor the graph needs, modified before backward") {
    Tensor<float> y = x * c;
    c.fill_(5);
    CHECK_THROWS_WITH(sum(y).backward(),
                      Catch::Contains("one of the variables needed for gradient computation has been modified by an inplace operation"));
  }
  SECTION("an amax result modified before backward") {
    Tensor<float> m = amax(x, {0}, true);
    Tensor<float> y = x - m;
    sum(y).backward();  // fine: nothing modified
    Tensor<float> m2 = amax(x * 1, {0}, true);
    {
      no_grad g;
      m2.fill_(0);
    }
    CHECK_THROWS_WITH(sum(m2).backward(), Catch::Contains("modified by an inplace operation"));
  }
  SECTION("writing a value that requires grad into an existing tensor") {
    auto out = zeros<float>({3});
    CHECK_THROWS_WITH(out.assign(x * 2), Catch::Contains("does not record in-place operations"));
    no_grad g;
    out.assign(x * 2);
    test::check_close(as_doubles(out), {2, 4, 6}, 1e-6);
  }
  SECTION("strata::grad of an input the output does not use") {
    auto u = from_vector<float>({1}).requires_grad_();
    Tensor<float> L = sum(x * 2);
    CHECK_THROWS_WITH(grad(L, std::vector<Tensor<float>>{u}), Catch::Contains("appears to not have been used in the graph"));
  }
}

TEST_CASE("backward allocates nothing but the gradients", "[autograd]") {
  const std::int64_t n = 1 << 12;
  auto mk = [&](double base) {
    auto t = empty<float>({n});
    for (std::int64_t i = 0; i < n; ++i) t.data_ptr()[i] = static_cast<float>(base + 0.001 * static_cast<double>(i));
    return t.requires_grad_();
  };
  auto a = mk(1), b = mk(2), c = mk(3), d = mk(4), e = mk(5);
  Tensor<float> L = sum(((a * b + c * d - e) * 0.5) * ((a * b + c * d - e) * 0.5));
  const allocation_counts before = thread_allocations();
  L.backward();
  const allocation_counts after = thread_allocations();
  // Five gradients of n floats, and the 0-dim seed.
  CHECK(after.blocks - before.blocks <= 6);
  CHECK(after.bytes - before.bytes <= 5 * n * sizeof(float) + 64);
  // d/da = 2 r * 0.5 * b with r = (ab + cd - e) / 2, and so on.
  for (std::int64_t i = 0; i < n; i += 997) {
    const double ai = a.detach().data_ptr()[i], bi = b.detach().data_ptr()[i], ci = c.detach().data_ptr()[i],
                 di = d.detach().data_ptr()[i], ei = e.detach().data_ptr()[i];
    const double r = (ai * bi + ci * di - ei) * 0.5;
    CHECK(a.grad().data_ptr()[i] == Approx(r * bi).epsilon(1e-5));
    CHECK(d.grad().data_ptr()[i] == Approx(r * ci).epsilon(1e-5));
    CHECK(e.grad().data_ptr()[i] == Approx(-r).epsilon(1e-5));
  }
}

TEST_CASE("a chain of 10^6 nodes: backward and destruction keep the stack flat", "[autograd][slow]") {
  auto x = from_vector<float>({1}).requires_grad_();
  {
    Tensor<float> y = x * 1;
    for (int i = 0; i < 1000000; ++i) y = y * 1;
    y.backward();
    CHECK(x.grad().item() == 1);
  }
  Tensor<float> y = x * 1;
  for (int i = 0; i < 1000000; ++i) y = y + 0;
  y = Tensor<float>();  // drops the whole chain
  CHECK(x.is_leaf());
}

TEST_CASE("a chain of 10^5 nodes is freed without recursion", "[autograd]") {
  auto x = from_vector<double>({2}).requires_grad_();
  Tensor<double> y = x * 1;
  for (int i = 0; i < 100000; ++i) y = y * 1;
  sum(y * y).backward();
  CHECK(x.grad().item() == 4);
}
