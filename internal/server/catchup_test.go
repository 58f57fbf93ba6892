package server

import (
	"fmt"
	"testing"
	"time"

	gozk "github.com/go-zookeeper/zk"

	"github.com/zoohq/zoo/internal/zktest"
)

// Ref: issue 17 (a loaded follower catches up without losing a client
// connection): a follower that must install its leader's snapshot keeps
// its clients. A go-zookeeper client on it keeps its session and its one
// connection, gets the watch events of the changes the snapshot skipped
// (as setWatches after a reconnect would give them), keeps the watches
// nothing touched, and reads the new state.
//
// The follower is cut off from the others for a moment while the leader
// writes and snapshots; the leader keeps no entries for it beyond one
// (commitLogCount 1, no byte allowance), so it gets a snapshot when the
// link is back and it asks for entries the leader no longer has. A long tickTime keeps the cut-off follower from giving
// up on its clients meanwhile (it closes them after an election timeout
// without a leader, checked every half tick).
func TestFollowerInstallsSnapshotKeepingClients(t *testing.T) {
	ms, cut := startLinkedMembers(t, func(c *Config) {
		c.TickTime = 20 * time.Second
		c.SnapCount = 10
		c.CommitLogCount = 1
		c.CommitLogBytes = -1
	})
	f := ms[3]
	// Wait for a leader that leads (IsLeader: it has applied an entry of
	// its term), not just one elected: member 3 may know itself elected a
	// moment before it is ready, and a test that took it for a follower
	// then would cut off the leader.
	leader := func() *testServer {
		for _, m := range ms {
			if m.srv.rep.IsLeader() {
				return m
			}
		}
		return nil
	}
	waitFor(t, 60*time.Second, func() error {
		if leader() == nil {
			return fmt.Errorf("no member leads")
		}
		return nil
	})
	if leader() == f {
		// Member 3 must follow: cut it off until another leads.
		cut(true)
		waitFor(t, 60*time.Second, func() error {
			if l := leader(); l == nil || l == f {
				return fmt.Errorf("no leader among 1 and 2")
			}
			return nil
		})
		cut(false)
		waitIsro(t, f.addr, "rw")
		// Cut off, member 3 still took itself for the leader of its old
		// term: wait until it has heard of the new one.
		waitFor(t, 60*time.Second, func() error {
			if f.srv.rep.IsLeader() {
				return fmt.Errorf("member 3 still takes itself for the leader")
			}
			if l := leader(); l == nil {
				return fmt.Errorf("no member leads")
			}
			return nil
		})
	}
	lead := leader()
	if lead == nil || lead == f {
		t.Fatalf("member 3 leads or no member does, after waiting for 1 or 2 to")
	}

	var disconnects int
	a, sessEvents := dialGoZK(t, f.addr)
	b, _ := dialGoZK(t, lead.addr)
	for _, p := range []string{"/w", "/w/data", "/w/kids", "/w/del", "/w/same", "/f"} {
		if _, err := a.Create(p, []byte("v1"), 0, gozk.WorldACL(gozk.PermAll)); err != nil {
			t.Fatalf("create %s: %v", p, err)
		}
	}
	sid := a.SessionID()
	_, _, dataW, err := a.GetW("/w/data")
	mustOK(t, err)
	_, _, delW, err := a.GetW("/w/del")
	mustOK(t, err)
	_, _, sameW, err := a.GetW("/w/same")
	mustOK(t, err)
	_, _, kidsW, err := a.ChildrenW("/w/kids")
	mustOK(t, err)
	_, _, newW, err := a.ExistsW("/w/new")
	mustOK(t, err)

	installs, events := f.srv.catchup.installs.Load(), f.srv.catchup.events.Load()
	cut(true)
	// More writes, one at a time, than raft lets be in flight to a
	// follower (MaxInflightMsgs, 256): the rest waits in the leader's
	// log, which its snapshots compact meanwhile.
	const fill = 400
	for i := range fill {
		mustCreate(t, b, fmt.Sprintf("/f/n%03d", i))
	}
	// The changes the watches wait for come last: the follower, once
	// back, gets them inside the snapshot, never applied one by one.
	if _, err := b.Set("/w/data", []byte("v2"), -1); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, b, "/w/new")
	mustCreate(t, b, "/w/kids/k")
	mustOK(t, b.Delete("/w/del", -1))
	// And writes after them until the leader has finished a snapshot
	// started after them (two more than now: one may have been under way),
	// so that its newest snapshot holds them. Snapshots are paced by the
	// log's size, so how many writes that takes varies.
	snaps, after := lead.srv.metrics.snapCount.Value(), 0
	for ; lead.srv.metrics.snapCount.Value() < snaps+2; after++ {
		if after == 5000 {
			t.Fatalf("the leader took %d snapshots in 5000 writes; want 2", lead.srv.metrics.snapCount.Value()-snaps)
		}
		mustCreate(t, b, fmt.Sprintf("/f/after%04d", after))
	}
	cut(false)

	waitFor(t, 60*time.Second, func() error {
		if n := f.srv.catchup.installs.Load(); n == installs {
			return fmt.Errorf("member 3 installed no snapshot")
		}
		return nil
	})
	for _, w := range []struct {
		name string
		ch   <-chan gozk.Event
		want gozk.EventType
	}{
		{"data watch on /w/data", dataW, gozk.EventNodeDataChanged},
		{"data watch on /w/del", delW, gozk.EventNodeDeleted},
		{"child watch on /w/kids", kidsW, gozk.EventNodeChildrenChanged},
		{"exists watch on /w/new", newW, gozk.EventNodeCreated},
	} {
		select {
		case ev := <-w.ch:
			if ev.Type != w.want || ev.Err != nil {
				t.Errorf("%s: %v (err %v), want %v", w.name, ev.Type, ev.Err, w.want)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: no event within 30s", w.name)
		}
	}
	if n := f.srv.catchup.events.Load() - events; n != 4 {
		t.Errorf("the snapshot's install fired %d watch events, want 4: the test did not skip the changes", n)
	}
	// The new state is what the client reads (after a sync: the
	// follower may still be applying what followed the snapshot).
	if _, err := a.Sync("/f"); err != nil {
		t.Fatal(err)
	}
	if data, _, err := a.Get("/w/data"); err != nil || string(data) != "v2" {
		t.Errorf("get /w/data after the snapshot = %q, %v; want v2", data, err)
	}
	if kids, _, err := a.Children("/f"); err != nil || len(kids) != fill+after {
		t.Errorf("children of /f after the snapshot: %d, %v; want %d", len(kids), err, fill+after)
	}
	// The watch nothing touched is still set: a later change fires it.
	if _, err := b.Set("/w/same", []byte("v2"), -1); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-sameW:
		if ev.Type != gozk.EventNodeDataChanged {
			t.Errorf("data watch on /w/same: %v, want NodeDataChanged", ev.Type)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("data watch on /w/same: no event within 30s of its change")
	}
	if a.SessionID() != sid {
		t.Errorf("session changed: %#x -> %#x", sid, a.SessionID())
	}
	for {
		select {
		case ev := <-sessEvents:
			if ev.Type == gozk.EventSession && ev.State == gozk.StateDisconnected {
				disconnects++
			}
			continue
		default:
		}
		break
	}
	if disconnects > 0 {
		t.Errorf("the client on the follower was disconnected %d times", disconnects)
	}
}

// dialGoZK connects a go-zookeeper client to addr alone and waits for its
// session.
func dialGoZK(t *testing.T, addr string) (*gozk.Conn, <-chan gozk.Event) {
	t.Helper()
	log := zktest.NewLogger(t, "gozk: ") // before Close's cleanup: it stops after
	c, events, err := gozk.Connect([]string{addr}, 40*time.Second, gozk.WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	deadline := time.After(30 * time.Second)
	for {
		select {
		case ev := <-events:
			if ev.State == gozk.StateHasSession {
				return c, events
			}
		case <-deadline:
			t.Fatalf("no session with %s within 30s", addr)
		}
	}
}

func mustOK(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func mustCreate(t *testing.T, c *gozk.Conn, path string) {
	t.Helper()
	if _, err := c.Create(path, nil, 0, gozk.WorldACL(gozk.PermAll)); err != nil {
		t.Fatalf("create %s: %v", path, err)
	}
}
