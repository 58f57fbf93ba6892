#!/usr/bin/env bash
# run.sh HOST:PORT[,HOST:PORT...] — run every interop script against a
# running server, or an ensemble (all its servers listed, as in a ZooKeeper
# connect string), and print one summary line, "N passed, M failed", alone
# on the last line (CI counts it). Exits non-zero if anything failed or a
# script did not finish.
#
# Each script ends with its own "<name>: passed N, failed M" line (a form CI
# does not count, so only the total is counted); a script that dies or times
# out before printing it counts as one failure.
#
# Apache ZooKeeper 3.8 is the oracle these scripts were written against:
#   addr=$(interop/scripts/start-apache.sh) && interop/scripts/run.sh "$addr"
#   interop/scripts/start-apache.sh stop "$addr"
set -euo pipefail

addr=${1:-${ZK_ADDR:-}}
[ -n "$addr" ] || { echo "usage: run.sh HOST:PORT[,HOST:PORT...]" >&2; exit 2; }
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export ZK_ADDR=$addr
export PYTHONDONTWRITEBYTECODE=1 # no __pycache__ in the tree

total_passed=0
total_failed=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# suite NAME TIMEOUT CMD...: run one script, bounded, and add its counts.
suite() {
	local name=$1 limit=$2 rc=0 start=$SECONDS
	shift 2
	echo
	echo "=== $name (against $addr)"
	timeout --kill-after=10 "$limit" "$@" 2>&1 | tee "$log" || rc=${PIPESTATUS[0]}
	local line
	line=$(grep -E "^$name: passed [0-9]+, failed [0-9]+$" "$log" | tail -n 1 || true)
	if [ -z "$line" ]; then
		echo "=== $name: no summary line (exit $rc$( ((rc == 124)) && echo ", timed out after ${limit}s")); counted as 1 failure"
		total_failed=$((total_failed + 1))
		return
	fi
	local p f
	read -r p f < <(sed -E 's/^[^:]+: passed ([0-9]+), failed ([0-9]+)$/\1 \2/' <<<"$line")
	if [ "$f" -eq 0 ] && [ "$rc" -ne 0 ]; then
		f=1 # it said all passed but exited non-zero: don't trust it
		echo "=== $name: exit $rc despite no failures; counted as 1 failure"
	fi
	total_passed=$((total_passed + p))
	total_failed=$((total_failed + f))
	echo "=== $name: passed $p, failed $f, in $((SECONDS - start))s"
}

suite kazoo_test 300 /usr/bin/python3 "$here/kazoo_test.py"
suite zkcli_test 180 "$here/zkcli_test.sh" "$addr"

echo
echo "$total_passed passed, $total_failed failed"
[ "$total_failed" -eq 0 ]
