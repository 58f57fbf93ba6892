#!/usr/bin/env bash
# prof.sh BIN TAG READPCT: one standalone zoo on a free port, CPU profile over one zkload mix run
set -e
bin=$1; tag=$2; pct=$3
d=/tmp/cpu-bench/prof/$tag; rm -rf $d; mkdir -p $d/data
port=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
cat > $d/zoo.cfg <<CFG
tickTime=2000
initLimit=10
syncLimit=5
dataDir=$d/data
clientPort=$port
clientPortAddress=127.0.0.1
maxClientCnxns=0
admin.enableServer=false
4lw.commands.whitelist=srvr,ruok,mntr,stat,conf
CFG
$bin server -cpuprofile $d/cpu.prof $d/zoo.cfg > $d/server.log 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null' EXIT
for i in $(seq 50); do /work/shared/bench/zkload/zkload ping -servers 127.0.0.1:$port >/dev/null 2>&1 && break; sleep 0.2; done
(sleep ${PSTART:-4}; /tmp/cpu-bench/sysc.sh $pid 5; [ -n "$PERF" ] && perf stat -e page-faults,context-switches,task-clock -p $pid -- sleep 3 2>&1 | grep -E "faults|switch|clock"; [ -n "$PREC" ] && perf record -q -e page-faults -g -o $d/pf.data -p $pid -- sleep 3 >/dev/null 2>&1) & spid=$!
/work/shared/bench/zkload/zkload mix -servers 127.0.0.1:$port -server-pids $pid -clients 30 -outstanding 100 \
  -read-ratio $pct -size 1024 -keys 1000 -duration ${DUR:-10s} -warmup 3s 2>&1 | grep -E 'RESULT|srv|ops' | tail -3
wait $spid || true; kill -INT $pid; wait $pid 2>/dev/null || true
trap - EXIT
