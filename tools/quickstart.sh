#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# README command (1): install what is missing, build strata (release), run the main samples.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cmake=$("$root/tools/setup.sh" | tail -n1)
cd "$root"
"$cmake" --preset release >/dev/null
"$cmake" --build --preset release --target broadcasting_tour views_tour heat_diffusion mandelbrot broadcast_backward curve_fit digits_mlp digits_cnn kmeans
./build/release/samples/broadcasting_tour
./build/release/samples/views_tour
./build/release/samples/heat_diffusion
(cd build/release && ./samples/mandelbrot)
./build/release/samples/broadcast_backward
./build/release/samples/curve_fit
./build/release/samples/digits_mlp
(cd build/release && ./samples/digits_cnn)
(cd build/release && ./samples/kmeans)
