#!/bin/bash
# ab-mix.sh READ_RATIO REPS BIN... : zkload mix (30 sessions x 100 in
# flight, 1 KiB, 3 s warm-up, 15 s window) on each BIN in turn, a fresh
# standalone server each time; prints ops/s and the server's CPU (cores),
# whose ratio is the server CPU per op. ZKLOAD names zkload (default:
# zkload on PATH).
Z=${ZKLOAD:-zkload}
RR=$1 REPS=$2; shift 2
for rep in $(seq 1 $REPS); do for bin in "$@"; do
  d=/tmp/abmix; rm -rf $d; mkdir -p $d/data
  port=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
  printf 'tickTime=2000\ndataDir=%s/data\nclientPort=%s\nadmin.enableServer=false\n' $d $port > $d/zoo.cfg
  $bin server $d/zoo.cfg > $d/srv.log 2>&1 & pid=$!
  "$Z" ping -servers 127.0.0.1:$port >/dev/null 2>&1
  r=$("$Z" mix -servers 127.0.0.1:$port -server-pids $pid -clients 30 -outstanding 100 -size 1024 -read-ratio $RR -warmup 3s -duration 15s | grep RESULT)
  echo "rep=$rep bin=$(basename $bin) $(tr ' ' '\n' <<<"$r" | grep -E '^(ops_per_s|cpu_server|cpu_other|valid)=' | tr '\n' ' ')"
  kill $pid; wait $pid 2>/dev/null
done; done
