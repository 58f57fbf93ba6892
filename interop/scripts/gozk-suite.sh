#!/usr/bin/env bash
# gozk-suite.sh zoo|apache [SIZE] — run go-zookeeper v1.0.4's own test
# suite (its integration tests start servers through zkServer.sh) against
# Zoo or Apache ZooKeeper, and print "N passed, M failed, K skipped" on
# the last line.
#
# The suite starts its servers with ZOOKEEPER_BIN_PATH/zkServer.sh
# start-foreground zoo.cfg, SERVER_JVMFLAGS carrying its -D settings; for
# Zoo that script is a two-line shim running `zoo server zoo.cfg` (Zoo
# reads SERVER_JVMFLAGS as Apache does). SIZE, if given, makes every test
# that starts a one-server cluster start SIZE servers instead (a copy of
# the suite is edited; the module cache is not touched), so that the whole
# suite runs against an ensemble; tests that start their own sizes keep
# them. Apache ZooKeeper 3.8 is Debian's zookeeper package.
set -euo pipefail

target=${1:?usage: gozk-suite.sh zoo|apache [SIZE]}
size=${2:-}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work=$(mktemp -d)
trap 'chmod -R u+w "$work"; rm -rf "$work"' EXIT

src=$(cd "$here" && go list -m -f '{{.Dir}}' github.com/go-zookeeper/zk)
cp -r "$src" "$work/gozk"
chmod -R u+w "$work/gozk"
# waitForStart checks the servers with srvr, parsed by a regex made for
# Apache 3.4/3.5 ("built on MM/DD/YYYY HH:MM GMT", a version of letters,
# digits, dots and dashes): neither Debian's Apache 3.8 ("3.8.0-${mvngit.commit.id},
# built on 2024-12-29 17:54 UTC") nor Zoo match it, and every cluster test
# fails before it starts. The copy waits instead until every server's
# srvr has a Mode line, which Apache prints only once it serves (ruok
# answers imok before an ensemble has formed).
perl -0pi -e 's/_, ok := FLWSrvr\(serverAddrs, time.Second\)/ok := true\n\t\tfor _, a := range serverAddrs {\n\t\t\tr, err := fourLetterWord(a, "srvr", time.Second)\n\t\t\tok = ok \&\& err == nil \&\& strings.Contains(string(r), "\\nMode: ")\n\t\t}/' "$work/gozk/server_help_test.go"
grep -q 'fourLetterWord(a, "srvr", time.Second)' "$work/gozk/server_help_test.go" || { echo "gozk-suite.sh: could not patch waitForStart" >&2; exit 1; }
if [ -n "$size" ]; then
	sed -i -E "s/StartTestCluster\(t, 1,/StartTestCluster(t, $size,/" "$work/gozk"/*_test.go
fi

case $target in
zoo)
	(cd "$here" && go build -o "$work/zoo" ./cmd/zoo)
	mkdir "$work/bin"
	cat >"$work/bin/zkServer.sh" <<SHIM
#!/bin/sh
# zkServer.sh start-foreground CONFIG, as go-zookeeper's tests call it
exec "$work/zoo" server "\$2"
SHIM
	chmod +x "$work/bin/zkServer.sh"
	export ZOOKEEPER_BIN_PATH=$work/bin
	;;
apache)
	export ZOOKEEPER_BIN_PATH=/usr/share/zookeeper/bin
	;;
*)
	echo "usage: gozk-suite.sh zoo|apache [SIZE]" >&2
	exit 2
	;;
esac

# The reconfig tests run only when ZK_VERSION names a server of 3.5 or
# later; both servers here answer as 3.8 does.
export ZK_VERSION=${ZK_VERSION:-3.8.0}
log=$work/test.log
rc=0
# GOZK_RUN narrows the run to the tests it matches (go test -run);
# GOZK_LOG names a file to keep the whole output in.
(cd "$work/gozk" && GOFLAGS=-mod=mod go test -count=1 -timeout 30m -v -run "${GOZK_RUN:-.}" . >"$log" 2>&1) || rc=$?
if [ -n "${GOZK_LOG:-}" ]; then cp "$log" "$GOZK_LOG"; fi
grep -E '^(--- |    --- )(FAIL|SKIP)' "$log" || true
grep -E '^(FAIL|ok|panic)' "$log" || true
passed=$(grep -cE '^--- PASS' "$log" || true)
failed=$(grep -cE '^--- FAIL' "$log" || true)
skipped=$(grep -cE '^--- SKIP' "$log" || true)
echo "$passed passed, $failed failed, $skipped skipped (top-level tests; exit $rc)"
[ "$rc" -eq 0 ]
