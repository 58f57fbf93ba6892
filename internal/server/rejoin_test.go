package server

import (
	"context"
	"fmt"
	"maps"
	"net"
	"testing"
	"time"

	"github.com/zoohq/zoo/zk"
)

// A member restarted with a log older than the reconfigs that added the
// current leader catches up with it. Server f stops; servers 4 and 5 are
// added and the other two original servers removed, so the ensemble is
// {f, 4, 5} and its leader is 4 or 5, which f's log (membership {1,2,3})
// does not name. f restarts from its data directory with its zoo.cfg: it
// must take the leader's link (its log is not empty), follow, and serve
// what was written while it was down. (Simulator seeds 101523 and
// 106795 found this: f refused the leader as an unknown peer for good.)
func TestReconfigRestartedMemberCatchesUpWithAnUnknownLeader(t *testing.T) {
	dirs := map[int64]string{}
	durable := func(c *Config) {
		c.ReconfigEnabled = true
		c.SuperDigest = superDigest
		if dirs[c.ServerID] == "" {
			dirs[c.ServerID] = t.TempDir()
		}
		c.DataDir = dirs[c.ServerID]
		c.DataLogDir = c.DataDir
		c.PreAllocSize = 1 << 20
	}
	ms := startMembers(t, 3, 0, "", durable)
	lead := leaderOf(t, ms)
	f := followerOf(ms, lead)
	// f has applied writes past its bootstrap, as a member that served
	// has (one stopped before that is admitted too: it restarts from a
	// log; TestRegressions' seed 111040 covers it).
	waitFor(t, 30*time.Second, func() error {
		if !ms[f].srv.rep.Established() {
			return fmt.Errorf("server %d has applied nothing past its bootstrap", f)
		}
		return nil
	})
	fEnsemble := ms[f].srv.cfg.Ensemble
	quorumAddr := fEnsemble.Listener.Addr().String()
	if err := ms[f].shutdown(10 * time.Second); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var alive []string
	for id, ts := range ms {
		if id != f {
			alive = append(alive, ts.addr)
		}
	}
	su, err := zk.Connect(ctx, alive[0], zk.WithSessionTimeout(4*time.Second), zk.WithAuth("digest", []byte("super:test")))
	if err != nil {
		t.Fatal(err)
	}
	defer su.Close()
	data, _, err := su.Get(ctx, "/zookeeper/config")
	if err != nil {
		t.Fatal(err)
	}

	// Add 4 and 5: as observers first, which need no quorum, then, once
	// they follow, as participants (a quorum of the new configuration
	// must be synced, and f is down).
	peers := maps.Clone(fEnsemble.Peers)
	peers[uint64(f)] = quorumAddr
	newcomers := map[uint64]*testServer{}
	spec := func(role string) string {
		var specs []string
		for _, id := range []uint64{4, 5} {
			e := newcomers[id].srv.cfg.Ensemble
			specs = append(specs, fmt.Sprintf("server.%d=%s:%d:%s;%s", id, e.Listener.Addr(), id, role, newcomers[id].addr))
		}
		return specs[0] + "," + specs[1]
	}
	for _, id := range []uint64{4, 5} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		e := Ensemble{Voters: []uint64{1, 2, 3}, Learners: []uint64{id}, Peers: maps.Clone(peers), Listener: ln, Membership: string(data)}
		newcomers[id] = startMember(t, id, e, durable)
	}
	if _, _, err := su.Reconfig(ctx, spec("observer"), "", "", -1); err != nil {
		t.Fatalf("reconfig adding observers 4 and 5: %v", err)
	}
	waitFor(t, 30*time.Second, func() error {
		for _, id := range []uint64{4, 5} {
			if m := modeOf(newcomers[id].addr); m != "observer" {
				return fmt.Errorf("server %d says %q", id, m)
			}
		}
		return nil
	})
	if _, err := reconfigOnceSynced(t, ctx, su, spec("participant"), "", ""); err != nil {
		t.Fatalf("reconfig promoting 4 and 5: %v", err)
	}
	// Remove the two original servers that stayed up: {f, 4, 5} is left,
	// and 4 and 5 are a quorum of it.
	var gone []string
	for id := range ms {
		if id != f {
			gone = append(gone, fmt.Sprint(id))
		}
	}
	waitFor(t, 30*time.Second, func() error {
		if m := modeOf(newcomers[4].addr); m != "follower" && m != "leader" {
			return fmt.Errorf("server 4 says %q", m)
		}
		return nil
	})
	su2, err := zk.Connect(ctx, newcomers[4].addr, zk.WithSessionTimeout(4*time.Second), zk.WithAuth("digest", []byte("super:test")))
	if err != nil {
		t.Fatal(err)
	}
	defer su2.Close()
	// The promotion's joint configuration may not be left yet: raft
	// leaves it with one more entry after the reconfig is answered.
	if _, err := reconfigOnceSynced(t, ctx, su2, "", gone[0]+","+gone[1], ""); err != nil {
		t.Fatalf("reconfig removing %v: %v", gone, err)
	}
	// The removed leader steps down once the joint configuration is
	// left, which needs the removed servers: stop them only then.
	waitFor(t, 30*time.Second, func() error {
		for _, id := range []uint64{4, 5} {
			if v := newcomers[id].srv.rep.Voters(); len(v) != 3 {
				return fmt.Errorf("server %d: voters %v: the joint configuration is not left yet", id, v)
			}
		}
		if modeOf(newcomers[4].addr) != "leader" && modeOf(newcomers[5].addr) != "leader" {
			return fmt.Errorf("no leader among 4 and 5")
		}
		return nil
	})
	for id, ts := range ms {
		if id != f {
			if err := ts.shutdown(10 * time.Second); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i := range 20 {
		if _, _, err := su2.Create(ctx, fmt.Sprintf("/while-f-was-down-%d", i), nil, zk.Persistent, zk.OpenACLUnsafe()); err != nil {
			t.Fatal(err)
		}
	}

	// f comes back on its quorum address, with its zoo.cfg's ensemble.
	ln, err := net.Listen("tcp", quorumAddr)
	if err != nil {
		t.Fatal(err)
	}
	fEnsemble.Listener = ln
	back := startMember(t, uint64(f), fEnsemble, durable)
	followerHas(t, ctx, back.addr, "/while-f-was-down-19")
}

// followerHas waits until the server at addr says it follows, then reads
// path there after a sync: the server caught up with its leader.
func followerHas(t *testing.T, ctx context.Context, addr, path string) {
	t.Helper()
	waitFollowing(t, addr, 30*time.Second)
	c, err := zk.Connect(ctx, addr, zk.WithSessionTimeout(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Sync(ctx, "/"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Get(ctx, path); err != nil {
		t.Fatalf("server %s after a sync: %s: %v", addr, path, err)
	}
}
