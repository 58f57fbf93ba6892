#!/usr/bin/env bash
# storm.sh ZOOBIN N REPS OUT: N sessions expiring at once (expirystorm),
# Apache 3.8 (-Xmx8g) and Zoo alternating, each a fresh standalone server
# from ensemble.sh's zoo.cfg plus maxSessionTimeout=600000.
#   go build -o /tmp/expirystorm ./perf/expirystorm
#   perf/expirystorm/storm.sh /tmp/zoo 100000 2 /tmp/storm
set -uo pipefail
zoo=$1; n=$2; reps=$3; out=$4
ENS=${ENSEMBLE:-/work/shared/bench/ensemble.sh}
mkdir -p "$out"
for r in $(seq "$reps"); do
  for t in apache zoo; do
    echo "[$(date +%T)] $t rep $r"
    if [[ $t == zoo ]]; then CS=$($ENS start -n 1 --cfg maxSessionTimeout=600000 --server-cmd "$zoo server" --timeout 120 2>>"$out/ens.log" | tail -1)
    else CS=$($ENS start -n 1 --cfg maxSessionTimeout=600000 --jvm-opts "-Xmx8g" --timeout 120 2>>"$out/ens.log" | tail -1); fi
    pid=$($ENS pids)
    ${STORM:-/tmp/expirystorm} -servers "$CS" -pid "$pid" -sessions "$n" -timeout "${TIMEOUT:-60s}" -name "$t" 2>"$out/$t-$r.err" | tee -a "$out/storm.raw"
    tail -1 "$out/$t-$r.err"
    $ENS stop >>"$out/ens.log" 2>&1
  done
done
