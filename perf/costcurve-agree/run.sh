#!/usr/bin/env bash
# Paired runs of shared/bench's scale.sh (candidate only) and zoo bench curve
# on the same Zoo binary, the same zoo.cfg (shared/bench's ensemble.sh writes
# both) and the same ladder, alternating which goes first:
# scale, curve, curve, scale. Results in $O; summary.py compares them.
#
#   perf/costcurve-agree/run.sh ZOO_BINARY [STEPS]
#
# It runs a copy of shared/bench in $B, so that its zkload build and
# results/ stay out of shared/, with two edits that change no measurement:
# its data directory and the candidate's port offset (23851), so it does not
# collide with someone else's scale.sh on the same machine.
set -uo pipefail
ZOO=$1
STEPS=${2:-10000,100000}
HERE=$(cd "$(dirname "$0")" && pwd)
B=/tmp/benchcc-bench
O=/tmp/benchcc-agree
SHARED_BENCH=${SHARED_BENCH:-$HERE/../../../shared/bench} # a checkout beside shared/
rm -rf "$B" && cp -r "$SHARED_BENCH" "$B" && rm -rf "$B/results"
sed -i 's#^BASE=/tmp/zkperf-scale#BASE=/tmp/benchcc-scale#
        s#echo 0 || echo 20; }#echo 0 || echo 40; }#' "$B/scale.sh"
mkdir -p "$O"
scale() {
  "$B/scale.sh" --only-target cand --axis znodes --znodes "$STEPS" --reps 2 \
    --cand-cmd "$ZOO server" --cand-name zoo --out "$O/scale-$1.md" >"$O/scale-$1.stdout" 2>&1
}
curve() {
  local d=/tmp/benchcc-curve cs pid
  cs=$(ZKPERF_DIR=$d ZKPERF_PORT_OFFSET=40 "$B/ensemble.sh" start -n 1 --timeout 900 \
       --cfg '4lw.commands.whitelist=*' --server-cmd "$ZOO server" 2>>"$O/curve-$1.err" | tail -n1)
  pid=$(ZKPERF_DIR=$d ZKPERF_PORT_OFFSET=40 "$B/ensemble.sh" pids)
  "$ZOO" bench curve -servers "$cs" -server-pids "$pid" -axis znodes -steps "$STEPS" -reps 2 \
    -raw "$O/curve-$1.raw" -json "$O/curve-$1.json" >"$O/curve-$1.out" 2>>"$O/curve-$1.err"
  echo "curve $1 rc=$?" >&2
  ZKPERF_DIR=$d ZKPERF_PORT_OFFSET=40 "$B/ensemble.sh" stop >>"$O/curve-$1.err" 2>&1
  rm -rf "$d"
}
scale 1; curve 1; curve 2; scale 2
python3 "$HERE/summary.py" "$O"/scale-[12].raw -- "$O"/curve-[12].raw
