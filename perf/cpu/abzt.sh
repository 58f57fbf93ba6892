#!/bin/bash
# abzt.sh RR REPS N BIN...: server CPU per op (perf task-clock over 8 s of a 12 s window) under
# Table 1's load (30 x 100, 1 KiB) on N servers, the binaries alternating.
rr=$1; reps=$2; n=$3; shift 3
cd /tmp/bench || exit 1
for r in $(seq $reps); do for b in "$@"; do
  cs=$(./ensemble.sh start -n $n --server-cmd "$b server" 2>/dev/null | tail -1)
  pids=$(./ensemble.sh pids | tr ' \n' ',,' | sed 's/,*$//')
  ./zkload/zkload mix -servers "$cs" -clients 30 -outstanding 100 -size 1024 -read-ratio $rr -warmup 1s -duration 4s >/dev/null 2>&1
  (sleep 5; perf stat -e task-clock -p $pids -- sleep 8 2> /tmp/abzt.stat) &
  res=$(./zkload/zkload mix -servers "$cs" -server-pids "$pids" -clients 30 -outstanding 100 -size 1024 -read-ratio $rr -warmup 3s -duration 12s | grep RESULT)
  wait; ./ensemble.sh stop >/dev/null 2>&1
  ops=$(tr ' ' '\n' <<<"$res" | awk -F= '$1=="ops_per_s"{print $2}'); err=$(tr ' ' '\n' <<<"$res" | awk -F= '$1=="errors"{print $2}')
  tc=$(awk '/task-clock/ {gsub(/,/,"",$1); print $1}' /tmp/abzt.stat)
  echo "$(basename $b) rep=$r n=$n rr=$rr ops=$ops errors=$err task-ms=$tc us/op=$(awk -v o=$ops -v t=$tc 'BEGIN{printf "%.3f", t*1000/(o*8)}')"
done; done
