#!/usr/bin/env bash
# sysc.sh PID SECONDS: syscalls (read/write) and context switches of PID over a window
pid=$1; t=$2
snap(){ awk '/syscr|syscw/{printf "%s ",$2}' /proc/$pid/io; cat /proc/$pid/task/*/status | awk '/ctxt_switches/{s+=$2} END{printf "%d\n",s}'; }
a=($(snap)); sleep $t; b=($(snap))
echo "syscr=$((b[0]-a[0])) syscw=$((b[1]-a[1])) ctxsw=$((b[2]-a[2]))"
