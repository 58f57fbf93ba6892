#!/bin/bash
# syscalls-per-op.sh BIN RR : syscalls per op over 10 s of Table 1's load
cd "${BENCH:-/tmp/bench}" || exit 1
./ensemble.sh start -n 1 --server-cmd "$1 server" >/dev/null 2>&1; pid=$(./ensemble.sh pids)
(sleep 5; perf stat -e 'syscalls:sys_enter_read,syscalls:sys_enter_writev,syscalls:sys_enter_epoll_pwait,syscalls:sys_enter_futex,context-switches' -p $pid -- sleep 10 2> /tmp/sysc.stat) &
r=$("${ZKLOAD:-/tmp/zkload}" mix -servers 127.0.0.1:23811 -server-pids "$pid" -clients 30 -outstanding 100 -size 1024 -read-ratio $2 -warmup 3s -duration 15s | grep RESULT)
wait; ./ensemble.sh stop >/dev/null 2>&1
ops=$(tr ' ' '\n' <<<"$r" | awk -F= '$1=="ops_per_s"{print $2}'); cpu=$(tr ' ' '\n' <<<"$r" | awk -F= '$1=="cpu_server"{print $2}')
echo "$(basename $1) ops=$ops cpu=$cpu us/op=$(awk -v o=$ops -v c=$cpu 'BEGIN{printf "%.2f", c*1e6/o}')" $(awk -v o=$ops '/syscalls|context/ {gsub(/,/,"",$1); split($2,a,":"); printf "%s=%.3f ", (a[2]?a[2]:$2), $1/(o*10)}' /tmp/sysc.stat)
