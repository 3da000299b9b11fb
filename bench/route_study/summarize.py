#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Summarise results/run*.csv. Ratios B/A are computed within each run (A and B are interleaved
there) and the median over runs is reported; GB/s and ns/elem are medians over runs."""
import csv, glob, math, statistics, sys
files = sys.argv[1:] or sorted(glob.glob('results/run*.csv'))
runs = []
for f in files:
    d = {}
    for r in csv.DictReader(open(f)):
        d[(r['case'], int(r['n']), r['variant'], int(r['chunk']))] = (float(r['ns_per_elem']), float(r['GBps']))
    runs.append(d)
keys = runs[0].keys(); med = statistics.median
cases = sorted({k[0] for k in keys}); sizes = sorted({k[1] for k in keys})
variants = ['B-copy', 'B-plain', 'B-direct', 'B-super', 'B-super2']; chunks = [256, 512, 1024, 2048]
R = lambda c, n, v, ch: med([d[(c, n, v, ch)][0] / d[(c, n, 'A', 0)][0] for d in runs])
GB = lambda k: med([d[k][1] for d in runs])
print(f"# {len(files)} runs; B/A = time ratio (median over runs of the in-run ratio); (best chunk)")
print(f"{'case':4} {'n':>9} {'A ns/el':>8} {'A GB/s':>7} | " + ' '.join(f"{v:>11}" for v in variants) + f" | {'B-sup2 GB/s':>11}")
for c in cases:
    for n in sizes:
        cells = []
        for v in variants:
            ch = min(chunks, key=lambda ch: R(c, n, v, ch)); cells.append(f"{R(c, n, v, ch):5.2f}({ch:>4})")
            if v == 'B-super2': best = (c, n, v, ch)
        a = (c, n, 'A', 0)
        print(f"{c:4} {n:>9} {med([d[a][0] for d in runs]):8.4f} {GB(a):7.1f} | " + ' '.join(cells) + f" | {GB(best):11.1f}")
print("\n# chunk sweep, B/A: B-plain and B-super2 per chunk")
print(f"{'case':4} {'n':>9} | " + ' '.join(f"{'pl'+str(ch):>7}" for ch in chunks) + ' | ' + ' '.join(f"{'s2_'+str(ch):>7}" for ch in chunks))
for c in cases:
    for n in sizes:
        if n < 1000: continue
        print(f"{c:4} {n:>9} | " + ' '.join(f"{R(c,n,'B-plain',ch):7.2f}" for ch in chunks) + ' | ' + ' '.join(f"{R(c,n,'B-super2',ch):7.2f}" for ch in chunks))
print("\n# geomean B/A over W1-W4, n in {4096, 65536, 1<<20}, per fixed chunk")
for v in variants:
    row = [math.exp(statistics.fmean(math.log(R(c, n, v, ch)) for c in cases for n in sizes if 4096 <= n <= 1 << 20)) for ch in chunks]
    print(f"{v:9} " + '  '.join(f"{ch}:{x:5.2f}" for ch, x in zip(chunks, row)))
