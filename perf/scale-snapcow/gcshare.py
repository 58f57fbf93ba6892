#!/usr/bin/env python3
"""The collector's figures at each scale.sh result, from a time-stamped gctrace.

usage: gcshare.py RUN.out GCTRACE.log [candidate-name]

RUN.out is scale.sh's console output ("[HH:MM:SS]   [target=NAME axis=znodes
point=N rep=R] mode=... "), GCTRACE.log the server's stderr with each line
prefixed "HH:MM:SS " (zoo-gctrace.sh). For each of the candidate's result
lines it prints the last gc line before it: the runtime's own cumulative
share of the process's available CPU spent in GC since the server started
(gctrace's "P%"), the live heap after that cycle, and the wall time of its
concurrent mark. The per-cycle "ms cpu" figures are not used: on a shared,
saturated machine they count time the mark worker was descheduled.
"""
import re, sys

run, trace = sys.argv[1], sys.argv[2]
name = sys.argv[3] if len(sys.argv) > 3 else "zoo"
gcs = []
for line in open(trace):
    m = re.match(r"(\d\d:\d\d:\d\d) gc (\d+) @\S+ (\d+)%: [\d.]+\+([\d.]+)\+[\d.]+ ms clock, .* (\d+)->(\d+)->(\d+) MB", line)
    if m:
        gcs.append((m.group(1), int(m.group(2)), int(m.group(3)), float(m.group(4)), int(m.group(7))))
print("| znodes | result | last gc before it | GC share of CPU since start | live heap, MB | mark wall time, s |")
print("|---|---|---|---|---|---|")
for line in open(run):
    m = re.match(r"\[(\d\d:\d\d:\d\d)\]\s+\[target=(\S+) axis=znodes point=(\d+) rep=\d+\] (mode=\S+(?: op=\S+)?)", line)
    if not m or m.group(2) != name:
        continue
    before = [g for g in gcs if g[0] <= m.group(1)]
    if not before:
        continue
    g = before[-1]
    print(f"| {int(m.group(3)):,} | {m.group(4)} | #{g[1]} at {g[0]} | {g[2]}% | {g[4]} | {g[3] / 1000:.1f} |")
