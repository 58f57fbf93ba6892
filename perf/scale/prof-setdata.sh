#!/bin/bash
# usage: prof-setdata.sh LABEL COUNT: a standalone Zoo, COUNT znodes filled as
# scale.sh fills them, then `perf record` for 20 s of a 30 s setData window
# (perf/SCALE-quiet.md). BENCH is shared/bench's directory, ZOO_BIN the binary.
set -u
LABEL=$1 COUNT=$2
HERE=${BENCH:-../shared/bench}
export ZKPERF_DIR=/tmp/profx ZKPERF_PORT_OFFSET=580
CS=$($HERE/ensemble.sh start -n 1 --timeout 300 --cfg '4lw.commands.whitelist=*' --server-cmd "${ZOO_BIN:-/tmp/zoo} server" | tail -n1)
PID=$($HERE/ensemble.sh pids)
$HERE/zkload/zkload fill -servers "$CS" -server-pids "$PID" -count $COUNT -size 100 -fanout 1000 -clients 8 -outstanding 128 2>&1 | grep RESULT | cut -c1-120
$HERE/zkload/zkload ops -servers "$CS" -server-pids "$PID" -tree-count $COUNT -op set -clients 8 -outstanding 32 -duration 30s -warmup 3s > /tmp/profx-ops.out 2>&1 &
sleep 6
perf record -F 499 -g -p $PID -o perf-$LABEL.data -- sleep 20 2>&1 | tail -1
wait
grep RESULT /tmp/profx-ops.out | cut -c1-200
$HERE/ensemble.sh stop >/dev/null 2>&1
rm -rf /tmp/profx
