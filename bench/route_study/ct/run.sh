#!/bin/sh
# SPDX-License-Identifier: MIT
# Compile time (user seconds) of each generated TU with clang -O2: median of R rounds, the
# 8 TUs interleaved within a round (the machine is shared). Also -fsyntax-only (front end only).
cd "$(dirname "$0")" && python3 gen.py
R=${R:-11}; MODE=${MODE:--O2 -c}; tmp=/tmp/ct_$$; mkdir -p $tmp
for i in $(seq $R); do for route in a b; do for K in 0 1 10 40; do
  /usr/bin/time -f "%U" -o $tmp/t clang++-19 $MODE -march=native -std=c++20 ${route}_$K.cpp -o $tmp/o.o
  echo "$route $K $(cat $tmp/t)" >> $tmp/all
done; done; done
for route in a b; do for K in 0 1 10 40; do
  ts=$(awk -v r=$route -v k=$K '$1==r && $2==k {print $3}' $tmp/all | sort -n | tr '\n' ' ')
  med=$(echo $ts | awk '{print $(int((NF+1)/2))}')
  echo "route=$route K=$K mode='$MODE' median_user_s=$med all=[$ts]"
done; done
rm -rf $tmp
