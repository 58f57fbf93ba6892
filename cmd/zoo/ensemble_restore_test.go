package main

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zoohq/zoo/internal/apache"
	"github.com/zoohq/zoo/internal/config"
	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/internal/server"
	"github.com/zoohq/zoo/internal/tree"
	"github.com/zoohq/zoo/internal/txn"
	"github.com/zoohq/zoo/internal/zktest"
	"github.com/zoohq/zoo/zk"
)

// TestRestoreEnsembleFromOneBackup follows the README's procedure: one
// backup, restored with the ensemble's zoo.cfg into every member's
// dataDir; the three members start, elect a leader, serve the backed-up
// tree and take writes above its zxids.
func TestRestoreEnsembleFromOneBackup(t *testing.T) {
	src := filepath.Join(t.TempDir(), "zoo")
	addr, stop := startZooStop(t, src, func(c *config.Config) { c.SnapCount = 20 })
	c := connect(t, addr)
	ctx := context.Background()
	if _, _, err := c.Create(ctx, "/k", []byte("0"), zk.Persistent, zk.OpenACLUnsafe()); err != nil {
		t.Fatal(err)
	}
	var last zk.Stat
	for i := 1; i <= 50; i++ {
		st, err := c.Set(ctx, "/k", []byte(strconv.Itoa(i)), -1)
		if err != nil {
			t.Fatal(err)
		}
		last = st
	}
	c.Close()
	bk := filepath.Join(t.TempDir(), "backup.tgz")
	var out bytes.Buffer
	if err := runBackup([]string{"-datadir", src, bk}, &out, &out); err != nil {
		t.Fatalf("backup: %v\n%s", err, out.String())
	}
	stop()

	addrs := startEnsembleFrom(t, func(cfgPath, dir string) error {
		out.Reset()
		if err := runRestore([]string{"-config", cfgPath, bk, dir}, &out, &out); err != nil {
			return fmt.Errorf("%w\n%s", err, out.String())
		}
		return nil
	})
	leader := waitLeader(t, addrs)
	t.Logf("leader %s", leader)
	lc := connect(t, addrs[2])
	defer lc.Close()
	data, _, err := lc.Get(ctx, "/k")
	if err != nil || string(data) != "50" {
		t.Fatalf("restored ensemble: /k = %q, %v", data, err)
	}
	st, err := lc.Set(ctx, "/k", []byte("after"), -1)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mzxid <= last.Mzxid {
		t.Fatalf("a write after the restore got zxid %d, not above the backup's %d", st.Mzxid, last.Mzxid)
	}
	for _, a := range addrs {
		mc := connect(t, a)
		if err := mc.Sync(ctx, "/k"); err != nil {
			t.Fatal(err)
		}
		data, _, err := mc.Get(ctx, "/k")
		mc.Close()
		if err != nil || string(data) != "after" {
			t.Fatalf("member %s: /k = %q, %v", a, data, err)
		}
	}
}

// startEnsembleFrom writes three members' zoo.cfg (quorum ports held
// open until each member takes its listener) and myid, fills each
// member's dataDir with fill(cfgPath, dataDir), starts them and returns
// their client addresses.
func startEnsembleFrom(t *testing.T, fill func(cfgPath, dir string) error) []string {
	t.Helper()
	const n = 3
	quorum := make([]net.Listener, n)
	var servers strings.Builder
	for i := range quorum {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		quorum[i] = ln
		fmt.Fprintf(&servers, "server.%d=127.0.0.1:%d:%d\n", i+1, ln.Addr().(*net.TCPAddr).Port, ln.Addr().(*net.TCPAddr).Port+1)
	}
	base := t.TempDir()
	var addrs []string
	for i := range n {
		id := i + 1
		dir := filepath.Join(base, fmt.Sprint("member", id))
		cfgPath := filepath.Join(base, fmt.Sprint("zoo", id, ".cfg"))
		cfgText := fmt.Sprintf("tickTime=200\ninitLimit=10\nsyncLimit=5\nclientPort=2181\ndataDir=%s\n%s", dir, servers.String())
		if err := os.WriteFile(cfgPath, []byte(cfgText), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "myid"), []byte(fmt.Sprintln(id)), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := fill(cfgPath, dir); err != nil {
			t.Fatalf("member %d: %v", id, err)
		}
		cfg, err := config.Load(cfgPath)
		if err != nil {
			t.Fatal(err)
		}
		addrs = append(addrs, startMember(t, cfg, quorum))
	}
	return addrs
}

// startMember starts one member of an ensemble from its zoo.cfg, on the
// quorum listener held for it, and returns its client address.
func startMember(t *testing.T, cfg *config.Config, quorum []net.Listener) string {
	t.Helper()
	scfg := serverConfig(slog.New(slog.DiscardHandler), cfg)
	e := server.Ensemble{Peers: map[uint64]string{}, Membership: cfg.Membership()}
	for _, s := range cfg.Servers {
		e.Voters = append(e.Voters, uint64(s.ID))
		if s.ID != cfg.MyID {
			e.Peers[uint64(s.ID)] = quorum[s.ID-1].Addr().String()
		}
	}
	e.Listener = quorum[cfg.MyID-1]
	scfg.Ensemble = e
	srv, err := server.New(scfg)
	if err != nil {
		t.Fatalf("member %d: %v", cfg.MyID, err)
	}
	addr, _ := serveOn(t, srv, "127.0.0.1:0")
	return addr
}

func waitLeader(t *testing.T, addrs []string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		for _, a := range addrs {
			if out, err := zktest.FourLetter(a, "srvr", time.Second); err == nil && strings.Contains(out, "Mode: leader") {
				return a
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no leader among %v within 30s", addrs)
	return ""
}

// TestImportIntoEnsemble: an Apache data directory imported with the
// ensemble's zoo.cfg into every member's dataDir starts as one ensemble
// with the imported tree, its writes above Apache's zxids.
func TestImportIntoEnsemble(t *testing.T) {
	const zxid = 0x300000010 // epoch 3
	st := txn.NewState(tree.New())
	acl := []jute.ACL{{Perms: jute.PermAll, ID: jute.Id{Scheme: "world", ID: "anyone"}}}
	if _, err := st.Tree.CreateNode("/imported", []byte("v"), acl, 0, -1, zxid-3, 1); err != nil {
		t.Fatal(err)
	}
	src := t.TempDir()
	var b bytes.Buffer
	if err := apache.WriteSnapshot(&b, st, zxid, apache.Plain); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(src, "version-2"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "version-2", apache.SnapshotName(zxid, apache.Plain)), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	addrs := startEnsembleFrom(t, func(cfgPath, dir string) error {
		out.Reset()
		if err := runImport([]string{"-config", cfgPath, src, dir}, &out, &out); err != nil {
			return fmt.Errorf("%w\n%s", err, out.String())
		}
		return nil
	})
	waitLeader(t, addrs)
	ctx := context.Background()
	c := connect(t, addrs[1])
	defer c.Close()
	data, stat, err := c.Get(ctx, "/imported")
	if err != nil || string(data) != "v" || stat.Czxid != zxid-3 {
		t.Fatalf("/imported on the ensemble: %q %+v %v", data, stat, err)
	}
	_, stat, err = c.Create(ctx, "/new", nil, zk.Persistent, zk.OpenACLUnsafe())
	if err != nil || stat.Czxid <= zxid {
		t.Fatalf("a create after the import: zxid %#x, %v; want above %#x", stat.Czxid, err, zxid)
	}
	cfgData, _, err := c.Get(ctx, "/zookeeper/config")
	if err != nil || strings.Count(string(cfgData), "server.") != 3 {
		t.Fatalf("/zookeeper/config = %q, %v", cfgData, err)
	}
}
