#!/usr/bin/env bash
# restart.sh NAME ZOO: start ZOO on run-NAME's data, time to the first getData of a tree znode.
set -u
NAME=$1; ZOO=$2
D=/tmp/pace/run-$NAME
Z=/work/shared/bench/zkload/zkload
port=$(grep clientPort= $D/zoo.cfg | cut -d= -f2)
t0=$(date +%s%N)
$ZOO server $D/zoo.cfg 2>$D/restart.log &
pid=$!
$Z waitread -servers 127.0.0.1:$port -path /zkperf/fill/d00000/n00000000 -since $t0 -timeout 600s 2>&1 | grep RESULT
grep -E "loaded snapshot|replayed the log" $D/restart.log | cut -c1-250
echo "RSS $(awk '/VmRSS/ {print $2}' /proc/$pid/status) kB"
kill -TERM $pid; wait $pid
