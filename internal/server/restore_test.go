package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/zoohq/zoo/internal/apache"
	"github.com/zoohq/zoo/internal/txn"
	"github.com/zoohq/zoo/zk"
)

// connectZK connects a go client to addrs (comma-separated).
func connectZK(t *testing.T, addrs string) *zk.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), ioTimeout)
	defer cancel()
	c, err := zk.Connect(ctx, addrs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// digestOf returns a member's tree digest and last zxid.
func digestOf(ts *testServer) (digest uint64, zxid int64) {
	ts.srv.rep.Read(func(st *txn.State, z int64) { digest, zxid = apache.TreeDigest(st.Tree), z })
	return digest, zxid
}

// snapshot → change → restore on a standalone server: the data is back,
// the later changes are gone, clients reconnect, and the restore is in
// the log (a restart keeps it).
func TestRestoreStandalone(t *testing.T) {
	dir := t.TempDir()
	ts := startServer(t, func(c *Config) { c.DataDir = dir })
	ctx := context.Background()
	c := connectZK(t, ts.addr)
	mustCreate := func(p, d string) {
		t.Helper()
		if _, _, err := c.Create(ctx, p, []byte(d), zk.Persistent, zk.OpenACLUnsafe()); err != nil {
			t.Fatal(err)
		}
	}
	mustCreate("/app", "v1")
	mustCreate("/app/a", "a1")
	var snap bytes.Buffer
	if _, err := ts.srv.WriteApacheSnapshot(&snap); err != nil {
		t.Fatal(err)
	}
	before, _ := digestOf(ts)

	if _, err := c.Set(ctx, "/app", []byte("v2"), -1); err != nil {
		t.Fatal(err)
	}
	mustCreate("/later", "x")
	if err := c.Delete(ctx, "/app/a", -1); err != nil {
		t.Fatal(err)
	}

	zxid, err := ts.srv.Restore(ctx, bytes.NewReader(snap.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	after, last := digestOf(ts)
	if after != before || zxid != last {
		t.Errorf("digest %x after restore, %x at the snapshot; zxid %d, last %d", after, before, zxid, last)
	}
	// The client was disconnected; it reconnects with its session (the
	// snapshot holds it) and reads the restored data.
	waitFor(t, ioTimeout, func() error {
		d, _, err := c.Get(ctx, "/app")
		if err != nil {
			return err
		}
		if string(d) != "v1" {
			return fmt.Errorf("/app is %q", d)
		}
		return nil
	})
	if d, _, err := c.Get(ctx, "/app/a"); err != nil || string(d) != "a1" {
		t.Errorf("/app/a: %q %v", d, err)
	}
	if ok, _, err := c.Exists(ctx, "/later"); ok || err != nil {
		t.Errorf("/later exists %v (%v)", ok, err)
	}
	// The restore is durable: a restart replays it.
	if err := ts.shutdown(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	ts2 := startServer(t, func(c *Config) { c.DataDir = dir })
	if d, _ := digestOf(ts2); d != before {
		t.Errorf("after a restart the digest is %x, want %x", d, before)
	}
}

// A body that is not a snapshot is refused and changes nothing.
func TestRestoreGarbage(t *testing.T) {
	ts := startServer(t, nil)
	c := connectZK(t, ts.addr)
	if _, _, err := c.Create(context.Background(), "/keep", []byte("k"), zk.Persistent, zk.OpenACLUnsafe()); err != nil {
		t.Fatal(err)
	}
	before, z0 := digestOf(ts)
	var snap bytes.Buffer
	if _, err := ts.srv.WriteApacheSnapshot(&snap); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string][]byte{
		"empty":     nil,
		"text":      []byte("hello, this is not a snapshot\n"),
		"truncated": snap.Bytes()[:snap.Len()/2],
		"bad crc":   append(bytes.Clone(snap.Bytes()[:snap.Len()-12]), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12),
		"gzip junk": {0x1f, 0x8b, 0, 0},
	} {
		_, err := ts.srv.Restore(context.Background(), bytes.NewReader(body))
		if !errors.Is(err, ErrBadSnapshot) {
			t.Errorf("%s: %v, want ErrBadSnapshot", name, err)
		}
	}
	if after, z := digestOf(ts); after != before || z != z0 {
		t.Errorf("a refused restore changed the state: digest %x→%x, zxid %d→%d", before, after, z0, z)
	}
}

// On an ensemble the restore goes through the log: every member ends
// with the same tree, whichever member was asked.
func TestRestoreEnsemble(t *testing.T) {
	ms := startMembers(t, 3, 0, "")
	var addrs []string
	for _, ts := range ms {
		addrs = append(addrs, ts.addr)
	}
	var follower *testServer
	waitFor(t, 20*time.Second, func() error {
		follower = nil
		for _, ts := range ms {
			switch m := modeOf(ts.addr); m {
			case "follower":
				follower = ts
			case "leader":
			default:
				return fmt.Errorf("mode %q", m)
			}
		}
		if follower == nil {
			return errors.New("no follower yet")
		}
		return nil
	})
	ctx := context.Background()
	c := connectZK(t, strings.Join(addrs, ","))
	if _, _, err := c.Create(ctx, "/cfg", []byte("v1"), zk.Persistent, zk.OpenACLUnsafe()); err != nil {
		t.Fatal(err)
	}
	if err := c.Sync(ctx, "/cfg"); err != nil {
		t.Fatal(err)
	}
	var snap bytes.Buffer
	// A member's snapshot once it has applied the create.
	waitFor(t, ioTimeout, func() error {
		snap.Reset()
		if _, err := follower.srv.WriteApacheSnapshot(&snap); err != nil {
			return err
		}
		if !bytes.Contains(snap.Bytes(), []byte("/cfg")) {
			return errors.New("the follower has not applied /cfg yet")
		}
		return nil
	})
	if _, err := c.Set(ctx, "/cfg", []byte("v2"), -1); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Create(ctx, "/later", nil, zk.Persistent, zk.OpenACLUnsafe()); err != nil {
		t.Fatal(err)
	}
	// Asked of a follower: the restore is forwarded to the leader.
	zxid, err := follower.srv.Restore(ctx, bytes.NewReader(snap.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	var want uint64
	for id, ts := range ms {
		waitFor(t, ioTimeout, func() error {
			if _, z := digestOf(ts); z < zxid {
				return fmt.Errorf("member %d at zxid %d, restore at %d", id, z, zxid)
			}
			return nil
		})
		d, _ := digestOf(ts)
		if want == 0 {
			want = d
		} else if d != want {
			t.Errorf("member %d digest %x, another's %x", id, d, want)
		}
		var data []byte
		var later bool
		ts.srv.rep.Read(func(st *txn.State, _ int64) {
			data, _, _ = st.Tree.Get("/cfg")
			_, later = st.Tree.Lookup("/later")
		})
		if string(data) != "v1" || later {
			t.Errorf("member %d: /cfg %q, /later there %v", id, data, later)
		}
	}
	// The membership is the ensemble's still, and it serves writes.
	waitFor(t, 20*time.Second, func() error {
		_, err := c.Set(ctx, "/cfg", []byte("v3"), -1)
		return err
	})
}

// A restore larger than a log segment is written, and replayed after a
// restart, like any entry.
func TestRestoreLarge(t *testing.T) {
	dir := t.TempDir()
	edit := func(c *Config) { c.DataDir, c.PreAllocSize = dir, 1<<20 }
	ts := startServer(t, edit)
	ctx := context.Background()
	c := connectZK(t, ts.addr)
	big := bytes.Repeat([]byte("z"), 1<<20-64)
	for i := range 4 {
		if _, _, err := c.Create(ctx, fmt.Sprintf("/n%02d", i), big, zk.Persistent, zk.OpenACLUnsafe()); err != nil {
			t.Fatal(err)
		}
	}
	var snap bytes.Buffer
	if _, err := ts.srv.WriteApacheSnapshot(&snap); err != nil {
		t.Fatal(err)
	}
	want, _ := digestOf(ts)
	for i := range 4 {
		if err := c.Delete(ctx, fmt.Sprintf("/n%02d", i), -1); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ts.srv.Restore(ctx, &snap); err != nil {
		t.Fatal(err)
	}
	if err := ts.shutdown(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	ts2 := startServer(t, edit)
	if d, _ := digestOf(ts2); d != want {
		t.Errorf("after a restart the digest is %x, want %x", d, want)
	}
}
