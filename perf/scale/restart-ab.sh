#!/usr/bin/env bash
# restart-ab.sh — restart to serving of Zoo builds on the same data.
#
#   perf/scale/restart-ab.sh DIR N REPS BIN...
#
# Makes DIR/src with the first BIN: N znodes (zkload fill, 100 B, fanout
# 1000), 20 s of setData, then kill -9, as scale.sh's restart point does.
# Then, REPS times, for each BIN in turn: copies DIR/src, starts the BIN on
# the copy and times the first getData from the start (zkload waitread),
# with the server's own log lines for the snapshot load and the replay.
# ZKLOAD names zkload (../shared/bench/zkload; default: zkload on PATH).
# REUSE=1 keeps an existing DIR/src instead of making it again.
set -euo pipefail
DIR=$1 N=$2 REPS=$3
shift 3
Z=${ZKLOAD:-zkload}
freeport() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
cfg() { printf 'tickTime=2000\ndataDir=%s\nclientPort=%s\nadmin.enableServer=false\n' "$1" "$2" >"$3"; }

if [[ -n ${REUSE:-} && -d $DIR/src ]]; then
  echo "reusing $DIR/src (REUSE set)"
else
  rm -rf "$DIR/src" && mkdir -p "$DIR/src/data"
  port=$(freeport)
  cfg "$DIR/src/data" "$port" "$DIR/src/zoo.cfg"
  "$1" server "$DIR/src/zoo.cfg" >"$DIR/prep-server.log" 2>&1 &
  pid=$!
  "$Z" fill -servers "127.0.0.1:$port" -server-pids "$pid" -count "$N" -size 100 -fanout 1000 -clients 8 -outstanding 128 | grep RESULT
  "$Z" ops -servers "127.0.0.1:$port" -server-pids "$pid" -op set -tree-count "$N" -duration 20s | grep RESULT
  kill -9 "$pid"
  wait "$pid" 2>/dev/null || true
fi

for rep in $(seq 1 "$REPS"); do
  for bin in "$@"; do
    rm -rf "$DIR/run" && cp -a "$DIR/src" "$DIR/run"
    port=$(freeport)
    cfg "$DIR/run/data" "$port" "$DIR/run/zoo.cfg"
    log="$DIR/log-$rep-$(basename "$bin").txt"
    t0=$(date +%s%N)
    "$bin" server "$DIR/run/zoo.cfg" >"$log" 2>&1 &
    pid=$!
    res=$("$Z" waitread -servers "127.0.0.1:$port" -path /zkperf/fill/d00000/n00000000 -since "$t0" -timeout 900s | grep RESULT)
    sleep 1
    rss=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status")
    echo "rep=$rep bin=$bin $(tr ' ' '\n' <<<"$res" | grep -E '^(elapsed_s|valid)=' | tr '\n' ' ')rss_kb=$rss"
    grep -E "loaded snapshot|replayed the log" "$log" | sed 's/^/    /'
    kill -9 "$pid"
    wait "$pid" 2>/dev/null || true
  done
done
