#!/usr/bin/env bash
# kazoo-suite.sh zoo|apache [PYTEST ARGS...] — run kazoo's own test suite
# (Debian's python3-kazoo, kazoo.tests) against a 3-server Zoo ensemble or
# against Apache ZooKeeper 3.8, and print pytest's summary on the last line.
#
# kazoo's harness (kazoo.testing) starts its cluster of
# ZOOKEEPER_CLUSTER_SIZE servers (3 by default) as
#   java -cp CLASSPATH -D... org.apache.zookeeper.server.quorum.QuorumPeerMain zoo.cfg
# with the java found on PATH. For Zoo a shim named java runs
# `zoo server zoo.cfg` instead, with the -D flags in SERVER_JVMFLAGS (which
# Zoo reads as Apache's scripts do: the super digest, read-only mode, the
# JAAS file). The harness uses fixed ports from 20000 up: run one suite at
# a time. Needs python3-pytest, python3-mock and python3-objgraph.
#
# Extra arguments go to pytest, e.g. -k TestReconfig.
set -euo pipefail

target=${1:?usage: kazoo-suite.sh zoo|apache [PYTEST ARGS...]}
shift
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export ZOOKEEPER_VERSION=3.8.0
export ZOOKEEPER_CLASSPATH=/usr/share/java/zookeeper.jar:/usr/share/java/zookeeper-jute.jar:/usr/share/java/slf4j-simple.jar

case $target in
zoo)
	(cd "$here" && go build -o "$work/zoo" ./cmd/zoo)
	mkdir "$work/bin"
	cat >"$work/bin/java" <<SHIM
#!/usr/bin/env bash
# java shim: QuorumPeerMain CONFIG runs zoo server CONFIG; anything else is java.
args=("\$@"); flags=(); main=""; cfg=""
for a in "\$@"; do
	case "\$a" in
	-D*) flags+=("\$a") ;;
	org.apache.zookeeper.server.quorum.QuorumPeerMain) main=1 ;;
	*) if [ -n "\$main" ]; then cfg=\$a; fi ;;
	esac
done
[ -n "\$cfg" ] || exec /usr/bin/java "\${args[@]}"
export SERVER_JVMFLAGS="\${flags[*]}"
exec "$work/zoo" server "\$cfg" 2>>"\$(dirname "\$cfg")/zoo.log"
SHIM
	chmod +x "$work/bin/java"
	export PATH=$work/bin:$PATH
	;;
apache) ;;
*)
	echo "usage: kazoo-suite.sh zoo|apache [PYTEST ARGS...]" >&2
	exit 2
	;;
esac

cd "$work"
rc=0
/usr/bin/python3 -m pytest --pyargs kazoo.tests -q -p no:cacheprovider "$@" >"$work/test.log" 2>&1 || rc=$?
grep -E '^(FAILED|ERROR)' "$work/test.log" || true
grep -E '[0-9]+ (passed|failed)' "$work/test.log" | tail -1
exit "$rc"
