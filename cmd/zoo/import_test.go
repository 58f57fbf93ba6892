package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zoohq/zoo/internal/apache"
	"github.com/zoohq/zoo/internal/config"
	"github.com/zoohq/zoo/internal/server"
	"github.com/zoohq/zoo/internal/zktest"
	"github.com/zoohq/zoo/zk"
)

// startApache starts Apache 3.8 or skips the test if it is not installed.
func startApache(t *testing.T, a zktest.Apache) *zktest.Server {
	t.Helper()
	s, err := a.Start(t.TempDir())
	if errors.Is(err, zktest.ErrUnavailable) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

// startZoo serves the Zoo data directory dir in-process until the test
// ends.
func startZoo(t *testing.T, dir string) string {
	addr, stop := startZooStop(t, dir)
	t.Cleanup(stop)
	return addr
}

// startZooStop is startZoo, stopped by the function it returns.
func startZooStop(t *testing.T, dir string, opts ...func(*config.Config)) (string, func()) {
	t.Helper()
	return startZooOn(t, dir, "127.0.0.1:0", opts...)
}

// startZooOn is startZooStop listening on addr.
func startZooOn(t *testing.T, dir, addr string, opts ...func(*config.Config)) (string, func()) {
	t.Helper()
	cfg := config.Default()
	cfg.DataDir, cfg.DataLogDir = dir, dir
	cfg.ExtendedTypesEnabled = true
	for _, o := range opts {
		o(cfg)
	}
	scfg := serverConfig(slog.New(slog.DiscardHandler), cfg)
	scfg.Logger = slog.New(slog.DiscardHandler)
	srv, err := server.New(scfg)
	if err != nil {
		t.Fatalf("zoo on the imported directory: %v", err)
	}
	return serveOn(t, srv, addr)
}

func connect(t *testing.T, addr string, opts ...zk.Option) *zk.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := zk.Connect(ctx, addr, append([]zk.Option{zk.WithSessionTimeout(30 * time.Second), zk.WithLogger(slog.New(slog.DiscardHandler))}, opts...)...)
	if err != nil {
		t.Fatalf("connect %s: %v", addr, err)
	}
	return c
}

// znode is everything a client can read of a node.
type znode struct {
	Data     string
	ACL      []zk.ACL
	Stat     zk.Stat
	Children []string
}

// walk reads every node under / through c.
func walk(t *testing.T, c *zk.Client) map[string]znode {
	t.Helper()
	ctx := context.Background()
	out := map[string]znode{}
	todo := []string{"/"}
	for len(todo) > 0 {
		p := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		data, st, err := c.Get(ctx, p)
		if err != nil {
			t.Fatalf("get %s: %v", p, err)
		}
		acl, _, err := c.GetACL(ctx, p)
		if err != nil {
			t.Fatalf("getACL %s: %v", p, err)
		}
		kids, _, err := c.Children(ctx, p)
		if err != nil {
			t.Fatalf("children %s: %v", p, err)
		}
		slices.Sort(kids)
		out[p] = znode{Data: string(data), ACL: acl, Stat: st, Children: kids}
		for _, k := range kids {
			todo = append(todo, path.Join(p, k))
		}
	}
	return out
}

// fill writes every kind of node Apache has into it through c.
func fill(t *testing.T, c *zk.Client, many int) {
	t.Helper()
	ctx := context.Background()
	must := func(_ any, _ zk.Stat, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	open := zk.OpenACLUnsafe()
	must(c.Create(ctx, "/app", []byte("root of the app"), zk.Persistent, open))
	must(c.Create(ctx, "/app/nil", nil, zk.Persistent, open))
	for range 5 {
		must(c.Create(ctx, "/app/seq-", []byte("s"), zk.PersistentSequential, open))
	}
	must(c.Create(ctx, "/app/box", nil, zk.Container, open))
	must(c.Create(ctx, "/app/box/item", []byte("keeps the container"), zk.Persistent, open))
	must(c.CreateTTL(ctx, "/app/ttl", []byte("t"), zk.PersistentWithTTL, open, time.Hour))
	must(c.CreateTTL(ctx, "/app/ttlseq-", []byte("t"), zk.PersistentSequentialWithTTL, open, 2*time.Hour))
	if err := c.AddAuth(ctx, "digest", []byte("alice:secret")); err != nil {
		t.Fatal(err)
	}
	must(c.Create(ctx, "/app/secret", []byte("digest"), zk.Persistent, zk.DigestACL(zk.PermAll, "alice", "secret")))
	must(c.Create(ctx, "/app/ip", []byte("ip"), zk.Persistent, append(zk.IPACL(zk.PermRead, "127.0.0.1"), zk.WorldACL(zk.PermAll)...)))
	// A quota, as zkCli's setquota writes it.
	must(c.Create(ctx, "/zookeeper/quota/app", nil, zk.Persistent, open))
	must(c.Create(ctx, "/zookeeper/quota/app/zookeeper_limits", []byte("count=100000000,bytes=-1"), zk.Persistent, open))
	must(c.Create(ctx, "/zookeeper/quota/app/zookeeper_stats", []byte("count=0,bytes=0"), zk.Persistent, open))
	// Changes to versions and cversions: set data, set ACL, deletes.
	for i := range 3 {
		if _, err := c.Set(ctx, "/app", []byte(fmt.Sprint("v", i)), -1); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.SetACL(ctx, "/app/nil", zk.ReadACLUnsafe(), -1); err != nil {
		t.Fatal(err)
	}
	must(c.Create(ctx, "/app/gone", nil, zk.Persistent, open))
	if err := c.Delete(ctx, "/app/gone", -1); err != nil {
		t.Fatal(err)
	}
	// Many znodes, in multis of 100, in two levels.
	must(c.Create(ctx, "/many", nil, zk.Persistent, open))
	for i := 0; i < many; i += 100 {
		var ops []zk.Op
		if i%1000 == 0 {
			must(c.Create(ctx, fmt.Sprintf("/many/d%d", i/1000), nil, zk.Persistent, open))
		}
		for j := i; j < min(i+100, many); j++ {
			ops = append(ops, zk.CreateOp(fmt.Sprintf("/many/d%d/n%d", j/1000, j), []byte(strconv.Itoa(j)), zk.Persistent, open))
		}
		if _, err := c.Multi(ctx, ops...); err != nil {
			t.Fatal(err)
		}
	}
}

// lastLog returns the path of the newest txn log in an Apache dataDir.
func lastLog(t *testing.T, dataDir string) string {
	t.Helper()
	logs, _ := filepath.Glob(filepath.Join(dataDir, "version-2", "log.*"))
	if len(logs) == 0 {
		t.Fatal("Apache wrote no txn log")
	}
	slices.SortFunc(logs, func(a, b string) int {
		x, _ := strconv.ParseUint(strings.TrimPrefix(filepath.Ext(a), "."), 16, 64)
		y, _ := strconv.ParseUint(strings.TrimPrefix(filepath.Ext(b), "."), 16, 64)
		return cmp.Compare(x, y)
	})
	return logs[len(logs)-1]
}

// tearLastRecord appends half of the log's last record after it, as a
// crash in the middle of a write leaves it.
func tearLastRecord(t *testing.T, logPath string) {
	t.Helper()
	b, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lr, err := apache.NewLogReader(f, logPath, apache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var lastOff int64 = -1
	for {
		e, err := lr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		lastOff = e.Offset
	}
	end := int64(len(bytes.TrimRight(b, "\x00")))
	if lastOff < 0 {
		t.Fatal("no record in the last log")
	}
	rec := b[lastOff:end]
	torn := append(b[:end:end], rec[:len(rec)/2]...)
	if err := os.WriteFile(logPath, torn, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestImportFromApache: a tree built on Apache 3.8, with a session still
// open when it dies, small snapCount and a torn last record, imports into
// a Zoo data directory on which Zoo serves the same tree, Stat for Stat,
// and the open session reconnects to Zoo with its ephemerals.
func TestImportFromApache(t *testing.T) {
	many := 1000
	if n, err := strconv.Atoi(os.Getenv("ZOO_IMPORT_ZNODES")); err == nil {
		many = n
	}
	for _, comp := range []string{"", "gz", "snappy"} {
		t.Run("compression="+comp, func(t *testing.T) {
			props := []string{"zookeeper.snapCount=20"}
			if comp != "" {
				props = append(props, "zookeeper.snapshot.compression.method="+comp)
			}
			// A long session timeout: the live session must outlast the
			// walks, which are slow under -race on a loaded machine.
			ap := startApache(t, zktest.Apache{ExtendedTypes: true, Props: props, MaxSessionTimeoutMs: 300000})
			c := connect(t, ap.Addr)
			fill(t, c, many)
			live := connect(t, ap.Addr, zk.WithSessionTimeout(5*time.Minute))
			ctx := context.Background()
			if _, _, err := live.Create(ctx, "/app/eph", []byte("mine"), zk.Ephemeral, zk.OpenACLUnsafe()); err != nil {
				t.Fatal(err)
			}
			if _, _, err := live.Create(ctx, "/app/ephseq-", nil, zk.EphemeralSequential, zk.OpenACLUnsafe()); err != nil {
				t.Fatal(err)
			}
			liveID, livePass := live.SessionID(), live.SessionPassword()
			want := walk(t, c)
			c.Close()
			ap.Stop() // SIGKILL: the live session is still open in the data
			live.Close()

			snaps, _ := filepath.Glob(filepath.Join(ap.DataDir, "version-2", "snapshot.*"))
			if len(snaps) < 2 {
				t.Fatalf("Apache took %d snapshots: want logs spanning several", len(snaps))
			}
			if comp != "" && !strings.HasSuffix(snaps[len(snaps)-1], "."+comp) {
				t.Fatalf("snapshots %v are not %s", snaps, comp)
			}
			tearLastRecord(t, lastLog(t, ap.DataDir))

			dst := filepath.Join(t.TempDir(), "zoo")
			var out bytes.Buffer
			start := time.Now()
			if err := runImport([]string{ap.DataDir, dst}, &out, &out); err != nil {
				t.Fatalf("import: %v\n%s", err, out.String())
			}
			t.Logf("import of %d znodes took %v:\n%s", len(want), time.Since(start), out.String())
			for _, s := range []string{"torn record", "digests verified", fmt.Sprintf("znodes %d,", len(want)), "sessions 1,", "ephemerals 2,"} {
				if !strings.Contains(out.String(), s) {
					t.Errorf("import output does not say %q", s)
				}
			}

			addr := startZoo(t, dst)
			// The session that was open on Apache goes on on Zoo: it is
			// resumed first, before its timeout runs out on Zoo.
			resumed := connect(t, addr, zk.WithSession(liveID, livePass))
			defer resumed.Close()
			if resumed.SessionID() != liveID {
				t.Fatalf("resumed session %#x, want %#x", resumed.SessionID(), liveID)
			}
			_, st, err := resumed.Get(ctx, "/app/eph")
			if err != nil || st.EphemeralOwner != liveID {
				t.Fatalf("the session's ephemeral on Zoo: %v, owner %#x", err, st.EphemeralOwner)
			}
			zc := connect(t, addr)
			defer zc.Close()
			if err := zc.AddAuth(ctx, "digest", []byte("alice:secret")); err != nil {
				t.Fatal(err)
			}
			got := walk(t, zc)
			compareTrees(t, got, want)

			// New writes get zxids above every imported one.
			_, st, err = zc.Create(ctx, "/after", nil, zk.Persistent, zk.OpenACLUnsafe())
			if err != nil {
				t.Fatal(err)
			}
			for p, n := range want {
				if n.Stat.Mzxid >= st.Czxid || n.Stat.Pzxid >= st.Czxid {
					t.Fatalf("%s has zxids %#x/%#x, not below Zoo's next %#x", p, n.Stat.Mzxid, n.Stat.Pzxid, st.Czxid)
				}
			}
		})
	}
}

// compareTrees compares every znode. Zoo keeps Apache's zxids, so they
// compare exactly (which keeps their order).
func compareTrees(t *testing.T, got, want map[string]znode) {
	t.Helper()
	bad := 0
	for p, w := range want {
		g, ok := got[p]
		if !ok {
			t.Errorf("%s: missing on Zoo", p)
			bad++
		} else if fmt.Sprintf("%+v", g) != fmt.Sprintf("%+v", w) {
			t.Errorf("%s:\n zoo    %+v\n apache %+v", p, g, w)
			bad++
		}
		if bad > 10 {
			t.Fatal("too many differences")
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("%s: on Zoo only", p)
		}
	}
}
