package server

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zoohq/zoo/internal/member"
	"github.com/zoohq/zoo/zk"
)

// Ref: issue 13, defect 2; go-zookeeper v1.0.4 TestIntegration_Reconfig.
// A reconfig that removes the very server the client is connected to is
// answered, with the new membership, before that server lets the client
// go (Apache replies first): the client learns that its reconfig
// succeeded rather than seeing ConnectionLoss.
func TestReconfigRemovingTheClientsServerReplies(t *testing.T) {
	// "leader from a follower": the client sits on a follower and
	// removes the leader, as go-zookeeper's test does when server 1 leads.
	for _, target := range []string{"follower", "leader", "leader from a follower"} {
		t.Run(target, func(t *testing.T) {
			ms := startMembers(t, 3, 0, "", func(c *Config) {
				c.ReconfigEnabled = true
				c.SuperDigest = superDigest
			})
			lead := leaderOf(t, ms)
			var via uint64
			for id := range ms {
				if (target == "leader") == (id == lead) {
					via = id
				}
			}
			gone := via
			if target == "leader from a follower" {
				gone = lead
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			su := connectSuper(t, ctx, ms[via].addr, zk.WithSessionTimeout(4*time.Second))
			data, err := reconfigOnceSynced(t, ctx, su, "", fmt.Sprint(gone), "")
			if err != nil {
				t.Fatalf("reconfig removing server %d (%s) via server %d: %v", gone, target, via, err)
			}
			m, err := member.Parse(string(data))
			if err != nil {
				t.Fatalf("reply %q: %v", data, err)
			}
			if ids := m.Participants(); slices.Contains(ids, int64(gone)) || len(ids) != 2 {
				t.Fatalf("new participants %v; want the two others than %d", ids, gone)
			}
		})
	}
}

// Ref: issue 13, defect 2; go-zookeeper v1.0.4 TestIntegration_Reconfig,
// which failed when its client sat on the server it removed: its next
// request, a reconfig adding the server back, met a closed connection
// (or, when the server led, no leader yet anywhere). As in Apache, a
// removed server serves on as a non-voting follower, and a removed leader
// first hands leadership to a voter: the client's session carries on at
// the same server, reads and writes, with no reconnect.
func TestRemovedServerServesOn(t *testing.T) {
	for _, target := range []string{"follower", "leader"} {
		t.Run(target, func(t *testing.T) {
			ms := startMembers(t, 3, 0, "", func(c *Config) {
				c.ReconfigEnabled = true
				c.SuperDigest = superDigest
			})
			lead := leaderOf(t, ms)
			gone := lead
			if target == "follower" {
				gone = followerOf(ms, lead)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			var mu sync.Mutex
			var states []zk.State
			// Only the removed server: a reconnect could only be to it.
			su := connectSuper(t, ctx, ms[gone].addr, zk.WithStateCallback(func(s zk.State) {
				mu.Lock()
				states = append(states, s)
				mu.Unlock()
			}))
			config, _, err := su.Get(ctx, "/zookeeper/config")
			if err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			before := len(states)
			mu.Unlock()
			if _, err := reconfigOnceSynced(t, ctx, su, "", fmt.Sprint(gone), ""); err != nil {
				t.Fatalf("reconfig removing server %d, the client's: %v", gone, err)
			}

			// At once, on the same connection: a write and a read.
			call, stop := context.WithTimeout(ctx, 5*time.Second)
			defer stop()
			if _, _, err := su.Create(call, "/after-removal", []byte("x"), 0, zk.WorldACL(zk.PermAll)); err != nil {
				t.Fatalf("a write on removed server %d: %v", gone, err)
			}
			if data, _, err := su.Get(call, "/after-removal"); err != nil || string(data) != "x" {
				t.Fatalf("a read on removed server %d: %q, %v", gone, data, err)
			}
			if target == "leader" {
				// It hands leadership over, an election timeout later.
				waitFor(t, 10*time.Second, func() error {
					if lead := leaderOf(t, ms); lead == gone {
						return fmt.Errorf("removed server %d still leads", gone)
					}
					return nil
				})
				if _, _, err := su.Exists(call, "/after-removal"); err != nil {
					t.Fatalf("a read on removed server %d after the hand-over: %v", gone, err)
				}
			}
			// A removed leader hears of its successor's term with the
			// first message the new leader sends it.
			waitFor(t, 10*time.Second, func() error {
				if mode := modeOf(ms[gone].addr); mode != "follower" {
					return fmt.Errorf("removed server %d says it is a %q; want follower (Apache's non-voting follower)", gone, mode)
				}
				return nil
			})

			// Back to the full membership, from the same client.
			m, err := member.Parse(string(config))
			if err != nil {
				t.Fatal(err)
			}
			var all []string
			for _, sv := range m.Servers {
				all = append(all, fmt.Sprintf("server.%d=%s", sv.ID, sv))
			}
			data, err := reconfigOnceSynced(t, ctx, su, "", "", strings.Join(all, ","))
			if err != nil {
				t.Fatalf("reconfig adding server %d back: %v", gone, err)
			}
			if back, err := member.Parse(string(data)); err != nil || len(back.Participants()) != 3 {
				t.Fatalf("membership after adding %d back: %q (%v)", gone, data, err)
			}
			mu.Lock()
			defer mu.Unlock()
			if seen := states[before:]; len(seen) > 0 {
				t.Errorf("the client's connection changed state %v; want it kept throughout", seen)
			}
		})
	}
}

// Ref: issue 13, defect 2. A removed server lingers only while it stays
// in touch: once it is stopped, the leader drops it from raft within a
// few election timeouts, and no longer replicates to it.
func TestRemovedServerDroppedWhenGone(t *testing.T) {
	ms := startMembers(t, 3, 0, "", func(c *Config) {
		c.ReconfigEnabled = true
		c.SuperDigest = superDigest
	})
	lead := leaderOf(t, ms)
	gone := followerOf(ms, lead)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	su := connectSuper(t, ctx, ms[lead].addr)
	if _, err := reconfigOnceSynced(t, ctx, su, "", fmt.Sprint(gone), ""); err != nil {
		t.Fatalf("reconfig removing server %d: %v", gone, err)
	}
	if !slices.Contains(ms[lead].srv.rep.Members(), gone) {
		t.Fatalf("raft's members %v right after the reconfig; want %d kept as a learner while it is in touch",
			ms[lead].srv.rep.Members(), gone)
	}
	if err := ms[gone].shutdown(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, func() error {
		if m := ms[lead].srv.rep.Members(); slices.Contains(m, gone) {
			return fmt.Errorf("raft's members %v still hold stopped server %d", m, gone)
		}
		return nil
	})
	if _, _, err := su.Create(ctx, "/after-drop", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("a write after the drop: %v", err)
	}
}

// connectSuper opens a session as the super user (superDigest), with a
// 10 s session timeout unless opts say otherwise, closed when the test
// ends.
func connectSuper(t *testing.T, ctx context.Context, addr string, opts ...zk.Option) *zk.Client {
	t.Helper()
	opts = append([]zk.Option{zk.WithSessionTimeout(10 * time.Second), zk.WithAuth("digest", []byte("super:test"))}, opts...)
	c, err := zk.Connect(ctx, addr, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// reconfigOnceSynced asks for a reconfig until it is not refused for want
// of a synced quorum (NewConfigNoQuorum: the followers may not have caught
// up with a new leader yet) or for another change under way
// (ReconfigInProgress: the leader dropping a removed server), and returns
// its outcome.
func reconfigOnceSynced(t *testing.T, ctx context.Context, c *zk.Client, joining, leaving, members string) ([]byte, error) {
	t.Helper()
	var (
		data []byte
		err  error
	)
	waitFor(t, 10*time.Second, func() error {
		data, _, err = c.Reconfig(ctx, joining, leaving, members, -1)
		if errors.Is(err, zk.ErrNewConfigNoQuorum) || errors.Is(err, zk.ErrReconfigInProgress) {
			return err
		}
		return nil
	})
	return data, err
}

// Ref: issue 13, defect 2 (the way out of a removal). A server removed
// while it is up lingers as a learner; an operator who then stops it,
// wipes it, starts it empty in place and adds it back at once must get a
// member that catches up, not one that stops with ErrLostLog because the
// leader still took it for the learner it had.
func TestRemovedServerWipedAndAddedBack(t *testing.T) {
	for _, where := range []string{"in place", "at a new address"} {
		t.Run(where, func(t *testing.T) { testRemovedServerWipedAndAddedBack(t, where == "in place") })
	}
}

func testRemovedServerWipedAndAddedBack(t *testing.T, inPlace bool) {
	durable := func(c *Config) {
		c.ReconfigEnabled = true
		c.SuperDigest = superDigest
		c.DataDir = t.TempDir()
		c.DataLogDir = c.DataDir
		c.PreAllocSize = 1 << 20
	}
	ms := startMembers(t, 3, 0, "", durable)
	lead := leaderOf(t, ms)
	gone := followerOf(ms, lead)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	su := connectSuper(t, ctx, ms[lead].addr)
	for i := range 20 {
		if _, _, err := su.Create(ctx, fmt.Sprintf("/before-%d", i), nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
	}
	data, err := reconfigOnceSynced(t, ctx, su, "", fmt.Sprint(gone), "")
	if err != nil {
		t.Fatalf("reconfig removing server %d: %v", gone, err)
	}
	if !slices.Contains(ms[lead].srv.rep.Members(), gone) {
		t.Fatalf("server %d, up when removed, does not linger: raft's members %v", gone, ms[lead].srv.rep.Members())
	}
	if err := ms[gone].shutdown(10 * time.Second); err != nil {
		t.Fatal(err)
	}

	// Rebuilt in place: empty data, the current membership.
	peers := map[uint64]string{}
	cur, err := member.Parse(string(data))
	if err != nil {
		t.Fatal(err)
	}
	for _, sv := range cur.Servers {
		peers[uint64(sv.ID)] = sv.QuorumAddr()
	}
	addr := ms[gone].srv.cfg.Ensemble.Listener.Addr().String()
	if !inPlace {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	voters := slices.Sorted(maps.Keys(ms))
	back := startMember(t, gone, Ensemble{Voters: voters, Peers: peers, Listener: ln, Membership: string(data)}, durable)
	spec := fmt.Sprintf("server.%d=%s:%d:participant;%s", gone, ln.Addr(), gone, back.addr)
	if _, err := reconfigOnceSynced(t, ctx, su, spec, "", ""); err != nil {
		t.Fatalf("reconfig adding server %d back: %v", gone, err)
	}
	followerHas(t, ctx, back.addr, "/before-19")
}

// Apache refuses a reconfig that leaves one participant unless
// standaloneEnabled=false (OneParticipant); then the last participant
// goes on alone, taking writes with no one to acknowledge them.
func TestReconfigToOneParticipant(t *testing.T) {
	for _, one := range []bool{false, true} {
		t.Run(fmt.Sprintf("OneParticipant=%v", one), func(t *testing.T) {
			ms := startMembers(t, 3, 0, "", func(c *Config) {
				c.ReconfigEnabled = true
				c.OneParticipant = one
				c.SuperDigest = superDigest
			})
			lead := leaderOf(t, ms)
			var leaving []string
			for id := range ms {
				if id != lead {
					leaving = append(leaving, fmt.Sprint(id))
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			su := connectSuper(t, ctx, ms[lead].addr)
			_, err := reconfigOnceSynced(t, ctx, su, "", strings.Join(leaving, ","), "")
			if !one {
				if !errors.Is(err, zk.ErrBadArguments) {
					t.Fatalf("reconfig leaving %v with standaloneEnabled: %v; want BadArguments", leaving, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("reconfig leaving %v: %v", leaving, err)
			}
			waitFor(t, 10*time.Second, func() error {
				if v := ms[lead].srv.rep.Voters(); !slices.Equal(v, []uint64{uint64(lead)}) {
					return fmt.Errorf("voters %v; want only %d", v, lead)
				}
				return nil
			})
			if _, _, err := su.Create(ctx, "/alone", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
				t.Fatalf("a write with one participant: %v", err)
			}
		})
	}
}
