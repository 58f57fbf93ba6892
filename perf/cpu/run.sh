#!/usr/bin/env bash
# run.sh NS TAG BIN...  : Table 1 at 100/50/0% reads, Apache paired with each Zoo binary
set -e
ns=$1; tag=$2; shift 2
targets=(--target apache)
for b in "$@"; do targets+=(--target "$(basename $b)=cmd:$b server"); done
cd /work/shared/bench
exec ./run-paper.sh "${targets[@]}" --ns "$ns" --reps 3 --read-pcts "100 50 0" \
  --duration 8 --warmup 3 --skip fsync,table2,table3,memory \
  --out /work/wt/cpu/perf/cpu/$tag.md
