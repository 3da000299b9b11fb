// SPDX-License-Identifier: MIT
// The Mandelbrot set by broadcasting: a [H, 1] column of imaginary parts meets a [1, W] row
// of real parts; `where` freezes escaped points. Writes mandelbrot.pgm (a greyscale image).
#include <complex>
#include <cstdint>
#include <fstream>
#include <iostream>
import strata;
using namespace strata;
using c64 = std::complex<float>;

int main() {
  const std::int64_t H = 480, W = 720, iterations = 64;
  auto re = arange<float>(W).view({1, W}) * (3.0f / W) - 2.25f;  // [1, W], lazy
  auto im = arange<float>(H).view({H, 1}) * (2.4f / H) - 1.2f;   // [H, 1], lazy
  Tensor<c64> c = cast<c64>(re) + cast<c64>(im) * c64(0, 1);        // [H, W] by broadcasting
  auto z = zeros<c64>({H, W});
  auto count = zeros<std::int32_t>({H, W});
  for (std::int64_t k = 0; k < iterations; ++k) {
    z.assign(where(abs(z) <= 2.0f, z * z + c, z));
    count += cast<std::int32_t>(abs(z) <= 2.0f);
  }
  Tensor<std::uint8_t> pixels = cast<std::uint8_t>(255 - count * 255 / iterations);
  std::ofstream out("mandelbrot.pgm", std::ios::binary);
  out << "P5\n" << W << " " << H << "\n255\n";
  out.write(reinterpret_cast<const char*>(pixels.data_ptr()), H * W);
  std::int64_t inside = 0;
  for (const std::int32_t k : count.to_vector()) inside += k == iterations;
  std::cout << "wrote mandelbrot.pgm (" << W << "x" << H << "); " << inside << " points stay bounded after "
            << iterations << " iterations\n";
  std::cout << "a row through the middle (every 60th pixel):\n"
            << count.select(0, H / 2).slice(0, 0, W, 60) << "\n";
  return 0;
}
