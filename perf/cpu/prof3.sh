#!/usr/bin/env bash
# prof3.sh BIN TAG READPCT: a 3-server zoo ensemble on free ports, CPU profiles of each over one zkload mix run
set -e
bin=$1; tag=$2; pct=$3
d=/tmp/cpu-bench/prof/$tag; rm -rf $d; mkdir -p $d
ports=($(python3 -c '
import socket
ss=[socket.socket() for _ in range(9)]
for s in ss: s.bind(("127.0.0.1",0))
print(" ".join(str(s.getsockname()[1]) for s in ss))'))
pids=()
trap 'kill ${pids[@]} 2>/dev/null; wait 2>/dev/null' EXIT
for i in 1 2 3; do
  mkdir -p $d/s$i/data; echo $i > $d/s$i/data/myid
  cat > $d/s$i/zoo.cfg <<CFG
tickTime=2000
initLimit=10
syncLimit=5
dataDir=$d/s$i/data
clientPort=${ports[$((i-1))]}
clientPortAddress=127.0.0.1
maxClientCnxns=0
admin.enableServer=false
server.1=127.0.0.1:${ports[3]}:${ports[6]}
server.2=127.0.0.1:${ports[4]}:${ports[7]}
server.3=127.0.0.1:${ports[5]}:${ports[8]}
CFG
  $bin server -cpuprofile $d/s$i/cpu.prof $d/s$i/zoo.cfg > $d/s$i/server.log 2>&1 &
  pids+=($!)
done
cs=127.0.0.1:${ports[0]},127.0.0.1:${ports[1]},127.0.0.1:${ports[2]}
for i in $(seq 100); do /work/shared/bench/zkload/zkload ping -write -servers $cs >/dev/null 2>&1 && break; sleep 0.3; done
/work/shared/bench/zkload/zkload mix -servers $cs -server-pids $(IFS=,; echo "${pids[*]}") -clients 30 -outstanding 100 \
  -read-ratio $pct -size 1024 -keys 1000 -duration ${DUR:-10s} -warmup 3s 2>&1 | grep -E 'RESULT' | tail -1
kill -INT ${pids[@]}; wait ${pids[@]} 2>/dev/null || true
trap - EXIT
for i in 1 2 3; do grep -m1 -i "leader\|became" $d/s$i/server.log | head -1; done
