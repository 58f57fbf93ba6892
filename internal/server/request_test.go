package server

import (
	"fmt"
	"testing"
	"time"

	"github.com/zoohq/zoo/internal/jute"
)

// waitOutstanding waits until no request holds a throttling token (the
// count mntr reports as zk_outstanding_requests) and none is left in the
// registry, and checks that none was completed twice.
func waitOutstanding(t testing.TB, s *Server) {
	t.Helper()
	waitFor(t, ioTimeout, func() error {
		if n := len(s.tokens); n != 0 {
			return fmt.Errorf("%d requests outstanding", n)
		}
		if w, r := s.reqs.size(); w+r != 0 {
			return fmt.Errorf("registry holds %d writes and %d reads", w, r)
		}
		return nil
	})
	if n := s.metrics.completedTwice.Value(); n != 0 {
		t.Errorf("%d requests completed twice", n)
	}
}

// expectRepliesOnce reads until the server closes c and fails the test if
// a request was answered twice or out of order (replies carry the xids
// of requests sent in increasing order).
func expectRepliesOnce(t testing.TB, c *rawClient) int {
	t.Helper()
	last := int32(0)
	n := 0
	for _, r := range c.expectClosed() {
		if r.hdr.Xid == jute.XidNotification {
			continue
		}
		if r.hdr.Xid <= last {
			t.Fatalf("reply to xid %d after xid %d: answered twice or out of order", r.hdr.Xid, last)
		}
		last = r.hdr.Xid
		n++
	}
	return n
}

// A write whose submit fails (the replica has stopped) closes the
// connection, so the client sees ConnectionLoss, and gives its throttling
// token back: the server's outstanding count returns to 0.
func TestSubmitFailureReleasesToken(t *testing.T) {
	ts := startServer(t, nil)
	c := newSession(t, ts.addr)
	root := testRoot(t, c)
	ts.srv.rep.Stop()
	c.send(jute.OpSetData, &jute.SetDataRequest{Path: root, Data: []byte("x"), Version: -1})
	c.expectClosed()
	waitOutstanding(t, ts.srv)
}

// pipelineMixed writes n setData requests to c, each followed by a
// getData that must wait for it (FIFO), without reading a reply.
func pipelineMixed(t testing.TB, c *rawClient, path string, n int) {
	t.Helper()
	var out []byte
	for range n {
		out = append(out, c.requestFrame(jute.OpSetData, &jute.SetDataRequest{Path: path, Data: []byte("x"), Version: -1})...)
		out = append(out, c.requestFrame(jute.OpGetData, &jute.PathWatch{Path: path})...)
	}
	c.writeRaw(out)
}

// A connection that ends with writes and the reads waiting for them in
// flight (the client hangs up, closes its session, or the server shuts
// down) has each of its requests completed once: no request is answered
// twice and every throttling token comes back.
func TestConnectionEndCompletesRequests(t *testing.T) {
	for _, tc := range []struct {
		name string
		end  func(ts *testServer, c *rawClient)
	}{
		{"client hangs up", func(_ *testServer, c *rawClient) { _ = c.nc.Close() }},
		{"closeSession", func(_ *testServer, c *rawClient) { c.writeRaw(c.requestFrame(jute.OpCloseSession, nil)) }},
		{"shutdown", func(ts *testServer, _ *rawClient) {
			if err := ts.shutdown(5 * time.Second); err != nil {
				t.Error(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := startServer(t, nil)
			setup := newSession(t, ts.addr)
			root := testRoot(t, setup)
			var clients []*rawClient
			for range 4 {
				c := newSession(t, ts.addr)
				pipelineMixed(t, c, root, 300)
				clients = append(clients, c)
			}
			for _, c := range clients {
				tc.end(ts, c)
			}
			for _, c := range clients {
				if tc.name != "client hangs up" {
					expectRepliesOnce(t, c)
				}
			}
			waitOutstanding(t, ts.srv)
		})
	}
}

// A follower whose leader stops with the follower's forwarded writes and
// the reads behind them in flight fails them (Dropped, or the close of
// every connection once it has no leader): each is completed once and
// every throttling token comes back.
func TestLeaderLossCompletesRequests(t *testing.T) {
	ms := startMembers(t, 3, 0, "")
	lead := leaderOf(t, ms)
	follower := ms[followerOf(ms, lead)]
	// A member that has not heard from the new leader yet refuses
	// sessions: wait until it follows.
	waitFollowing(t, follower.addr, 20*time.Second)
	setup := newSession(t, follower.addr)
	root := testRoot(t, setup)
	var clients []*rawClient
	for range 3 {
		c := newSession(t, follower.addr)
		pipelineMixed(t, c, root, 300)
		clients = append(clients, c)
	}
	if err := ms[lead].shutdown(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	for _, c := range clients {
		expectRepliesOnce(t, c)
	}
	waitOutstanding(t, follower.srv)
}
