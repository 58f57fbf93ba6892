#!/usr/bin/env bash
# logmem-ab.sh — memory of the raft log under sustained writes, Zoo builds
# side by side.
#
#   perf/scale/logmem-ab.sh DIR N SECS REPS BIN...
#
# For each rep, each BIN in turn on a fresh data directory: fill N znodes
# (zkload fill, 100 B, fanout 1000), then SECS seconds of setData over
# them (zkload ops -op set), sampling the server's RSS every second. It
# prints the RSS after the fill, the highest and the last RSS during the
# setData, and zkload's RESULT line for the setData (server CPU per op).
# Snapshots are paced by the tree's size, so the log since the last one
# grows to about half a snapshot's bytes: what memory held of it is what
# this shows. ZKLOAD names zkload (default: zkload on PATH).
set -euo pipefail
DIR=$1 N=$2 SECS=$3 REPS=$4
shift 4
Z=${ZKLOAD:-zkload}
freeport() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
rss() { awk '/VmRSS/ {print $2}' "/proc/$1/status"; }

for rep in $(seq 1 "$REPS"); do
  for bin in "$@"; do
    rm -rf "$DIR/run" && mkdir -p "$DIR/run/data"
    port=$(freeport)
    printf 'tickTime=2000\ndataDir=%s\nclientPort=%s\nadmin.enableServer=false\n' "$DIR/run/data" "$port" >"$DIR/run/zoo.cfg"
    log="$DIR/log-$rep-$(basename "$bin").txt"
    "$bin" server "$DIR/run/zoo.cfg" >"$log" 2>&1 &
    pid=$!
    "$Z" fill -servers "127.0.0.1:$port" -server-pids "$pid" -count "$N" -size 100 -fanout 1000 -clients 8 -outstanding 128 >/dev/null
    fill_kb=$(rss "$pid")
    peak=0
    (while sleep 1; do rss "$pid"; done) >"$DIR/rss.txt" 2>/dev/null &
    sampler=$!
    res=$("$Z" ops -servers "127.0.0.1:$port" -server-pids "$pid" -op set -tree-count "$N" -duration "${SECS}s" | grep RESULT)
    kill "$sampler"
    wait "$sampler" 2>/dev/null || true
    peak=$(sort -n "$DIR/rss.txt" | tail -1)
    last=$(rss "$pid")
    snaps=$(grep -c "snapshot taken" "$log" || true)
    echo "rep=$rep bin=$(basename "$bin") rss_after_fill_mb=$((fill_kb / 1024)) rss_peak_set_mb=$((peak / 1024)) rss_end_set_mb=$((last / 1024)) snapshots=$snaps"
    echo "    $res"
    kill -9 "$pid"
    wait "$pid" 2>/dev/null || true
  done
done
