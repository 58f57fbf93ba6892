#!/bin/bash
# sysc3.sh RR BIN: syscalls per op on each of 3 servers under Table 1's load (30 x 100, 1 KiB)
rr=$1; zoo=$2
cd /tmp/bench || exit 1
ev='syscalls:sys_enter_read,syscalls:sys_enter_write,syscalls:sys_enter_writev,syscalls:sys_enter_epoll_pwait,syscalls:sys_enter_futex,syscalls:sys_enter_fdatasync,syscalls:sys_enter_nanosleep,context-switches'
if [[ $zoo == apache ]]; then cs=$(./ensemble.sh start -n 3 2>/dev/null | tail -1); else cs=$(./ensemble.sh start -n 3 --server-cmd "$zoo server" 2>/dev/null | tail -1); fi
pids=$(./ensemble.sh pids | tr , " ")
i=0; for p in $pids; do i=$((i+1)); (sleep 5; perf stat -e "$ev" -p $p -- sleep 8 2> /tmp/sysc3.$i) & done
res=$(./zkload/zkload mix -servers "$cs" -server-pids "$(echo $pids | tr ' ' ,)" -clients 30 -outstanding 100 -size 1024 -read-ratio $rr -warmup 3s -duration 12s | grep RESULT)
wait; ./ensemble.sh stop >/dev/null 2>&1
ops=$(tr ' ' '\n' <<<"$res" | awk -F= '$1=="ops_per_s"{print $2}'); cpu=$(tr ' ' '\n' <<<"$res" | awk -F= '$1=="cpu_server"{print $2}')
echo "$zoo rr=$rr ops=$ops cpu=$cpu us/op=$(awk -v o=$ops -v c=$cpu 'BEGIN{printf "%.2f", c*1e6/o}')"
for i in 1 2 3; do echo "  s$i" $(awk -v o=$ops '/syscalls|context/ {gsub(/,/,"",$1); n=split($2,a,"sys_enter_"); printf "%s=%.3f ", (n>1?a[2]:$2), $1/(o*8)}' /tmp/sysc3.$i); done
