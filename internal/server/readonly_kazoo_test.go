package server

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zoohq/zoo/zk"
)

// kazooReadOnlyScript follows kazoo's test_read_only: a client with
// read_only=True starts against a member cut off from its quorum, reads,
// gets NotReadOnlyCallError on a write, and stays connected over pings.
const kazooReadOnlyScript = `
import sys, threading, time
from kazoo.client import KazooClient
from kazoo.exceptions import NotReadOnlyCallError
from kazoo.protocol.states import KeeperState

zk = KazooClient(hosts=sys.argv[1], read_only=True, timeout=4)
ro = threading.Event()
def listen(state):
    if zk.client_state == KeeperState.CONNECTED_RO:
        ro.set()
zk.add_listener(listen)
try:
    zk.start(timeout=10)
except Exception as e:
    print("no session:", type(e).__name__)
    sys.exit(0)
ro.wait(10)
print("state", zk.client_state)
print("children", zk.get_children("/ro"))
try:
    zk.create("/ro/fred")
    print("created")
except NotReadOnlyCallError:
    print("create: NotReadOnlyCallError")
time.sleep(5)  # more than a ping interval (timeout/3)
print("after pings", zk.client_state)
zk.stop()
zk.close()
`

// Ref: issue 12 §4: kazoo with read_only=True against a read-only member.
// A new session there is a local session, so this needs
// localSessionsEnabled, as with Apache; without it kazoo gets no session.
func TestKazooReadOnly(t *testing.T) {
	const python = "/usr/bin/python3"
	if err := exec.Command(python, "-c", "import kazoo").Run(); err != nil {
		t.Skip("kazoo not installed (Debian python3-kazoo)")
	}
	script := filepath.Join(t.TempDir(), "kazoo_ro.py")
	if err := os.WriteFile(script, []byte(kazooReadOnlyScript), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Run("local sessions", func(t *testing.T) {
		out := kazooAgainstReadOnly(t, python, script, true)
		for _, want := range []string{"state CONNECTED_RO", "children ['a']", "create: NotReadOnlyCallError", "after pings CONNECTED_RO"} {
			if !strings.Contains(out, want) {
				t.Errorf("kazoo output lacks %q:\n%s", want, out)
			}
		}
	})
	t.Run("no local sessions", func(t *testing.T) {
		if out := kazooAgainstReadOnly(t, python, script, false); !strings.Contains(out, "no session") {
			t.Errorf("kazoo got a session without localSessionsEnabled:\n%s", out)
		}
	})
}

// kazooAgainstReadOnly runs the script against member 3 of an ensemble
// once it is cut off and read-only, and returns its output.
func kazooAgainstReadOnly(t *testing.T, python, script string, local bool) string {
	ms, cut := startLinkedMembers(t, func(c *Config) { c.ReadOnlyMode, c.LocalSessions = true, local })
	m3 := ms[3]
	waitIsro(t, m3.addr, "rw")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := zk.Connect(ctx, m3.addr)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/ro", "/ro/a"} {
		if _, _, err := c.Create(ctx, p, nil, zk.Persistent, zk.OpenACLUnsafe()); err != nil {
			t.Fatal(err)
		}
	}
	c.Close()
	cut(true)
	waitIsro(t, m3.addr, "ro")

	out, err := exec.CommandContext(ctx, python, script, m3.addr).CombinedOutput()
	if err != nil {
		t.Fatalf("kazoo: %v\n%s", err, out)
	}
	return string(out)
}
