#!/bin/bash
# ab-ensemble.sh READ_RATIO REPS BIN... : Table 1's load (zkload mix, 30
# sessions x 100 in flight, 1 KiB, 3 s warm-up, 10 s window) on each BIN in
# turn, each a fresh standalone server started by shared/bench's
# ensemble.sh as run-paper.sh starts it (setsid: the server is not in the
# load generator's scheduling group, so it gets a core of its own). Prints
# ops/s, the server's CPU (cores) and their ratio, the server CPU per op.
# BENCH names a writable copy of shared/bench (default /tmp/bench); ZKLOAD
# names zkload (default: $BENCH/zkload/zkload).
BENCH=${BENCH:-/tmp/bench}
Z=${ZKLOAD:-$BENCH/zkload/zkload}
RR=$1 REPS=$2; shift 2
cd "$BENCH" || exit 1
for rep in $(seq 1 "$REPS"); do for bin in "$@"; do
  ./ensemble.sh start -n 1 --server-cmd "$bin server" >/dev/null 2>&1
  pid=$(./ensemble.sh pids)
  r=$("$Z" mix -servers 127.0.0.1:23811 -server-pids "$pid" -clients 30 -outstanding 100 -size 1024 \
    -read-ratio "$RR" -warmup 3s -duration 10s | grep RESULT)
  ops=$(tr ' ' '\n' <<<"$r" | awk -F= '$1=="ops_per_s"{print $2}')
  cpu=$(tr ' ' '\n' <<<"$r" | awk -F= '$1=="cpu_server"{print $2}')
  echo "rep=$rep bin=$(basename "$bin") ops=$ops cpu=$cpu us_per_op=$(awk -v o="$ops" -v c="$cpu" 'BEGIN{printf "%.2f", c*1e6/o}')"
  ./ensemble.sh stop >/dev/null 2>&1
done; done
