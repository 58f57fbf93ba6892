package server

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/zoohq/zoo/internal/zktest"
	"github.com/zoohq/zoo/zk"
)

// startMembers starts an in-process ensemble of voters and then
// observers (ids after the voters'), all given the same membership (or,
// if empty, one naming their real quorum addresses), each configured by
// edit if not nil, and returns them by id.
func startMembers(t *testing.T, voters, observers int, membership string, edit ...func(*Config)) map[uint64]*testServer {
	t.Helper()
	var vs, ls []uint64
	quorum := map[uint64]net.Listener{}
	addrs := map[uint64]string{}
	for id := uint64(1); id <= uint64(voters+observers); id++ {
		if id <= uint64(voters) {
			vs = append(vs, id)
		} else {
			ls = append(ls, id)
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		quorum[id], addrs[id] = ln, ln.Addr().String()
	}
	if membership == "" {
		for id := uint64(1); id <= uint64(voters+observers); id++ {
			role := "participant"
			if id > uint64(voters) {
				role = "observer"
			}
			membership += fmt.Sprintf("server.%d=%s:%d:%s\n", id, addrs[id], id, role)
		}
		membership += "version=0"
	}
	out := map[uint64]*testServer{}
	for id, ln := range quorum {
		e := Ensemble{Voters: vs, Learners: ls, Peers: map[uint64]string{}, Listener: ln, Membership: membership}
		for other, a := range addrs {
			if other != id {
				e.Peers[other] = a
			}
		}
		out[id] = startMember(t, id, e, edit...)
	}
	return out
}

// startMember starts one in-process member of an ensemble, with a short
// tickTime, and shuts it down when the test ends.
func startMember(t *testing.T, id uint64, e Ensemble, edit ...func(*Config)) *testServer {
	t.Helper()
	cfg := baseConfig()
	cfg.Logger = testLogger(t).With("server", id)
	cfg.ServerID = int64(id)
	cfg.TickTime = 200 * time.Millisecond
	cfg.Ensemble = e
	for _, ed := range edit {
		ed(&cfg)
	}
	srv, err := New(cfg)
	if err != nil {
		t.Fatalf("server %d: %v", id, err)
	}
	cl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ts := &testServer{srv: srv, addr: cl.Addr().String(), served: make(chan error, 1)}
	go func() { ts.served <- srv.Serve(cl) }()
	t.Cleanup(func() {
		if err := ts.shutdown(10 * time.Second); err != nil {
			t.Error(err)
		}
	})
	return ts
}

// modeOf returns what srvr says of the server's role.
func modeOf(addr string) string {
	out, err := zktest.FourLetter(addr, "srvr", time.Second)
	if err != nil {
		return ""
	}
	_, after, _ := strings.Cut(out, "\nMode: ")
	mode, _, _ := strings.Cut(after, "\n")
	return mode
}

// waitFollowing waits until the server at addr says it follows: it knows
// its leader and serves clients.
func waitFollowing(t *testing.T, addr string, within time.Duration) {
	t.Helper()
	waitFor(t, within, func() error {
		if m := modeOf(addr); m != "follower" {
			return fmt.Errorf("server %s says %q, want follower", addr, m)
		}
		return nil
	})
}

// Ref: issue "The ensemble": observers serve clients and forward writes but
// never vote; srvr names the role; /zookeeper/config holds the membership
// in Apache's text form on every member (as Apache 3.8 shows it for a
// static zoo.cfg: see config.TestMembership).
func TestObserverServesAndForwards(t *testing.T) {
	const membership = "server.1=127.0.0.1:1:2:participant\nserver.2=127.0.0.1:3:4:participant\n" +
		"server.3=127.0.0.1:5:6:participant\nserver.4=127.0.0.1:7:8:observer\nversion=0"
	ms := startMembers(t, 3, 1, membership)
	obs := ms[4]
	waitFor(t, 20*time.Second, func() error {
		if m := modeOf(obs.addr); m != "observer" {
			return fmt.Errorf("the observer's srvr says mode %q", m)
		}
		return nil
	})
	var leaders []*testServer
	for id, ts := range ms {
		waitFor(t, 20*time.Second, func() error {
			switch m := modeOf(ts.addr); m {
			case "leader", "follower", "observer":
				if m == "leader" {
					leaders = append(leaders, ts)
				}
				return nil
			default:
				return fmt.Errorf("server %d says mode %q", id, m)
			}
		})
	}
	if len(leaders) != 1 {
		t.Fatalf("%d leaders", len(leaders))
	}
	// The leader's mntr shows each member's lag (issue: 4lw show peers
	// and their lag).
	waitFor(t, 10*time.Second, func() error {
		out, err := zktest.FourLetter(leaders[0].addr, "mntr", time.Second)
		if err != nil {
			return err
		}
		for id := range ms {
			if key := fmt.Sprintf("\nzk_zoo_peer_%d_lag\t", id); id != leaders[0].srv.rep.ID() && !strings.Contains(out, key) {
				return fmt.Errorf("the leader's mntr lacks %q:\n%s", key, out)
			}
		}
		return nil
	})

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := zk.Connect(ctx, obs.addr, zk.WithSessionTimeout(4*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, _, err := c.Create(ctx, "/obs", []byte("through the observer"), zk.Persistent, zk.OpenACLUnsafe()); err != nil {
		t.Fatalf("create through the observer: %v", err)
	}
	for id, ts := range ms {
		rc, err := zk.Connect(ctx, ts.addr, zk.WithSessionTimeout(4*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		if err := rc.Sync(ctx, "/obs"); err != nil {
			t.Fatalf("sync on server %d: %v", id, err)
		}
		if data, _, err := rc.Get(ctx, "/obs"); err != nil || string(data) != "through the observer" {
			t.Errorf("server %d: get /obs = %q, %v", id, data, err)
		}
		data, st, err := rc.Get(ctx, "/zookeeper/config")
		if err != nil || string(data) != membership || st.Version != -1 {
			t.Errorf("server %d: /zookeeper/config = %q (version %d), %v; want %q, version -1", id, data, st.Version, err, membership)
		}
		rc.Close()
	}
}
