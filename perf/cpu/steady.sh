#!/usr/bin/env bash
# steady.sh TARGET TAG READPCT: one standalone server (TARGET = zoo binary or "apache") on a free
# port; a WARM-long write warm-up, then one measured zkload mix window. Prints zkload's RESULT line.
set -e
bin=$1; tag=$2; pct=$3
d=/tmp/cpu-bench/steady/$tag; rm -rf $d; mkdir -p $d/data
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
if [ "$bin" = apache ]; then
  java -Dzookeeper.admin.enableServer=false -cp /usr/share/java/zookeeper.jar:/usr/share/java/zookeeper-jute.jar:/usr/share/java/slf4j-simple.jar \
    org.apache.zookeeper.server.quorum.QuorumPeerMain $d/zoo.cfg > $d/server.log 2>&1 &
else
  $bin server $d/zoo.cfg > $d/server.log 2>&1 &
fi
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null' EXIT
for i in $(seq 100); do /work/shared/bench/zkload/zkload ping -write -servers 127.0.0.1:$port >/dev/null 2>&1 && break; sleep 0.3; done
Z=/work/shared/bench/zkload/zkload
$Z mix -servers 127.0.0.1:$port -clients 30 -outstanding 100 -read-ratio 0 -size 1024 -keys 1000 -duration ${WARM:-30s} -warmup 1s >/dev/null 2>&1
[ -n "$PERFREC" ] && (sleep 4; perf record -q -F 499 -g -o $d/perf.data -p $pid -- sleep 6 >/dev/null 2>&1; perf stat -e page-faults -p $pid -- sleep 1 2>&1 | grep faults) &
$Z mix -servers 127.0.0.1:$port -server-pids $pid -clients 30 -outstanding 100 -read-ratio $pct -size 1024 -keys 1000 \
  -duration ${DUR:-10s} -warmup 3s 2>&1 | grep RESULT | sed "s/^/$tag /"
kill $pid; wait $pid 2>/dev/null || true
trap - EXIT
