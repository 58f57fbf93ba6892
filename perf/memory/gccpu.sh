#!/bin/bash
# gccpu.sh: server CPU per op (0% and 100% reads) on the 1M-znode data dir, GOGC=100 vs Zoo's adaptive setting, alternating.
cd /tmp/mem
for rep in 1 2; do
for mode in gogc100 adaptive; do
  envs=(); [[ $mode == gogc100 ]] && envs=(GOGC=100)
  env "${envs[@]}" /tmp/mem/zoo-after server d1.cfg > /tmp/mem/gccpu-$mode.log 2>&1 &
  pid=$!
  for i in $(seq 1 6000); do
    cnt=$( { exec 3<>/dev/tcp/127.0.0.1/24581 && printf mntr >&3 && timeout 2 cat <&3; } 2>/dev/null | awk '$1=="zk_znode_count" {print $2}') || true
    [[ -n $cnt && $cnt -ge 1000000 ]] && break
    sleep 0.1
  done
  sleep 3
  for rr in 0 1; do
    out=$(/work/shared/bench/zkload/zkload mix -servers 127.0.0.1:24581 -server-pids $pid -clients 10 -outstanding 50 -read-ratio $rr -size 100 -keys 10000 -duration 15s -warmup 3s 2>&1 | grep '^RESULT')
    echo "GCCPU rep=$rep mode=$mode read=$rr rss_mib=$(( $(awk '/^VmRSS/ {print $2}' /proc/$pid/status) / 1024 )) load=$(cut -d' ' -f1 /proc/loadavg) $out"
  done
  kill $pid; wait $pid
done
done
