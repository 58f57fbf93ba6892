#!/usr/bin/env python3
"""Compares zoo bench curve with scale.sh on the same ladder.

    summary.py SCALE.raw... -- CURVE.raw...

Reads the RESULT lines of both (the same format), takes the median over
every valid repetition of every run of each tool at each (point, op), and
prints server CPU per op, p50 and p99 for both and their ratio
curve / scale.sh.
"""
import statistics
import sys


def read(paths):
    rows = {}
    for p in paths:
        for line in open(p):
            f = line.split()
            if not f or f[0] != "RESULT":
                continue
            kv = dict(x.split("=", 1) for x in f[1:] if "=" in x)
            if kv.get("mode") != "ops" or kv.get("valid") == "false":
                continue
            key = (int(kv["point"]), kv["op"])
            rows.setdefault(key, []).append(kv)
    return rows


def med(rows, field):
    v = [float(r[field]) for r in rows if field in r]
    return (statistics.median(v), min(v), max(v), len(v)) if v else None


def main():
    i = sys.argv.index("--")
    scale, curve = read(sys.argv[1:i]), read(sys.argv[i + 1:])
    names = {"get": "getData", "set": "setData", "cd": "create+delete"}
    print("| znodes | op | measure | scale.sh median [range, n] | zoo bench curve median [range, n] | curve / scale.sh |")
    print("|---|---|---|---|---|---|")
    for key in sorted(set(scale) & set(curve)):
        for field, label in (("srv_us_per_op", "server µs/op"), ("p50_ms", "p50 ms"), ("p99_ms", "p99 ms")):
            a, b = med(scale[key], field), med(curve[key], field)
            if not a or not b:
                continue
            fmt = lambda m: f"{m[0]:.1f} [{m[1]:.1f}–{m[2]:.1f}, {m[3]}]"
            print(f"| {key[0]:,} | {names.get(key[1], key[1])} | {label} | {fmt(a)} | {fmt(b)} | {b[0] / a[0]:.2f} |")


main()
