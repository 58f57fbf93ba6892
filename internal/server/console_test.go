package server

import (
	"fmt"
	"testing"
	"time"
)

// On the leader, Peer reports each other member's link and how far its
// log is; a follower knows the links but not the progress.
func TestPeerStatus(t *testing.T) {
	ms := startMembers(t, 3, 0, "")
	var leader *testServer
	waitFor(t, 20*time.Second, func() error {
		leader = nil
		for _, ts := range ms {
			if modeOf(ts.addr) == "leader" {
				leader = ts
			}
		}
		if leader == nil {
			return fmt.Errorf("no leader yet")
		}
		return nil
	})
	self := uint64(leader.srv.cfg.ServerID)
	if ps := leader.srv.Peer(self); ps.Live || ps.Match != -1 {
		t.Errorf("the leader about itself: %+v", ps)
	}
	for id, ts := range ms {
		if id == self {
			continue
		}
		waitFor(t, 20*time.Second, func() error {
			ps := leader.srv.Peer(id)
			if !ps.Live || ps.Match <= 0 || ps.Lag < 0 {
				return fmt.Errorf("member %d as the leader sees it: %+v", id, ps)
			}
			return nil
		})
		if ps := ts.srv.Peer(self); ps.Match != -1 || ps.Lag != -1 {
			t.Errorf("follower %d knows the leader's progress: %+v", id, ps)
		}
		waitFor(t, 20*time.Second, func() error {
			if !ts.srv.Peer(self).Live {
				return fmt.Errorf("follower %d has no link to the leader", id)
			}
			return nil
		})
	}
	// A standalone server has no peers.
	if ps := startServer(t, nil).srv.Peer(2); ps.Live || ps.Match != -1 {
		t.Errorf("standalone: %+v", ps)
	}
}
