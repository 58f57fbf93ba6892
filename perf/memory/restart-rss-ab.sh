#!/bin/bash
# restart-rss-ab.sh DATA REPS BIN... : restarts each BIN in turn on a copy
# of DATA (a standalone server's data directory, e.g. one run-paper.sh's
# fill left in /tmp/zkperf/s1/data) as run-paper.sh's memory part does,
# and prints the restart's seconds (stop of nothing + start until a write
# succeeds), RSS 2 s and 10 s after it, and the peak RSS (VmHWM). A BIN
# of "apache" starts Apache ZooKeeper 3.8 instead (ensemble.sh's default),
# on DATA.apache, a data directory Apache wrote. BENCH names a writable copy of
# shared/bench (default /tmp/bench).
BENCH=${BENCH:-/tmp/bench}
DATA=$1 REPS=$2; shift 2
cd "$BENCH" || exit 1
kib() { awk -v k="$1" '$1==k":" {print int($2/1024)}' "/proc/$2/status"; }
start() { # BIN [ensemble.sh start flags]
  local bin=$1; shift
  if [[ $bin == apache ]]; then ./ensemble.sh start -n 1 "$@"; else ./ensemble.sh start -n 1 "$@" --server-cmd "$bin server"; fi
}
for rep in $(seq 1 "$REPS"); do for bin in "$@"; do
  start "$bin" >/dev/null 2>&1
  ./ensemble.sh stop >/dev/null 2>&1
  src=$DATA
  [[ $bin == apache ]] && src=$DATA.apache
  rm -rf /tmp/zkperf/s1/data && cp -a "$src" /tmp/zkperf/s1/data
  t0=$(date +%s.%N)
  start "$bin" --keep-data --timeout 600 >/dev/null 2>&1
  t1=$(date +%s.%N)
  pid=$(./ensemble.sh pids)
  sleep 2; rss2=$(kib VmRSS "$pid"); hwm=$(kib VmHWM "$pid")
  sleep 8; rss10=$(kib VmRSS "$pid")
  echo "rep=$rep bin=$(basename "$bin") start_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.2f", b-a}')" \
    "rss2s_MiB=$rss2 rss10s_MiB=$rss10 hwm_MiB=$hwm"
  ./ensemble.sh stop >/dev/null 2>&1
done; done
