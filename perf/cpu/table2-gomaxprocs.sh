#!/bin/bash
# t2g.sh BIN: Table 2 (1 worker, 3 servers) with GOMAXPROCS from the environment
cd /tmp/bench || exit 1
cs=$(./ensemble.sh start -n 3 --server-cmd "$1 server" 2>/dev/null | tail -1)
pids=$(./ensemble.sh pids)
./zkload/zkload create-delete -servers "$cs" -workers 1 -count 500 >/dev/null 2>&1
./zkload/zkload create-delete -servers "$cs" -server-pids "$pids" -workers 1 -count 3000 | grep RESULT | tr ' ' '\n' | grep -E "creates_per_s|mean_ms|p50_ms|p99_ms|cpu_server=" | tr '\n' ' '; echo
./ensemble.sh stop >/dev/null 2>&1
