package interop

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/zoohq/zoo/internal/server"
	"github.com/zoohq/zoo/internal/zktest"
)

// The zoo-ensemble target is three in-process Zoo servers replicating
// with raft over loopback; the suite talks to a follower, so every write
// it makes is forwarded to the leader and every read is the follower's
// local one (issue "The ensemble": the interop tests also run against an
// ensemble).
func init() { register(Target{Name: "zoo-ensemble", Start: startEnsemble, Mode: "follower"}) }

func startEnsemble(t testing.TB, o Options) (string, func()) {
	const n = 3
	voters := []uint64{1, 2, 3}
	quorum := make([]net.Listener, n)
	addrs := map[uint64]string{}
	for i := range quorum {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatalf("zoo-ensemble: listen: %v", err)
		}
		quorum[i] = ln
		addrs[voters[i]] = ln.Addr().String()
	}
	type member struct {
		srv    *server.Server
		addr   string
		served chan error
	}
	ms := make([]member, n)
	for i := range ms {
		cfg := zooConfig(o)
		cfg.ServerID = int64(voters[i])
		peers := map[uint64]string{}
		for id, a := range addrs {
			if id != voters[i] {
				peers[id] = a
			}
		}
		cfg.Ensemble = server.Ensemble{Voters: voters, Peers: peers, Listener: quorum[i]}
		srv, err := server.New(cfg)
		if err != nil {
			t.Fatalf("zoo-ensemble: new server %d: %v", voters[i], err)
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatalf("zoo-ensemble: listen: %v", err)
		}
		ms[i] = member{srv: srv, addr: ln.Addr().String(), served: make(chan error, 1)}
		go func() { ms[i].served <- srv.Serve(ln) }()
	}
	stop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		for _, m := range ms {
			if err := m.srv.Shutdown(ctx); err != nil {
				t.Errorf("zoo-ensemble: shutdown: %v", err)
			}
			<-m.served
		}
	}
	follower, err := aFollower(ms[0].addr, ms[1].addr, ms[2].addr)
	if err != nil {
		stop()
		t.Fatalf("zoo-ensemble: %v", err)
	}
	return follower, stop
}

// aFollower waits until one of addrs says it follows, and returns it.
func aFollower(addrs ...string) (string, error) {
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		for _, a := range addrs {
			if out, err := zktest.FourLetter(a, "srvr", time.Second); err == nil && strings.Contains(out, "\nMode: follower\n") {
				return a, nil
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	return "", fmt.Errorf("no server of %v followed a leader within 20s", addrs)
}
