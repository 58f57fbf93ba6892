package replica

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/internal/txn"
	"github.com/zoohq/zoo/internal/vfs"
	"github.com/zoohq/zoo/internal/vfs/errorfs"
)

// commitGate holds a member's WAL writes once armed and the next fsync of
// its log is over: the write after an entry's, which holds only the commit
// index that the entry's commit moved, waits until open.
type commitGate struct {
	armed, holding atomic.Bool
	open           chan struct{}
	once           sync.Once
}

func (g *commitGate) MaybeError(op errorfs.Op) error {
	if !strings.Contains(op.Path, ".wal") || !g.armed.Load() {
		return nil
	}
	switch op.Kind {
	case errorfs.OpFileSync:
		g.holding.Store(true) // the entry is durable; hold what follows
	case errorfs.OpFileWrite:
		if g.holding.Load() {
			<-g.open
		}
	}
	return nil
}

func (g *commitGate) release() { g.once.Do(func() { close(g.open) }) }

// leaderAndSettledFollower returns the leader of ms and one follower,
// with the other followers cut off and the follower caught up: it has
// applied a write made through it, so it has written every entry before
// (raft hands over only entries it knows to be durable here) and taken
// every such write back on its loop.
func leaderAndSettledFollower(t *testing.T, net *network, ms []*member) (lead, f *member) {
	t.Helper()
	lead = leader(t, ms)
	f = follower(t, ms)
	for _, m := range ms {
		if m != lead && m != f {
			net.isolate(m.r.ID(), true)
		}
	}
	if err := f.r.Submit(context.Background(), create("/settled"), 8); err != nil {
		t.Fatal(err)
	}
	if ev := f.await(t, 8); ev.Kind != Applied || ev.Result.Err != jute.OK {
		t.Fatalf("write through the follower: %v %+v", ev.Kind, ev.Result)
	}
	return lead, f
}

// requireRecovered checks that the state recovered from a crash copy of
// fs (only what was synced survives) is want: every write answered.
func requireRecovered(t *testing.T, fs *vfs.MemFS, want view) {
	t.Helper()
	got, zxid, err := Recover(Config{FS: fs.CrashClone(), Dir: logDir, SnapDir: snapDir, SegmentSize: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	if zxid != want.Zxid || got.Tree.NodeCount() != want.Nodes || got.Tree.Digest() != want.Digest {
		t.Fatalf("recovered after a crash: zxid %d, %d nodes; answered: zxid %d, %d nodes",
			zxid, got.Tree.NodeCount(), want.Zxid, want.Nodes)
	}
}

// memberView is what m's replica has applied, as durable's view.
func memberView(m *member) view {
	var v view
	m.r.Read(func(s *txn.State, zxid int64) {
		v = view{Digest: s.Tree.Digest(), Nodes: s.Tree.NodeCount(), Zxid: zxid}
	})
	return v
}

// In an ensemble the commit index is written lazily, without an fsync of
// its own (wal's LazyCommit), so a member applies and answers a committed
// write without waiting for that write: here it is held for good on the
// follower that took the write, and the write is answered all the same.
// (A one-voter group still waits: its commit index is its own say.)
func TestEnsembleAppliesWithoutWaitingForTheCommitWrite(t *testing.T) {
	gates := map[uint64]*commitGate{}
	net, ms := startEnsemble(t, 3, func(c *Config) {
		g := &commitGate{open: make(chan struct{})}
		gates[c.ID] = g
		c.FS = errorfs.Wrap(vfs.NewMem(), g)
		c.Dir, c.SnapDir = logDir, snapDir
		c.SegmentSize = 64 << 10
	})
	t.Cleanup(func() { // before the members stop (cleanups run last first)
		for _, g := range gates {
			g.release()
		}
	})
	// The other follower is cut off, so that the write commits only once
	// f has it durable, and f's commit index moves in a write of its own.
	// f has caught up first: otherwise the fsync that arms the gate could
	// be that of an entry f was still catching up on, and the gate would
	// hold the write's own entry.
	_, f := leaderAndSettledFollower(t, net, ms)
	gates[f.r.ID()].armed.Store(true)
	if err := f.r.Submit(context.Background(), create("/lazy"), 9); err != nil {
		t.Fatal(err)
	}
	if ev := f.await(t, 9); ev.Kind != Applied || ev.Result.Err != jute.OK {
		t.Fatalf("write on a follower, its commit index's write held: %v %+v, want applied", ev.Kind, ev.Result)
	}
	if !gates[f.r.ID()].holding.Load() {
		t.Fatal("the follower's entry was never synced")
	}
}

// A one-voter group writes a write's commit index with its entry, so the
// write is durable and answered after one fsync of the log, not two: at
// one client, two fsyncs in series were most of a write's latency.
func TestSoleVoterWriteIsOneFsync(t *testing.T) {
	var syncs atomic.Int64
	count := errorfs.InjectorFunc(func(op errorfs.Op) error {
		if op.Kind == errorfs.OpFileSync && strings.Contains(op.Path, ".wal") {
			syncs.Add(1)
		}
		return nil
	})
	mem := vfs.NewMem()
	fs := errorfs.Wrap(mem, count)
	d := startDurable(t, fs, 1000)
	d.write(t, createSession())
	for i := range 3 {
		syncs.Store(0)
		d.write(t, create(fmt.Sprintf("/one%d", i)))
		if n := syncs.Load(); n != 1 {
			t.Errorf("write %d: %d fsyncs of the log before it was answered; want 1", i, n)
		}
	}
	// The commit index was durable with the entries: after a crash (only
	// what was fsynced survives), the state a server starts with, before
	// any election, holds every write answered.
	requireRecovered(t, mem, d.view())
}

// A voter alone with an observer (or an ensemble reconfigured down to one
// voter) still writes a write's commit index with its entry: whatever the
// number of members, a sole voter's commit index is its own say, so it
// must be durable before the write is answered. The log here was opened
// for an ensemble (its commit-only writes lazy): after a crash, the state
// the voter starts with holds every write it answered.
func TestSoleVoterWithALearnerKeepsItsCommitDurable(t *testing.T) {
	mem := vfs.NewMem()
	_, ms := startGroup(t, 1, 1, func(c *Config) {
		if c.ID == 1 {
			c.FS = mem
			c.Dir, c.SnapDir = logDir, snapDir
			c.SegmentSize = 64 << 10
		}
	})
	voter := ms[0]
	for i := range 3 {
		if err := voter.r.Submit(context.Background(), create(fmt.Sprintf("/kept%d", i)), uint64(10+i)); err != nil {
			t.Fatal(err)
		}
		if ev := voter.await(t, uint64(10+i)); ev.Kind != Applied || ev.Result.Err != jute.OK {
			t.Fatalf("write %d: %v %+v", i, ev.Kind, ev.Result)
		}
	}
	requireRecovered(t, mem, memberView(voter))
}

// An ensemble reconfigured down to one voter (standaloneEnabled=false
// allows it) switches to the sole voter's rule where the change applies:
// its zoo.cfg listed three, but from then on its commit index is its own
// say and is durable before a write is answered. After a crash, the state
// it starts with holds every write it answered after the change.
func TestEnsembleShrunkToOneVoterKeepsItsCommitDurable(t *testing.T) {
	disks := map[uint64]*vfs.MemFS{}
	n, ms := newGroup(t, 3, 0, func(c *Config) {
		disks[c.ID] = vfs.NewMem()
		c.FS = disks[c.ID]
		c.Dir, c.SnapDir = logDir, snapDir
		c.SegmentSize = 64 << 10
	})
	for _, m := range ms {
		m.reconfig = true
	}
	runGroup(t, n, ms)
	lead := leader(t, ms)
	var leaving []string
	for _, m := range ms {
		if m != lead {
			leaving = append(leaving, fmt.Sprint(m.r.ID()))
		}
	}
	super := []jute.Id{{Scheme: "super"}}
	req := txn.Request{SessionID: session, Op: jute.OpReconfig, Auth: super,
		Record: &jute.ReconfigRequest{LeavingServers: strings.Join(leaving, ","), CurConfigID: -1}}
	if err := lead.r.Submit(context.Background(), req, 5); err != nil {
		t.Fatal(err)
	}
	if ev := lead.await(t, 5); ev.Kind != Applied || ev.Result.Err != jute.OK {
		t.Fatalf("reconfig leaving %v: %v %+v", leaving, ev.Kind, ev.Result)
	}
	// The leader alone votes once joint consensus has been left; it
	// proposes that step itself, right after the change applies.
	waitFor(t, fmt.Sprintf("membership with %d the only voter", lead.r.ID()), func() bool {
		return slices.Equal(lead.r.Voters(), []uint64{lead.r.ID()})
	})
	for i := range 3 {
		if err := lead.r.Submit(context.Background(), create(fmt.Sprintf("/alone%d", i)), uint64(10+i)); err != nil {
			t.Fatal(err)
		}
		if ev := lead.await(t, uint64(10+i)); ev.Kind != Applied || ev.Result.Err != jute.OK {
			t.Fatalf("write %d with one voter: %v %+v", i, ev.Kind, ev.Result)
		}
	}
	requireRecovered(t, disks[lead.r.ID()], memberView(lead))
}
