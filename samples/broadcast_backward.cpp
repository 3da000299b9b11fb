// SPDX-License-Identifier: MIT
// The backward pass of a broadcasting layer written with sum_to, as autograd does it:
//   y = x * w + b   with x [batch, features], w [features], b [1];  loss = sum(y^2) / 2.
// The gradients of the broadcast inputs are sum_to(grad * ..., input sizes): one fused pass
// each. Checked against central finite differences computed in quad precision (float128).
#include <cmath>
#include <cstdint>
#include <iostream>
import strata;
using namespace strata;

int main() {
  // The seed: C = A + B broadcasts B [1] over A [3]; d sum(C) / dB sums the gradient down.
  auto A = from_vector<double>({1, 2, 3});
  auto B = from_vector<double>({1});
  auto C = A + B;
  auto dC = ones<double>(C.sizes());
  std::cout << "A = " << A << ", B = " << B << ", C = A + B = " << eval(C) << "\n"
            << "grad of sum(C) w.r.t. B: sum_to(dC, B.sizes()) = " << eval(sum_to(dC, B.sizes())) << "\n"
            << "grad of sum(C) w.r.t. A: sum_to(dC, A.sizes()) = " << eval(sum_to(dC, A.sizes())) << "\n\n";

  const std::int64_t batch = 64, features = 5;
  auto x = eval(sin(arange<double>(batch * features).view({batch, features}) * 0.37));
  auto w = eval(cos(arange<double>(features) * 1.3));
  auto b = from_vector<double>({0.25});

  // forward and backward, in double
  Tensor<double> y = x * w + b;
  const Tensor<double>& dy = y;  // d(sum(y^2)/2)/dy = y
  Tensor<double> dw = sum_to(dy * x, w.sizes());  // w was broadcast over the batch
  Tensor<double> db = sum_to(dy, b.sizes());      // b was broadcast over everything
  Tensor<double> dx = dy * w;                     // x was not broadcast

  // The loss in quad precision with one parameter nudged.
  auto loss = [&](const Tensor<double>& wv, const Tensor<double>& bv) {
    auto yq = cast<float128>(x) * cast<float128>(wv) + cast<float128>(bv);
    return eval(sum(yq * yq) * float128(0.5)).item();
  };
  const float128 h("1e-7");
  double worst = 0;
  std::cout.precision(12);
  std::cout << "parameter   analytic (sum_to)      finite difference (quad)\n";
  for (std::int64_t k = 0; k <= features; ++k) {
    const bool is_b = k == features;
    auto plus_w = w.clone(), minus_w = w.clone(), plus_b = b.clone(), minus_b = b.clone();
    const double step = static_cast<double>(h);
    if (is_b) {
      plus_b.at({0}) += step;
      minus_b.at({0}) -= step;
    } else {
      plus_w.at({k}) += step;
      minus_w.at({k}) -= step;
    }
    // The nudged values are doubles: measure the steps actually taken (they differ by rounding).
    const float128 span = is_b ? float128(plus_b.at({0})) - float128(minus_b.at({0}))
                               : float128(plus_w.at({k})) - float128(minus_w.at({k}));
    const float128 fd = (loss(plus_w, plus_b) - loss(minus_w, minus_b)) / span;
    const double analytic = is_b ? db.at({0}) : dw.at({k});
    worst = std::max(worst, std::abs(analytic - static_cast<double>(fd)) / (1 + std::abs(analytic)));
    std::cout << (is_b ? "b        " : "w[" + std::to_string(k) + "]     ") << "   " << analytic << "\t\t"
              << static_cast<double>(fd) << "\n";
  }
  std::cout << "\ndx[0] = " << dx[0] << "\nworst relative difference: " << worst
            << (worst < 1e-9 ? "  (ok)" : "  (MISMATCH)") << "\n";
  return worst < 1e-9 ? 0 : 1;
}
