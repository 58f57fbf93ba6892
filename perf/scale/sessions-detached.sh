#!/usr/bin/env bash
# detached.sh ZOOBIN STEPS REPS OUTDIR: the sessions axis with detached
# sessions, Apache 3.8 (-Xmx8g, as scale.sh) and Zoo alternating, each a
# fresh standalone server from ensemble.sh's zoo.cfg plus
# maxSessionTimeout=1800000 (so that 20-minute sessions are granted).
#   perf/scale/sessions-detached.sh /tmp/zoo 1000,10000,100000 2 /tmp/det
set -uo pipefail
zoo=$1; steps=$2; reps=$3; out=$4
ENS=${ENSEMBLE:-/work/shared/bench/ensemble.sh}
mkdir -p "$out"
for r in $(seq "$reps"); do
  for t in apache zoo; do
    echo "[$(date +%T)] $t rep $r"
    if [[ $t == zoo ]]; then CS=$($ENS start -n 1 --cfg maxSessionTimeout=1800000 --server-cmd "$zoo server" --timeout 120 2>>"$out/ens.log" | tail -1)
    else CS=$($ENS start -n 1 --cfg maxSessionTimeout=1800000 --jvm-opts "-Xmx8g" --timeout 120 2>>"$out/ens.log" | tail -1); fi
    pid=$($ENS pids)
    "$zoo" bench curve -servers "$CS" -server-pids "$pid" -axis sessions -detached -steps "$steps" \
      -idle-timeout 20m -name "$t" -raw "$out/$t-$r.raw" >"$out/$t-$r.out" 2>"$out/$t-$r.err" || echo "FAILED $t $r: $(tail -2 "$out/$t-$r.err")"
    grep -h "mode=sessidle" "$out/$t-$r.raw" | sed 's/^/  /' | cut -c1-400
    $ENS stop >>"$out/ens.log" 2>&1
  done
done
