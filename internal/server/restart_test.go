package server

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/internal/vfs"
	"github.com/zoohq/zoo/internal/vfs/errorfs"
)

// durableConfig is expiryConfig with the state kept in dir, snapshotting
// every few txns so that a restart loads a snapshot and replays a log
// suffix.
func durableConfig(dir string) func(*Config) {
	return func(c *Config) {
		expiryConfig(c)
		c.DataDir = dir
		c.SnapCount = 5
	}
}

// A restarted server has every acknowledged change, and its sessions: one
// whose client reconnects within its timeout lives on with its ephemerals,
// one whose client does not expires one timeout after the restart.
// Ref: programmer's guide, "ZooKeeper Sessions" (a client reconnects with
// its session id and password; the session ends only when it expires).
func TestRestartKeepsDataAndSessions(t *testing.T) {
	dir := t.TempDir()
	ts := startServer(t, durableConfig(dir))
	kept := dialRaw(t, ts.addr)
	kept.handshake(connectReq(1000))
	gone := dialRaw(t, ts.addr)
	gone.handshake(connectReq(1000))
	kept.create("/a", []byte("one"), jute.FlagPersistent)
	kept.create("/a/b", nil, jute.FlagPersistent)
	kept.mustCall(jute.OpSetData, &jute.SetDataRequest{Path: "/a", Data: []byte("two"), Version: -1}, nil, jute.OK)
	for _, p := range []string{"/a/c", "/a/d", "/a/e"} {
		kept.create(p, nil, jute.FlagPersistent)
	}
	kept.mustCall(jute.OpDelete, &jute.PathVersion{Path: "/a/e", Version: -1}, nil, jute.OK)
	kept.create("/kept", nil, jute.FlagEphemeral)
	gone.create("/gone", nil, jute.FlagEphemeral)
	statA, _ := kept.exists("/a")
	kept.close()
	gone.close()
	if err := ts.shutdown(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	if snaps, _ := os.ReadDir(filepath.Join(dir, "snap")); len(snaps) == 0 {
		t.Fatal("no snapshot written with snapCount 5")
	}

	ts = startServer(t, durableConfig(dir))
	watcher := newSession(t, ts.addr)
	if got := watcher.getData("/a"); string(got) != "two" {
		t.Fatalf("/a holds %q after restart; want %q", got, "two")
	}
	if st, ok := watcher.exists("/a"); !ok || st != statA {
		t.Fatalf("/a stat after restart %+v (%v); before %+v", st, ok, statA)
	}
	for path, want := range map[string]bool{"/a/b": true, "/a/c": true, "/a/d": true, "/a/e": false} {
		if _, ok := watcher.exists(path); ok != want {
			t.Fatalf("%s exists=%v after restart; want %v", path, ok, want)
		}
	}

	back := dialRaw(t, ts.addr)
	if resp := back.handshake(kept.reattachReq()); resp.SessionID != kept.sid {
		t.Fatalf("reattached as session %#x; want %#x", resp.SessionID, kept.sid)
	}
	// The abandoned session expires one timeout after the restart; the
	// reattached one, kept busy, does not.
	waitFor(t, 10*time.Second, func() error {
		back.getData("/")
		if _, ok := watcher.exists("/gone"); ok {
			return errors.New("the abandoned session's ephemeral is still there")
		}
		return nil
	})
	if st, ok := watcher.exists("/kept"); !ok || st.EphemeralOwner != kept.sid {
		t.Fatalf("the reattached session's ephemeral: %v, owner %#x", ok, st.EphemeralOwner)
	}
	lost := dialRaw(t, ts.addr)
	if resp, _, err := lost.tryHandshake(gone.reattachReq()); err != nil || resp.TimeOut != 0 {
		t.Fatalf("reattaching the expired session: %+v, %v; want a refusal", resp, err)
	}

	// The expiry is durable too.
	if err := ts.shutdown(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	ts = startServer(t, durableConfig(dir))
	watcher = newSession(t, ts.addr)
	if _, ok := watcher.exists("/gone"); ok {
		t.Fatal("the expired session's ephemeral is back after a second restart")
	}
	if got := watcher.getData("/a"); string(got) != "two" {
		t.Fatalf("/a holds %q after the second restart", got)
	}
}

// A start that loaded a snapshot and replayed a log hands what it decoded
// back to the OS once it serves, so that RSS after a restart is the
// state's and not the start's peak (issue 14: at 1M znodes, 316-361 MiB
// became 260). A fresh start has nothing to give back.
func TestRestartReturnsWhatItDecoded(t *testing.T) {
	dir := t.TempDir()
	ts := startServer(t, durableConfig(dir))
	if ts.srv.recovered.Load() {
		t.Fatal("a start on an empty data directory counts as a recovery")
	}
	c := newSession(t, ts.addr)
	for i := range 20 {
		c.create("/n"+strconv.Itoa(i), []byte("data"), jute.FlagPersistent)
	}
	c.close()
	if err := ts.shutdown(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	ts = startServer(t, durableConfig(dir))
	waitFor(t, ioTimeout, func() error {
		if n := ts.srv.freer.freed.Load(); n != 1 {
			return fmt.Errorf("%d releases of free memory after a recovery, want 1", n)
		}
		return nil
	})
}

// A failed fsync of the log is fatal: the write is not acknowledged (its
// connection closes), Failed closes and Err says why, so that zoo server
// can stop instead of serving on a log it cannot trust.
// Ref: STYLE pattern 12 (a failed fsync is fatal, never retried).
func TestLogSyncFailureIsFatal(t *testing.T) {
	var armed atomic.Bool
	inj := errorfs.InjectorFunc(func(op errorfs.Op) error {
		if armed.Load() && op.Kind == errorfs.OpFileSync {
			return errorfs.ErrInjected
		}
		return nil
	})
	ts := startServer(t, func(c *Config) {
		c.DataDir = "/data"
		c.FS = errorfs.Wrap(vfs.NewMem(), inj)
	})
	c := newSession(t, ts.addr)
	c.create("/before", nil, 0)
	armed.Store(true)
	c.send(jute.OpCreate, createReq("/after", nil, 0))
	c.expectClosed()
	select {
	case <-ts.srv.Failed():
	case <-time.After(ioTimeout):
		t.Fatal("Failed not closed after a log fsync error")
	}
	if err := ts.srv.Err(); !errors.Is(err, errorfs.ErrInjected) {
		t.Fatalf("Err() = %v; want the injected fsync error", err)
	}
}

// Apache's fsync.warningthresholdms: a log write whose fsync takes longer
// is logged, with what it cost, and counted for the admin server's
// fsync_threshold_exceed_count; one within it is neither.
func TestSlowFsyncIsWarnedAndCounted(t *testing.T) {
	var slow atomic.Bool
	inj := errorfs.InjectorFunc(func(op errorfs.Op) error {
		if slow.Load() && op.Kind == errorfs.OpFileSync {
			time.Sleep(40 * time.Millisecond) // the injected latency itself
		}
		return nil
	})
	logs := &syncBuffer{}
	ts := startServer(t, func(c *Config) {
		c.DataDir = "/data"
		c.FS = errorfs.Wrap(vfs.NewMem(), inj)
		c.FsyncWarningThreshold = 20 * time.Millisecond
		c.Logger = slog.New(slog.NewTextHandler(logs, nil))
	})
	c := newSession(t, ts.addr)
	c.create("/fast", nil, 0)
	if n := (source{ts.srv}).Stats().SlowFsyncs; n != 0 {
		t.Fatalf("%d slow fsyncs counted before any fsync was slow", n)
	}
	slow.Store(true)
	c.create("/slow", nil, 0)
	slow.Store(false)
	if n := (source{ts.srv}).Stats().SlowFsyncs; n < 1 {
		t.Fatalf("%d slow fsyncs counted after a 40 ms fsync over a 20 ms threshold", n)
	}
	if !strings.Contains(logs.String(), "fsync.warningthresholdms") {
		t.Errorf("no warning of the slow fsync in the log:\n%s", logs.String())
	}
}
