package main

import (
	"bufio"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zoohq/zoo/internal/zktest"
)

// kazooScript holds a session with an ephemeral node, given a host list
// to fail over along; after "check" on stdin it waits until the session
// is connected again, with the same id and its ephemeral, and says so.
const kazooScript = `
import sys, time
from kazoo.client import KazooClient
from kazoo.retry import KazooRetry
zk = KazooClient(hosts=sys.argv[1], timeout=30.0, randomize_hosts=False,
                 connection_retry=KazooRetry(max_tries=-1, delay=0.1, max_delay=0.5))
zk.start(timeout=30)
zk.create("/kazoo-eph", b"k", ephemeral=True)
sid = zk.client_id[0]
print("ready %d" % sid, flush=True)
sys.stdin.readline()
deadline = time.time() + 60
while time.time() < deadline:
    try:
        data, st = zk.get("/kazoo-eph")
        if zk.client_id[0] == sid and st.ephemeralOwner == sid and data == b"k":
            print("ok", flush=True)
            break
    except Exception as e:
        last = e
    time.sleep(0.2)
else:
    print("fail", flush=True)
zk.stop()
zk.close()
`

// TestKazooSessionMovesFromApacheToZoo is the migration a user makes: a
// kazoo client connected to Apache, with the Zoo address next in its
// host list; Apache stops, its dataDir is imported, Zoo starts; the
// client reconnects to Zoo with its session and finds its ephemeral.
func TestKazooSessionMovesFromApacheToZoo(t *testing.T) {
	py := "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import kazoo").Run(); err != nil {
		t.Skip("kazoo is not installed (apt-get install python3-kazoo)")
	}
	ap := startApache(t, zktest.Apache{})
	// The port Zoo will listen on, free a moment ago.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	zooAddr := l.Addr().String()
	l.Close()

	script := filepath.Join(t.TempDir(), "move.py")
	if err := os.WriteFile(script, []byte(kazooScript), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, script, ap.Addr+","+zooAddr)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	// kazoo logs every refused connection: kept for a failure message.
	errLog, err := os.Create(filepath.Join(t.TempDir(), "kazoo.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer errLog.Close()
	cmd.Stderr = errLog
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	lines := make(chan string, 4)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	next := func() string {
		select {
		case l := <-lines:
			return l
		case <-time.After(90 * time.Second):
			b, _ := os.ReadFile(errLog.Name())
			t.Fatalf("kazoo script said nothing for 90s; its log:\n%s", b[max(0, len(b)-2000):])
		}
		return ""
	}
	if l := next(); !strings.HasPrefix(l, "ready ") {
		t.Fatalf("kazoo: %q", l)
	}
	ap.Stop()
	dst := filepath.Join(t.TempDir(), "zoo")
	if err := runImport([]string{ap.DataDir, dst}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	_, stop := startZooOn(t, dst, zooAddr)
	defer stop()
	if _, err := io.WriteString(stdin, "check\n"); err != nil {
		t.Fatal(err)
	}
	if l := next(); l != "ok" {
		b, _ := os.ReadFile(errLog.Name())
		t.Fatalf("kazoo after the move to Zoo: %q; its log:\n%s", l, b[max(0, len(b)-2000):])
	}
}
