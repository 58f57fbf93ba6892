#!/bin/bash
# sysc1.sh RR BIN: standalone, Table 1's load (30 x 100, 1 KiB), syscalls per op; IDLE_FIRST=S idles S seconds after the start
rr=$1; zoo=$2
cd /tmp/bench || exit 1
ev='syscalls:sys_enter_read,syscalls:sys_enter_writev,syscalls:sys_enter_epoll_pwait,syscalls:sys_enter_futex,syscalls:sys_enter_fdatasync,syscalls:sys_enter_nanosleep,context-switches'
cs=$(./ensemble.sh start -n 1 --server-cmd "$zoo server" 2>/dev/null | tail -1)
pid=$(./ensemble.sh pids); sleep ${IDLE_FIRST:-0}
./zkload/zkload mix -servers "$cs" -clients 30 -outstanding 100 -size 1024 -read-ratio $rr -warmup 1s -duration 4s >/dev/null 2>&1
(sleep 5; perf stat -e "$ev" -p $pid -- sleep 8 2> /tmp/sysc1.1) &
res=$(./zkload/zkload mix -servers "$cs" -server-pids "$pid" -clients 30 -outstanding 100 -size 1024 -read-ratio $rr -warmup 3s -duration 12s | grep RESULT)
wait; ./ensemble.sh stop >/dev/null 2>&1
ops=$(tr ' ' '\n' <<<"$res" | awk -F= '$1=="ops_per_s"{print $2}'); cpu=$(tr ' ' '\n' <<<"$res" | awk -F= '$1=="cpu_server"{print $2}'); p50=$(tr ' ' '\n' <<<"$res" | awk -F= '$1=="p50_ms"{print $2}')
echo "$zoo rr=$rr ops=$ops p50=$p50 cpu=$cpu us/op=$(awk -v o=$ops -v c=$cpu 'BEGIN{printf "%.2f", c*1e6/o}')" $(awk -v o=$ops '/syscalls|context/ {gsub(/,/,"",$1); n=split($2,a,"sys_enter_"); printf "%s=%.3f ", (n>1?a[2]:$2), $1/(o*8)}' /tmp/sysc1.1)
