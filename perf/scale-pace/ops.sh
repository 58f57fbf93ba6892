#!/usr/bin/env bash
# ops.sh NAME COUNT: like prof.sh, then getData/setData/create+delete windows as scale.sh runs them.
set -u
NAME=$1; COUNT=$2; shift 2
ZOO=${ZOO:-/tmp/pace/zoo}
Z=/work/shared/bench/zkload/zkload
D=/tmp/pace/run-$NAME; rm -rf $D; mkdir -p $D/data
port=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
cat > $D/zoo.cfg <<CFG
tickTime=2000
dataDir=$D/data
clientPort=$port
clientPortAddress=127.0.0.1
admin.enableServer=false
4lw.commands.whitelist=*
CFG
GODEBUG=gctrace=1 $ZOO server -cpuprofile $D/cpu.prof $D/zoo.cfg 2>$D/server.log &
pid=$!
echo "pid $pid port $port"
for i in $(seq 100); do $Z ping -servers 127.0.0.1:$port >/dev/null 2>&1 && break; sleep 0.2; done
( while kill -0 $pid 2>/dev/null; do
    echo "T $(date +%s.%N) $(awk '{print $14, $15}' /proc/$pid/stat) $(awk '/write_bytes|^wchar/ {printf "%s ", $2}' /proc/$pid/io) $(cut -d' ' -f1 /proc/loadavg) $(awk '{r+=$1; w+=$2} END {print r, w}' /proc/$pid/task/*/schedstat)"
    $Z fourlw -servers 127.0.0.1:$port -cmd mntr 2>/dev/null | grep -E 'fsynctime|snapshottime|batch_size|zk_znode_count|snap_count' | tr '\n' ' '; echo
    sleep 2
  done ) > $D/samples.txt 2>&1 &
sp=$!
vmstat 2 > $D/vmstat.txt &
vp=$!
$Z fill -servers 127.0.0.1:$port -server-pids $pid -count $COUNT -size 100 -fanout 1000 -clients 8 -outstanding 128 > $D/fill.txt 2>&1
grep RESULT $D/fill.txt
echo "RSS after fill: $(awk '/VmRSS/ {print $2}' /proc/$pid/status) kB"
for op in set cd set cd; do
  $Z ops -servers 127.0.0.1:$port -server-pids $pid -tree-count $COUNT -op $op -clients 8 -outstanding 32 -duration 10s -warmup 3s 2>&1 | grep RESULT | tee -a $D/ops.txt | tr ' ' '\n' | grep -E '^(op|srv_us_per_op|ops_per_s|p50_ms|p99_ms|cpu_server|cpu_other)=' | tr '\n' ' '; echo
done
echo "RSS after ops: $(awk '/VmRSS/ {print $2}' /proc/$pid/status) kB"
kill $vp
kill -TERM $pid; wait $pid
kill $sp 2>/dev/null
ls -la $D/data/snap | tail -3; du -sh $D/data/*
