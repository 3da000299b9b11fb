#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# README command (2): install what is missing, then build and run every test in release and
# under AddressSanitizer + UndefinedBehaviorSanitizer, and the thread tests under
# ThreadSanitizer. CI (.ci/run) runs exactly this.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cmake=$("$root/tools/setup.sh" | tail -n1)
ctest="$(dirname "$cmake")/ctest"
cd "$root"
for preset in release asan tsan; do
  echo "== $preset: configure, build, test"
  "$cmake" --preset "$preset" >/dev/null
  # The tests and the samples they run (bench/ builds with `cmake --build --preset release`);
  # the tsan build preset names its own target, the thread tests.
  targets=()
  [[ $preset == tsan ]] || targets=(--target tests/all samples/all)
  "$cmake" --build --preset "$preset" "${targets[@]}"
  "$ctest" --preset "$preset"
done
