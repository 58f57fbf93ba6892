#!/bin/bash
# usage: runmem.sh LABEL BINARY REPS
L=$1; B=$2; R=${3:-1}
for i in $(seq 1 $R); do
  uptime > /tmp/mem/$L-$i.load
  /work/shared/bench/run-paper.sh --target apache --target "zoo=cmd:$B server" --ns 1 --reps 1 --skip fsync,table1,table2,table3 --out /tmp/mem/$L-$i.md
  uptime >> /tmp/mem/$L-$i.load
done
