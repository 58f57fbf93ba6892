#!/usr/bin/env python3
"""Summarises the files perf/bench-agree.sh wrote: per workload and tool,
the median and range of throughput, mean latency and server CPU per op,
and the ratio of zoo bench's median to zkload's.
    perf/bench-agree-summary.py OUTDIR"""
import glob, json, os, re, statistics, sys

out = sys.argv[1]
rows = {}
reps = {}  # (name, rep) -> {tool: throughput}: the runs made back to back
for f in sorted(glob.glob(os.path.join(out, "*.txt"))):
    name, tool, rep, _ = os.path.basename(f).split(".")
    text = open(f).read()
    if tool == "zoo":
        j = json.load(open(f[:-4] + ".json"))["results"][0]
        tput, mean, valid = j["ops_per_s"], j["latency"]["mean_ms"], j["valid"]
        c = j.get("cpu") or {}
        cpu = c.get("server_cpu_per_op_us")
        ccpu = c.get("client_cores", 0) / tput * 1e6
    else:
        kv = dict(x.split("=", 1) for x in re.search(r"^RESULT (.*)$", text, re.M).group(1).split())
        tput = float(kv.get("ops_per_s") or kv["creates_per_s"])
        mean, valid = float(kv["mean_ms"]), kv["valid"] == "true"
        cpu = float(kv["cpu_server"]) / tput * 1e6
        ccpu = float(kv["cpu_client"]) / tput * 1e6
    rows.setdefault(name, {}).setdefault(tool, []).append((tput, mean, cpu, valid, ccpu))
    reps.setdefault((name, rep), {})[tool] = tput

def fmt(vals, f="%.0f"):
    return (f + " (" + f + "–" + f + ")") % (statistics.median(vals), min(vals), max(vals))

print("| workload | tool | runs | throughput/s median (range) | mean latency ms | server CPU µs/op | client CPU µs/op | zoo/zkload throughput: of medians; paired, median (range) |")
print("|---|---|---|---|---|---|---|---|")
for name in sorted(rows):
    med = {t: statistics.median(v[0] for v in rows[name][t]) for t in rows[name]}
    for tool in ("zoo", "zkload"):
        v = rows[name].get(tool, [])
        if not v:
            continue
        ratio = ""
        if tool == "zoo" and "zkload" in med:
            paired = [r["zoo"] / r["zkload"] for (n, _), r in reps.items() if n == name and len(r) == 2]
            ratio = "%.2f; %s" % (med["zoo"] / med["zkload"], fmt(paired, "%.2f"))
        valid = "" if all(x[3] for x in v) else " (INVALID runs)"
        print("| %s | %s | %d%s | %s | %s | %s | %s | %s |" % (name, "zoo bench" if tool == "zoo" else "zkload", len(v), valid,
              fmt([x[0] for x in v]), fmt([x[1] for x in v], "%.2f"), fmt([x[2] for x in v], "%.1f"),
              fmt([x[4] for x in v], "%.1f"), ratio))
