#!/bin/bash
# fill-rss-ab.sh REPS BIN... : run-paper's memory fill (1M x 100 B, 4 x 250) on each BIN, RSS 2 s after
cd "${BENCH:-/tmp/bench}" || exit 1
REPS=$1; shift
for rep in $(seq 1 $REPS); do for bin in "$@"; do
  ./ensemble.sh start -n 1 --server-cmd "$bin server" >/dev/null 2>&1
  pid=$(./ensemble.sh pids); sleep 2
  r=$("${ZKLOAD:-/tmp/zkload}" fill -servers 127.0.0.1:23811 -server-pids "$pid" -count 1000000 -size 100 -clients 4 -outstanding 250 | grep RESULT)
  sleep 2
  rss=$(awk '/^VmRSS/ {print $2}' /proc/$pid/status); hwm=$(awk '/^VmHWM/ {print $2}' /proc/$pid/status)
  sleep 8; rss10=$(awk '/^VmRSS/ {print $2}' /proc/$pid/status)
  echo "rep=$rep bin=$(basename $bin) rss2s_mib=$((rss/1024)) rss10s_mib=$((rss10/1024)) hwm_mib=$((hwm/1024)) $(tr ' ' '\n' <<<"$r" | grep -E '^(ops_per_s|creates_per_s|rate|cpu_server)=' | tr '\n' ' ')"
  ./ensemble.sh stop >/dev/null 2>&1
done; done
