#!/bin/bash
# Zoo alone at 10M znodes: fill (scale.sh's fill shape), then set and cd
# windows as scale.sh runs them, RSS and gctrace. Apache is not run: at 10M
# it needs more than -Xmx8g.
set -u
HERE=/tmp/treegc/bench
export ZKPERF_DIR=/tmp/treegc-10m ZKPERF_PORT_OFFSET=540
export ZOO_BIN=/tmp/treegc/zoo GCLOG=/tmp/treegc/gctrace-10m.log
Z=$HERE/zkload/zkload
CS=$($HERE/ensemble.sh start -n 1 --timeout 900 --cfg '4lw.commands.whitelist=*' --server-cmd "$HERE/zoo-gctrace.sh" | tail -n1)
PID=$($HERE/ensemble.sh pids)
echo "started $CS pid $PID $(date -u +%T)"
$Z fill -servers "$CS" -server-pids "$PID" -count 10000000 -size 100 -fanout 1000 -clients 8 -outstanding 128
echo "filled $(date -u +%T) rss_kb=$(awk '/VmRSS/ {print $2}' /proc/$PID/status)"
for op in get set cd; do
  $Z ops -servers "$CS" -server-pids "$PID" -tree-count 10000000 -op $op -clients 8 -outstanding 32 -duration 10s -warmup 3s
done
echo "done $(date -u +%T) rss_kb=$(awk '/VmRSS/ {print $2}' /proc/$PID/status)"
$HERE/ensemble.sh stop
rm -rf /tmp/treegc-10m
