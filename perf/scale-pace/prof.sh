#!/usr/bin/env bash
# prof.sh NAME COUNT [extra cfg lines...]: start zoo on free ports, fill COUNT, sample.
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
for l in "$@"; do echo "$l" >> $D/zoo.cfg; done
GODEBUG=gctrace=1 $ZOO server -cpuprofile $D/cpu.prof $D/zoo.cfg 2>$D/server.log &
pid=$!
echo "pid $pid port $port"
$Z ping -servers 127.0.0.1:$port >/dev/null 2>&1 || sleep 3
( while kill -0 $pid 2>/dev/null; do
    echo "T $(date +%s.%N) $(awk '{print $14, $15}' /proc/$pid/stat) $(awk '/write_bytes|^wchar/ {printf "%s ", $2}' /proc/$pid/io) $(cat /proc/loadavg | cut -d' ' -f1)"
    $Z fourlw -servers 127.0.0.1:$port -cmd mntr 2>/dev/null | grep -E 'fsynctime|snapshottime|batch_size|zk_znode_count|snap_count' | tr '\n' ' '; echo
    sleep 2
  done ) > $D/samples.txt 2>&1 &
sp=$!
vmstat 2 > $D/vmstat.txt &
vp=$!
$Z fill -servers 127.0.0.1:$port -server-pids $pid -count $COUNT -size 100 -fanout 1000 -clients 8 -outstanding 128 > $D/fill.txt 2>&1
tail -3 $D/fill.txt
kill $vp
kill -TERM $pid; wait $pid
kill $sp 2>/dev/null
ls -la $D/data/snap | tail -3; du -sh $D/data/*
