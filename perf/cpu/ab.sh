#!/usr/bin/env bash
# ab.sh PCT: base/after/pool rotated, 3 rounds, one short run each on a free port
pct=$1
bins=(zoo-base zoo-after zoo-pool)
for r in 0 1 2; do for k in 0 1 2; do
  b=${bins[$(( (r+k) % 3 ))]}
  WARM=3s DUR=6s ./steady.sh /tmp/cpu-bench/$b $b-$pct-$r $pct
done; done
