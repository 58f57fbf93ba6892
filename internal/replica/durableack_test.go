package replica

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/internal/vfs"
)

// A follower acknowledges the leader's entries from its log writer, as
// soon as they are durable, not once its loop has taken the write back:
// that hand-over was 0.1–0.3 ms of a write's latency on busy cores. Here
// the follower's loop is held before it takes back the write of a
// client's entry, the other follower is cut off, and the leader still
// commits and answers the write: only that ack can have committed it.
func TestFollowerAcksFromItsLogWriter(t *testing.T) {
	var held atomic.Uint64 // the member whose loop is held; 0: none
	hold := make(chan struct{})
	var release sync.Once
	testHookAppendResult = func(r *Replica, m *raftpb.Message) {
		if r.ID() != held.Load() {
			return
		}
		for _, e := range m.Entries {
			if len(e.Data) > 0 {
				<-hold
				return
			}
		}
	}
	t.Cleanup(func() { testHookAppendResult = nil }) // after the members stop
	net, ms := startEnsemble(t, 3, func(c *Config) {
		c.FS = vfs.NewMem()
		c.Dir, c.SnapDir = logDir, snapDir
		c.SegmentSize = 64 << 10
	})
	t.Cleanup(func() { release.Do(func() { close(hold) }) }) // before they stop
	lead, f := leaderAndSettledFollower(t, net, ms)
	held.Store(f.r.ID())
	if err := lead.r.Submit(context.Background(), create("/acked"), 9); err != nil {
		t.Fatal(err)
	}
	if ev := lead.await(t, 9); ev.Kind != Applied || ev.Result.Err != jute.OK {
		t.Fatalf("write with the only reachable follower's loop held: %v %+v, want applied", ev.Kind, ev.Result)
	}
}
