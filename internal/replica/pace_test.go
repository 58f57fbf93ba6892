package replica

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/internal/txn"
	"github.com/zoohq/zoo/internal/vfs"
)

func TestSnapDue(t *testing.T) {
	rule := snapRule{count: 100, ratio: 0.5, sizeLimit: 1 << 20}
	tests := []struct {
		name string
		rule snapRule
		p    snapProgress
		want bool
	}{
		{"too few entries", rule, snapProgress{entries: 99, logBytes: 1 << 19, lastSnap: 100}, false},
		{"no snapshot yet: count alone", rule, snapProgress{entries: 100, logBytes: 1}, true},
		{"count reached, log short of half the snapshot", rule, snapProgress{entries: 5000, logBytes: 499, lastSnap: 1000}, false},
		{"count reached, log at half the snapshot", rule, snapProgress{entries: 100, logBytes: 500, lastSnap: 1000}, true},
		{"log past the size limit, few entries", rule, snapProgress{entries: 1, logBytes: 1 << 20, lastSnap: 1 << 30}, true},
		{"log just below the size limit", rule, snapProgress{entries: 1000, logBytes: 1<<20 - 1, lastSnap: 1 << 30}, false},
		{"pacing off", snapRule{count: 100}, snapProgress{entries: 100, lastSnap: 1 << 30}, true},
		{"no size limit", snapRule{count: 100, ratio: 1}, snapProgress{entries: 99, logBytes: 1 << 40, lastSnap: 1}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := snapDue(tt.rule, tt.p); got != tt.want {
				t.Errorf("snapDue(%+v, %+v) = %v, want %v", tt.rule, tt.p, got, tt.want)
			}
		})
	}
}

// A snapshot's bytes per byte of log stay at most 1/ratio however large
// the tree: the number of entries between snapshots grows with the
// snapshot, where count alone would snapshot every snapCount entries.
func TestSnapDueGrowsWithTheSnapshot(t *testing.T) {
	rule := snapRule{count: 1000, ratio: 0.5}
	const entryBytes = 100
	for _, snapBytes := range []int64{10 << 10, 10 << 20, 1 << 30} {
		p := snapProgress{lastSnap: snapBytes}
		for !snapDue(rule, p) {
			p.entries++
			p.logBytes += entryBytes
		}
		want := max(rule.count, uint64(snapBytes/2/entryBytes))
		if p.entries < want || p.entries > want+1 {
			t.Errorf("snapshot of %d bytes: next due after %d entries, want %d", snapBytes, p.entries, want)
		}
		if ratio := float64(snapBytes) / float64(p.logBytes); ratio > 2 {
			t.Errorf("snapshot of %d bytes: %.1f snapshot bytes per log byte, want at most 2", snapBytes, ratio)
		}
	}
}

func TestRollSnapRule(t *testing.T) {
	for _, r := range []struct {
		name string
		rand func(int) int
	}{
		{"lowest", func(int) int { return 0 }},
		{"highest", func(n int) int { return n - 1 }},
	} {
		rule := rollSnapRule(100000, 0.5, 4<<30, r.rand)
		if rule.count <= 50000 || rule.count > 100000 {
			t.Errorf("%s: count %d, want in (50000, 100000]", r.name, rule.count)
		}
		if rule.sizeLimit <= 2<<30 || rule.sizeLimit > 4<<30 {
			t.Errorf("%s: size limit %d, want in (2 GiB, 4 GiB]", r.name, rule.sizeLimit)
		}
		if rule.ratio != 0.5 {
			t.Errorf("%s: ratio %v, want 0.5", r.name, rule.ratio)
		}
	}
	if rule := rollSnapRule(2, 0, 0, func(int) int { return 0 }); rule.count != 2 || rule.sizeLimit != 0 {
		t.Errorf("snapCount 2, no limit: %+v, want count 2, no size limit", rule)
	}
}

// Ref: issue 17: snapshots are paced by size. Once the tree is large,
// small writes no longer start a snapshot every snapCount entries but
// once the log since the last snapshot holds half its size; snapshots are
// still taken, and the log before them is still released.
//
// The replica is a core stepped by the test (NewCore), which takes each
// snapshot at once, where the loop decides it: how many a write started
// is known when it returns. (A running replica writes them in the
// background, and a snapshot still being written holds the next back, so
// counting them raced the writes.)
func TestSnapshotsPacedBySize(t *testing.T) {
	fs := vfs.NewMem()
	var sizes []int64
	c := startStepped(t, fs, 10, func(c *Config) {
		// The log keeps TrailingEntries behind a snapshot, on disk: few
		// here, so that segments behind the snapshots can go.
		c.TrailingEntries = 10
		c.OnSnapshot = func(_ time.Duration, size int64) { sizes = append(sizes, size) }
	})
	// A tree of ~200 KB: its snapshots are far larger than 10 entries of
	// the small writes below.
	reqs := []txn.Request{createSession(), create("/s")}
	for i := range 100 {
		reqs = append(reqs, txn.Request{SessionID: session, Op: jute.OpCreate,
			Record: &jute.CreateRequest{Path: fmt.Sprintf("/big%d", i), Data: make([]byte, 2000), ACL: open}})
	}
	c.write(t, reqs...)
	// More big nodes, one at a time, until a snapshot holds more than
	// 150 KB.
	for i := 100; len(sizes) == 0 || sizes[len(sizes)-1] <= 150_000; i++ {
		if i == 200 {
			t.Fatalf("no snapshot over 150 KB after %d nodes of 2 KB: %v", i, sizes)
		}
		c.write(t, txn.Request{SessionID: session, Op: jute.OpCreate,
			Record: &jute.CreateRequest{Path: fmt.Sprintf("/big%d", i), Data: make([]byte, 2000), ACL: open}})
	}
	before := len(sizes)

	// 600 writes of 500 bytes, ~300 KB of log, in batches of 10. By count
	// alone (every 6 to 10 entries) that is 60 snapshots or more; paced,
	// one per ~100 KB of log.
	const writes, size, batch = 600, 500, 10
	sets := make([]txn.Request, batch)
	for i := range sets {
		sets[i] = txn.Request{SessionID: session, Op: jute.OpSetData,
			Record: &jute.SetDataRequest{Path: "/s", Data: make([]byte, size), Version: -1}}
	}
	for range writes / batch {
		c.write(t, sets...)
	}
	if n := len(sizes) - before; n < 2 || n > 4 {
		t.Errorf("%d snapshots of ~%d bytes during %d bytes of log; want 2 to 4 (one per half a snapshot of log)",
			n, sizes[len(sizes)-1], writes*size)
	}
	// Old segments (64 KiB each) are released behind the snapshots.
	names, err := fs.List(logDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if strings.HasPrefix(name, "0000000000000000-") {
			t.Errorf("the log's first segment %s is still there after %d snapshots; want it released", name, len(sizes))
		}
	}
	// And the state survives a restart from a paced snapshot.
	want := c.view()
	c.r.Close()
	d := startDurable(t, fs, 10)
	if got := d.recovered(t); got != want {
		t.Fatalf("after restart %+v; want %+v", got, want)
	}
}

// stepped is a one-voter replica over a file system that the test steps
// itself (NewCore): each write is applied, and whatever snapshot it makes
// due is written, before write returns.
type stepped struct {
	r      *Replica
	events []Event
}

func startStepped(t *testing.T, fs vfs.FS, snapCount int, opts ...func(*Config)) *stepped {
	t.Helper()
	c := &stepped{}
	r, err := NewCore(durableConfig(fs, snapCount, func(ev Event) { c.events = append(c.events, ev) }, opts))
	if err != nil {
		t.Fatal(err)
	}
	c.r = r
	t.Cleanup(r.Close)
	if err := r.Start(); err != nil {
		t.Fatal(err)
	}
	if err := r.Process(); err != nil {
		t.Fatal(err)
	}
	if !r.IsLeader() {
		t.Fatal("a sole voter does not lead once started")
	}
	return c
}

// write proposes reqs with tags from 1 and processes until each is
// applied, i.e. acknowledged.
func (c *stepped) write(t *testing.T, reqs ...txn.Request) {
	t.Helper()
	c.events = c.events[:0]
	for i, req := range reqs {
		if err := c.r.Propose(req, uint64(i+1)); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.r.Process(); err != nil {
		t.Fatal(err)
	}
	if len(c.events) != len(reqs) {
		t.Fatalf("%d events for %d requests: %+v", len(c.events), len(reqs), c.events)
	}
	for i, ev := range c.events {
		if ev.Kind != Applied || ev.Tag != uint64(i+1) || ev.Result.Err != jute.OK {
			t.Fatalf("request %d: event %v tag %d result %+v", i+1, ev.Kind, ev.Tag, ev.Result)
		}
	}
}

func (c *stepped) view() view {
	var v view
	c.r.Read(func(s *txn.State, zxid int64) {
		v = view{Digest: s.Tree.Digest(), Nodes: s.Tree.NodeCount(), Sessions: len(s.Sessions), Zxid: zxid}
	})
	return v
}
