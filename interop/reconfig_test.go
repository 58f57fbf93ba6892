package interop

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	gozk "github.com/go-zookeeper/zk"

	"github.com/zoohq/zoo/internal/server"
)

// Ref: issue 13, defect 2; go-zookeeper v1.0.4 TestIntegration_Reconfig,
// against three in-process Zoo servers: a bulk reconfig that removes
// server 1, sent by a client connected to server 1, is answered (Apache
// replies before it lets the client go), and a reconfig through another
// server puts server 1 back.
func TestGoZookeeperReconfigRemovesTheClientsServer(t *testing.T) {
	const n = 3
	quorum := make([]net.Listener, n)
	clients := make([]net.Listener, n)
	var specs []string
	for i := range n {
		for _, ln := range []*net.Listener{&quorum[i], &clients[i]} {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			*ln = l
		}
		qport := quorum[i].Addr().(*net.TCPAddr).Port
		cport := clients[i].Addr().(*net.TCPAddr).Port
		specs = append(specs, fmt.Sprintf("server.%d=127.0.0.1:%d:%d:participant;127.0.0.1:%d", i+1, qport, qport+1, cport))
	}
	membership := strings.Join(specs, "\n") + "\nversion=0"
	addrs := make([]string, n)
	for i := range n {
		cfg := zooConfig(Options{SuperDigest: "super:D/InIHSb7yEEbrWz8b9l71RjZJU=", TickTimeMs: 200}) // super:test
		cfg.ServerID = int64(i + 1)
		cfg.ReconfigEnabled = true
		peers := map[uint64]string{}
		for j := range n {
			if j != i {
				peers[uint64(j+1)] = quorum[j].Addr().String()
			}
		}
		cfg.Ensemble = server.Ensemble{Voters: []uint64{1, 2, 3}, Peers: peers, Listener: quorum[i], Membership: membership}
		srv, err := server.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		served := make(chan error, 1)
		go func() { served <- srv.Serve(clients[i]) }()
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := srv.Shutdown(ctx); err != nil {
				t.Error(err)
			}
			<-served
		})
		addrs[i] = clients[i].Addr().String()
	}
	if _, err := aFollower(addrs...); err != nil {
		t.Fatal(err)
	}

	connect := func(servers ...string) *gozk.Conn {
		c, events, err := gozk.Connect(servers, 10*time.Second, gozk.WithLogInfo(false))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		deadline := time.After(10 * time.Second)
		for ev := range events {
			if ev.State == gozk.StateHasSession {
				break
			}
			select {
			case <-deadline:
				t.Fatal("no session within 10s")
			default:
			}
		}
		if err := c.AddAuth("digest", []byte("super:test")); err != nil {
			t.Fatal(err)
		}
		return c
	}
	on1 := connect(addrs[0])
	// Until the followers have caught up with the leader, a new
	// configuration has no synced quorum: retry that error only
	// (NewConfigNoQuorum, -13, which go-zookeeper has no name for).
	reconfig := func(c *gozk.Conn, members []string) error {
		deadline := time.Now().Add(10 * time.Second)
		for {
			_, err := c.Reconfig(members, -1)
			if err == nil || !strings.HasSuffix(err.Error(), "unknown error: -13") || time.Now().After(deadline) {
				return err
			}
			time.Sleep(50 * time.Millisecond) // polling the followers' catch-up
		}
	}
	if err := reconfig(on1, specs[1:]); err != nil {
		t.Fatalf("reconfig removing server 1, from a client on server 1: %v", err)
	}
	on2 := connect(addrs[1], addrs[2])
	if err := reconfig(on2, specs); err != nil {
		t.Fatalf("reconfig putting server 1 back: %v", err)
	}
}
