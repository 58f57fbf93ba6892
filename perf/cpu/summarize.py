#!/usr/bin/env python3
"""summarize.py RAW... : server CPU per op (µs) from run-paper .raw files,
medians over repetitions [min-max], and per-repetition paired ratios to
Apache (and of each later target to the first Zoo target) as median [min-max]."""
import sys, statistics, collections

runs = collections.defaultdict(dict)  # (n, pct) -> {(target, rep): us}
for path in sys.argv[1:]:
    for line in open(path):
        if not line.startswith('RESULT') or 'valid=true' not in line:
            continue
        kv = dict(f.split('=', 1) for f in line.split()[1:] if '=' in f)
        if kv.get('mode') != 'mix':
            continue
        us = float(kv['cpu_server']) / float(kv['ops_per_s']) * 1e6
        runs[(int(kv['n']), round(float(kv['read_ratio']) * 100))][(kv['target'], kv['rep'])] = us

def rng(v):
    return f"{statistics.median(v):.2f} [{min(v):.2f}–{max(v):.2f}]"

for (n, pct) in sorted(runs, key=lambda k: (k[0], -k[1])):
    r = runs[(n, pct)]
    targets = sorted({t for t, _ in r}, key=lambda t: (t != 'apache', t))
    reps = sorted({rep for _, rep in r})
    cells = []
    for t in targets:
        v = [r[(t, p)] for p in reps if (t, p) in r]
        cells.append(f"{t} {statistics.median(v):.1f} µs")
    ratios = []
    zoo = [t for t in targets if t != 'apache']
    for t in zoo:
        v = [r[(t, p)] / r[('apache', p)] for p in reps if (t, p) in r and ('apache', p) in r]
        if v:
            ratios.append(f"{t}/apache {rng(v)}")
    for t in zoo[1:]:
        v = [r[(t, p)] / r[(zoo[0], p)] for p in reps if (t, p) in r and (zoo[0], p) in r]
        if v:
            ratios.append(f"{t}/{zoo[0]} {rng(v)}")
    print(f"| {n} | {pct}% | " + "; ".join(cells) + " | " + "; ".join(ratios) + " |")
