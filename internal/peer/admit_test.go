package peer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"testing"
)

// admitIf gives a server an Admit that answers what ok holds: whether it
// runs an established ensemble (a non-empty log), as internal/server's
// Admit does.
func admitIf(ok *atomic.Bool) func(*Config) {
	return func(c *Config) { c.Admit = func(uint64) bool { return ok.Load() } }
}

// A restarted member whose log predates the reconfig that added the
// leader (5) does not have it in its list. With a non-empty log it takes
// the leader's link and answers over it; with an empty log (a wiped
// member joining) it refuses the leader, as it refuses any server not in
// the membership in force.
func TestAdmitUnknownDialer(t *testing.T) {
	checkLeaks(t)
	var established atomic.Bool
	m := startNode(t, 2, listen(t), map[uint64]string{1: "127.0.0.1:1"}, admitIf(&established))
	leader := startNode(t, 5, listen(t), map[uint64]string{2: m.tr.Addr().String()}, nil)

	// Empty log: refused, and the refusal says why on both sides.
	waitFor(t, "refusal", func() bool {
		return m.log.contains(ackUnknownPeer.String()) && leader.log.contains(ackUnknownPeer.String())
	})
	if m.tr.Connected(5) || m.tr.Send(5, msg(1, "x")) {
		t.Fatal("a member with an empty log let in a server not in its membership")
	}

	// Non-empty log: admitted, and the link carries both ways.
	established.Store(true)
	waitConnected(t, m, leader)
	if !leader.tr.Send(2, msg(1, "append")) {
		t.Fatal("leader's Send refused")
	}
	m.in.waitN(t, 5, 1)
	if !m.tr.Send(5, msg(2, "ack")) {
		t.Fatal("Send to an admitted peer refused")
	}
	if got := leader.in.waitN(t, 2, 1); string(got[0].Data) != "ack" {
		t.Fatalf("leader got %q", got[0].Data)
	}
}

// An admitted peer lasts as long as its link: once the server that
// dialed is gone, Send to it fails (raft then reports it unreachable)
// instead of queueing for a server that may never come back.
func TestAdmittedPeerForgottenWithItsLink(t *testing.T) {
	checkLeaks(t)
	var yes atomic.Bool
	yes.Store(true)
	m := startNode(t, 2, listen(t), nil, admitIf(&yes))
	leader := startNode(t, 5, listen(t), map[uint64]string{2: m.tr.Addr().String()}, nil)
	waitConnected(t, m, leader)
	if err := leader.tr.Close(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "admitted peer forgotten", func() bool { return !m.tr.Send(5, msg(1, "x")) })
	if !m.log.contains("forgetting it") {
		t.Fatal("forgetting the admitted peer was not logged")
	}
}

// When the leader's id is smaller than the restarted member's, the
// member should dial it but has no address for it; the leader, which
// knows the member, dials it after a while (a nudge), and the member
// admits the link.
func TestNudgeAdmittedBySmallerLeader(t *testing.T) {
	checkLeaks(t)
	var yes atomic.Bool
	yes.Store(true)
	m := startNode(t, 5, listen(t), map[uint64]string{1: "127.0.0.1:1"}, admitIf(&yes))
	leader := startNode(t, 4, listen(t), map[uint64]string{5: m.tr.Addr().String()}, nil)
	waitConnected(t, m, leader)
	leader.tr.Send(5, msg(1, "append"))
	m.in.waitN(t, 4, 1)
	m.tr.Send(4, msg(2, "ack"))
	leader.in.waitN(t, 5, 1)
}

// A server that knows the nudging peer refuses the nudge (wrong
// direction): it dials that peer itself, and a second link would race
// its own. Here 2 has a wrong address for 1, so only nudges reach it.
func TestNudgeRefusedByAPeerThatDials(t *testing.T) {
	checkLeaks(t)
	var yes atomic.Bool
	yes.Store(true)
	b := startNode(t, 2, listen(t), map[uint64]string{1: "127.0.0.1:1"}, admitIf(&yes))
	a := startNode(t, 1, listen(t), map[uint64]string{2: b.tr.Addr().String()}, nil)
	waitFor(t, "nudge refused", func() bool {
		return a.log.contains("nudge refused") && a.log.contains(ackWrongDirection.String())
	})
	if a.tr.Connected(2) || b.tr.Connected(1) {
		t.Fatal("a nudge linked a peer that dials itself")
	}
}

// A membership change that names an admitted peer makes it a peer like
// any other. A larger one keeps its link; a smaller one is dialed from
// then on, as the rule that the larger id dials wants.
func TestAdoptAdmittedPeer(t *testing.T) {
	checkLeaks(t)
	var yes atomic.Bool
	yes.Store(true)
	m := startNode(t, 3, listen(t), nil, admitIf(&yes))
	big := startNode(t, 7, listen(t), map[uint64]string{3: m.tr.Addr().String()}, nil)
	small := startNode(t, 1, listen(t), map[uint64]string{3: m.tr.Addr().String()}, nil)
	waitConnected(t, m, big)
	waitConnected(t, m, small) // small nudged

	m.tr.SetPeers(map[uint64]string{7: big.tr.Addr().String(), 1: small.tr.Addr().String()})
	waitFor(t, "small re-linked, dialed by 3", func() bool {
		return m.log.contains("dialing it from now on") && m.tr.Connected(1) && small.tr.Connected(3)
	})
	waitConnected(t, m, big)
	m.tr.Send(1, msg(1, "to small"))
	m.tr.Send(7, msg(1, "to big"))
	small.in.waitN(t, 3, 1)
	big.in.waitN(t, 3, 1)

	if !m.log.contains(`admitted server joins the membership" server=3 peer=7`) {
		t.Fatal("7 was not adopted")
	}
}

// Quorum SASL still runs for a server that is not in the list: with
// serverRequireSasl, one that does not authenticate is refused even by a
// member that admits unknown servers.
func TestAdmitKeepsQuorumAuth(t *testing.T) {
	checkLeaks(t)
	var yes atomic.Bool
	yes.Store(true)
	required := digestAuth("zkquorum", "secret", quorumUsers, true, true)
	bad := digestAuth("zkquorum", "wrong", quorumUsers, true, true)
	m := startNode(t, 2, listen(t), nil, func(c *Config) { c.Admit = func(uint64) bool { return yes.Load() }; c.Auth = required })
	none := startNode(t, 5, listen(t), map[uint64]string{2: m.tr.Addr().String()}, nil)
	wrong := startNode(t, 6, listen(t), map[uint64]string{2: m.tr.Addr().String()}, withAuth(map[uint64]*Auth{6: bad}))
	good := startNode(t, 7, listen(t), map[uint64]string{2: m.tr.Addr().String()}, withAuth(map[uint64]*Auth{7: required}))
	waitConnected(t, m, good)
	waitFor(t, "refusals logged", func() bool {
		return none.log.contains(ackAuthRequired.String()) && wrong.log.contains("refused our credentials")
	})
	if m.tr.Connected(5) || m.tr.Connected(6) {
		t.Fatal("an unauthenticated server was admitted")
	}
}

// A snapshot stream follows the same rule as a link: a member with an
// empty log takes none from a server outside its membership (raft would
// install it and follow that server), one with a non-empty log does.
func TestAdmitStreams(t *testing.T) {
	checkLeaks(t)
	var established atomic.Bool
	got := make(chan uint64, 1)
	m := startNode(t, 2, listen(t), nil, func(c *Config) {
		c.Admit = func(uint64) bool { return established.Load() }
		c.OnStream = func(from uint64, _ []byte, r io.Reader) error {
			_, err := io.Copy(io.Discard, r)
			got <- from
			return err
		}
	})
	leader := startNode(t, 5, listen(t), map[uint64]string{2: m.tr.Addr().String()}, nil)
	err := leader.tr.SendStream(context.Background(), 2, []byte("snap"), strings.NewReader("body"))
	if !errors.Is(err, ErrRejected) {
		t.Fatalf("stream to a member with an empty log: %v, want %v", err, ErrRejected)
	}
	established.Store(true)
	if err := leader.tr.SendStream(context.Background(), 2, []byte("snap"), strings.NewReader("body")); err != nil {
		t.Fatalf("stream to a member with a non-empty log: %v", err)
	}
	if from := <-got; from != 5 {
		t.Fatalf("stream from %d, want 5", from)
	}
}

// Admitted peers are bounded: past maxAdmitted, a server outside the
// list is refused as unknown, however many dial in.
func TestAdmittedPeersBounded(t *testing.T) {
	checkLeaks(t)
	var yes atomic.Bool
	yes.Store(true)
	m := startNode(t, 1, listen(t), nil, admitIf(&yes))
	addr := m.tr.Addr().String()
	for id := uint64(2); id < 2+maxAdmitted; id++ {
		raw, st := dialRaw(t, addr, hello{protoVersion, connLink, id, 1, 0})
		if st != ackOK {
			t.Fatalf("server %d: %v, want %v", id, st, ackOK)
		}
		defer raw.Close()
		waitFor(t, fmt.Sprintf("%d admitted", id), func() bool { return m.tr.Connected(id) })
	}
	raw, st := dialRaw(t, addr, hello{protoVersion, connLink, 2 + maxAdmitted, 1, 0})
	if st != ackUnknownPeer {
		t.Fatalf("server %d past the bound: %v, want %v", 2+maxAdmitted, st, ackUnknownPeer)
	}
	raw.waitClosed(t)
}
