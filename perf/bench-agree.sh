#!/bin/sh
# Runs `zoo bench` and shared/bench's zkload with the same parameters
# against the same server, alternating which goes first, REPS times, and
# prints each run's figures (perf/BENCH.md has the method and results).
#   [WORKLOADS="mix100 mix0 cd1 cd10"] perf/bench-agree.sh ADDR SERVER_PID ZOO_BIN ZKLOAD_BIN [REPS] [OUTDIR]
set -eu
addr=$1 pid=$2 zoo=$3 zkload=$4 reps=${5:-3} out=${6:-/tmp/zoo-bench-agree/out}
mkdir -p "$out"
common="-servers $addr -server-pids $pid"
run() { # name tool args...
	name=$1 tool=$2; shift 2
	f="$out/$name.$tool.$i.txt"
	if [ "$tool" = zoo ]; then
		"$zoo" bench "$@" $common -quiet -json "$out/$name.$tool.$i.json" > "$f" 2>&1 || true
	else
		"$zkload" "$@" $common > "$f" 2>&1 || true
	fi
	printf '%s %s %s: %s | %s | %s\n' "$name" "$tool" "$i" \
		"$(grep -m1 -o 'throughput: [0-9]* [a-z/]*' "$f")" \
		"$(grep -m1 -o 'mean=[0-9.]*' "$f")" \
		"$(grep -m1 -oE 'errors: 0 \(valid\)|ERRORS: [0-9]+' "$f")"
}
mix100="mix -clients 10 -outstanding 50 -read-ratio 1.0 -size 1024 -keys 1000 -duration 10s -warmup 3s"
mix0="mix -clients 10 -outstanding 50 -read-ratio 0 -size 1024 -keys 1000 -duration 10s -warmup 3s"
cd1="create-delete -workers 1 -count 2000 -size 1024"
cd10="create-delete -workers 10 -count 1000 -size 1024"
i=1
while [ "$i" -le "$reps" ]; do
	for w in ${WORKLOADS:-mix100 mix0 cd1 cd10}; do
		eval "args=\$$w"
		if [ $((i % 2)) -eq 1 ]; then
			run "$w" zoo $args; run "$w" zkload $args
		else
			run "$w" zkload $args; run "$w" zoo $args
		fi
	done
	i=$((i + 1))
done
