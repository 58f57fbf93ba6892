package peer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/zoohq/zoo/internal/bufpool"
)

func TestNewValidates(t *testing.T) {
	ln := listen(t)
	defer ln.Close()
	h := func(uint64, Message) {}
	tests := []struct {
		name string
		cfg  Config
		want []string
	}{
		{"empty", Config{}, []string{"ID", "Listener", "Handler"}},
		{"peer id 0", Config{ID: 1, Listener: ln, Handler: h, Peers: map[uint64]string{0: "x:1"}}, []string{"peer id 0"}},
		{"idle below heartbeat", Config{ID: 1, Listener: ln, Handler: h, IdleTimeout: 1, HeartbeatInterval: 2}, []string{"IdleTimeout"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.cfg)
			if err == nil {
				t.Fatal("New accepted a bad config")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

// Three servers: every pair gets a link, messages flow both ways in the
// order sent, including those sent before any link was up.
func TestMeshDelivery(t *testing.T) {
	checkLeaks(t)
	lns := []net.Listener{listen(t), listen(t), listen(t)}
	addrs := map[uint64]string{}
	for i, ln := range lns {
		addrs[uint64(i+1)] = ln.Addr().String()
	}
	nodes := make([]*node, 3)
	const n = 300
	for i := range nodes {
		nodes[i] = startNode(t, uint64(i+1), lns[i], addrs, nil)
		// Queued before the peers exist (node 1 and 2 wait to be dialed).
		for _, to := range []uint64{1, 2, 3} {
			if to == nodes[i].id {
				continue
			}
			for seq := range n / 2 {
				if !nodes[i].tr.Send(to, msg(uint8(1+seq%200), "%d>%d#%d", nodes[i].id, to, seq)) {
					t.Fatalf("send %d->%d refused", nodes[i].id, to)
				}
			}
		}
	}
	for i := range nodes {
		for j := i + 1; j < len(nodes); j++ {
			waitConnected(t, nodes[i], nodes[j])
		}
	}
	for _, a := range nodes { // and the rest over live links
		for _, b := range nodes {
			for seq := n / 2; a != b && seq < n; seq++ {
				if !a.tr.Send(b.id, msg(uint8(1+seq%200), "%d>%d#%d", a.id, b.id, seq)) {
					t.Fatalf("send %d->%d refused", a.id, b.id)
				}
			}
		}
	}
	for _, dst := range nodes {
		for _, src := range nodes {
			if src == dst {
				continue
			}
			got := dst.in.waitN(t, src.id, n)
			if len(got) != n {
				t.Fatalf("%d got %d messages from %d, want %d", dst.id, len(got), src.id, n)
			}
			for seq, m := range got {
				want := msg(uint8(1+seq%200), "%d>%d#%d", src.id, dst.id, seq)
				if m.Kind != want.Kind || string(m.Data) != string(want.Data) {
					t.Fatalf("%d: message %d from %d is %d/%q, want %d/%q", dst.id, seq, src.id, m.Kind, m.Data, want.Kind, want.Data)
				}
			}
		}
	}
}

func TestSendRefuses(t *testing.T) {
	checkLeaks(t)
	nodes := mesh(t, 2, func(c *Config) { c.MaxFrame = 10 })
	tr := nodes[0].tr
	tests := []struct {
		name string
		to   uint64
		m    Message
	}{
		{"unknown peer", 9, msg(1, "x")},
		{"self", 1, msg(1, "x")},
		{"heartbeat kind", 2, Message{Kind: 0}},
		{"over MaxFrame", 2, Message{Kind: 1, Data: make([]byte, 11)}},
	}
	for _, tt := range tests {
		if tr.Send(tt.to, tt.m) {
			t.Errorf("%s: Send returned true", tt.name)
		}
	}
	if !tr.Send(2, Message{Kind: 1, Data: make([]byte, 10)}) {
		t.Error("Send refused a message of exactly MaxFrame")
	}
}

// A server restarts on the same address: the others' links recover.
func TestRestartSameAddress(t *testing.T) {
	checkLeaks(t)
	nodes := mesh(t, 3, nil)
	waitConnected(t, nodes[0], nodes[1])
	waitConnected(t, nodes[1], nodes[2])
	addr := nodes[1].tr.Addr().String()
	if err := nodes[1].tr.Close(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "links to 2 down", func() bool {
		return !nodes[0].tr.Connected(2) && !nodes[2].tr.Connected(2)
	})
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("rebind %s: %v", addr, err)
	}
	peers := map[uint64]string{1: nodes[0].tr.Addr().String(), 3: nodes[2].tr.Addr().String()}
	n2 := startNode(t, 2, ln, peers, nil)
	waitConnected(t, nodes[0], n2)
	waitConnected(t, n2, nodes[2])
	for _, other := range []*node{nodes[0], nodes[2]} {
		other.tr.Send(2, msg(1, "to new 2 from %d", other.id))
		n2.tr.Send(other.id, msg(1, "from new 2"))
	}
	for _, other := range []*node{nodes[0], nodes[2]} {
		if got := n2.in.waitN(t, other.id, 1); string(got[0].Data) != fmt.Sprintf("to new 2 from %d", other.id) {
			t.Errorf("new 2 got %q from %d", got[0].Data, other.id)
		}
		got := other.in.waitN(t, 2, 1)
		if s := string(got[len(got)-1].Data); s != "from new 2" {
			t.Errorf("%d got %q from new 2", other.id, s)
		}
	}
}

// Server 1 moves to a new address; SetPeers on the others (which dial it)
// makes them redial there.
func TestRestartNewAddress(t *testing.T) {
	checkLeaks(t)
	nodes := mesh(t, 3, nil)
	waitConnected(t, nodes[0], nodes[1])
	waitConnected(t, nodes[0], nodes[2])
	if err := nodes[0].tr.Close(); err != nil {
		t.Fatal(err)
	}
	ln := listen(t)
	peers := map[uint64]string{2: nodes[1].tr.Addr().String(), 3: nodes[2].tr.Addr().String()}
	n1 := startNode(t, 1, ln, peers, nil)
	all := map[uint64]string{1: ln.Addr().String(), 2: peers[2], 3: peers[3]}
	nodes[1].tr.SetPeers(all)
	nodes[2].tr.SetPeers(all)
	waitConnected(t, n1, nodes[1])
	waitConnected(t, n1, nodes[2])
	n1.tr.Send(3, msg(4, "moved"))
	if got := nodes[2].in.waitN(t, 1, 1); string(got[len(got)-1].Data) != "moved" {
		t.Errorf("got %q", got[len(got)-1].Data)
	}
}

// With the peer down, the queue holds QueueSize messages and refuses the
// rest; once the peer is up, the queued messages are delivered. Both the
// dialing side and the accepting side are bounded.
func TestBoundedQueue(t *testing.T) {
	tests := []struct {
		name     string
		self, to uint64
	}{
		{"acceptor", 1, 2},
		{"dialer", 2, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkLeaks(t)
			const size = 16
			// The peer's listener exists but nobody accepts on it yet: a
			// dialer's connection waits in the backlog, unanswered. (A
			// closed port could be handed to the next listener, even ours.)
			peerLn := listen(t)
			ln := listen(t)
			a := startNode(t, tt.self, ln, map[uint64]string{tt.to: peerLn.Addr().String()}, func(c *Config) { c.QueueSize = size })
			for i := range size {
				if !a.tr.Send(tt.to, msg(1, "%d", i)) {
					t.Fatalf("message %d refused with room in the queue", i)
				}
			}
			for i := range 1000 {
				if a.tr.Send(tt.to, msg(1, "over %d", i)) {
					t.Fatalf("queue accepted message %d beyond QueueSize", size+i)
				}
			}
			a.tr.mu.RLock()
			queued := len(a.tr.peers[tt.to].queue)
			a.tr.mu.RUnlock()
			if queued != size {
				t.Fatalf("queue holds %d messages, want %d", queued, size)
			}
			if !a.log.contains("queue full") {
				t.Error("drop not logged")
			}
			b := startNode(t, tt.to, peerLn, map[uint64]string{tt.self: ln.Addr().String()}, nil)
			got := b.in.waitN(t, tt.self, size)
			for i, m := range got {
				if string(m.Data) != fmt.Sprint(i) {
					t.Fatalf("message %d is %q", i, m.Data)
				}
			}
			if !a.tr.Send(tt.to, msg(1, "after")) {
				t.Fatal("Send refused after the queue drained")
			}
			b.in.waitN(t, tt.self, size+1)
		})
	}
}

// Raw garbage on a link closes that one connection; the transport keeps
// accepting and the peer can reconnect.
func TestCorruptFrameFromRawPeer(t *testing.T) {
	good := func(s string) []byte { return appendFrame(nil, 5, []byte(s)) }
	badCRC := good("bad")
	badCRC[len(badCRC)-1] ^= 1
	tests := []struct {
		name string
		wire []byte
		hang bool // close our end instead of waiting for the transport to
	}{
		{"bad crc", badCRC, false},
		{"oversize", appendFrame(nil, 5, make([]byte, 2000)), false},
		{"zero length", []byte{0, 0, 0, 0, 5, 0, 0, 0, 0}, false},
		{"short read", good("truncated")[:8], true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkLeaks(t)
			a := startNode(t, 1, listen(t), map[uint64]string{2: "unused:1"}, func(c *Config) { c.MaxFrame = 1000 })
			addr := a.tr.Addr().String()
			raw, st := dialRaw(t, addr, hello{version: protoVersion, typ: connLink, from: 2, to: 1})
			if st != ackOK {
				t.Fatalf("handshake: %v", st)
			}
			if _, err := raw.Write(good("first")); err != nil {
				t.Fatal(err)
			}
			a.in.waitN(t, 2, 1)
			waitFor(t, "link up", func() bool { return a.tr.Connected(2) })
			if _, err := raw.Write(tt.wire); err != nil {
				t.Fatal(err)
			}
			if tt.hang {
				raw.Close()
			} else {
				raw.waitClosed(t)
			}
			waitFor(t, "link down", func() bool { return !a.tr.Connected(2) })

			raw2, st := dialRaw(t, addr, hello{version: protoVersion, typ: connLink, from: 2, to: 1})
			if st != ackOK {
				t.Fatalf("second handshake: %v", st)
			}
			if _, err := raw2.Write(good("second")); err != nil {
				t.Fatal(err)
			}
			got := a.in.waitN(t, 2, 2)
			if len(got) != 2 || string(got[1].Data) != "second" {
				t.Fatalf("got %d messages, last %q", len(got), got[len(got)-1].Data)
			}
		})
	}
}

// A corrupted byte on a Transport's own link (injected through Dial) drops
// the link; the dialer reconnects and later messages flow.
func TestCorruptFrameReconnects(t *testing.T) {
	checkLeaks(t)
	var armed atomic.Bool
	var dials atomic.Int32
	nodes := mesh(t, 2, func(c *Config) {
		if c.ID != 2 {
			return
		}
		c.Dial = func(ctx context.Context, addr string) (net.Conn, error) {
			conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
			if err != nil {
				return nil, err
			}
			dials.Add(1)
			return &faultConn{Conn: conn, armed: &armed}, nil
		}
	})
	a, b := nodes[0], nodes[1]
	waitConnected(t, a, b)
	b.tr.Send(1, msg(1, "A"))
	a.in.waitN(t, 2, 1)
	armed.Store(true)
	b.tr.Send(1, msg(1, "B"))
	waitFor(t, "redial after corruption", func() bool {
		return dials.Load() >= 2 && a.tr.Connected(2) && b.tr.Connected(1)
	})
	if !a.log.contains("corrupt frame") {
		t.Error("corrupt frame not logged")
	}
	b.tr.Send(1, msg(1, "C"))
	got := a.in.waitN(t, 2, 2)
	if len(got) != 2 || string(got[0].Data) != "A" || string(got[1].Data) != "C" {
		t.Fatalf("got %v, want A then C (B corrupted, dropped)", got)
	}
}

// Ref: the package doc, "Handshake": the acceptor refuses a connection
// meant for another server, from a server it does not know, or a link
// dialed the wrong way round, and says why.
func TestHandshakeRejects(t *testing.T) {
	checkLeaks(t)
	// Server 5 knows 7 (dials in) and 3 (5 dials it).
	a := startNode(t, 5, listen(t), map[uint64]string{7: "", 3: "127.0.0.1:1"}, nil)
	addr := a.tr.Addr().String()
	tests := []struct {
		name string
		h    hello
		want ackStatus
	}{
		{"valid", hello{protoVersion, connLink, 7, 5, 0}, ackOK},
		{"wrong expected id", hello{protoVersion, connLink, 7, 6, 0}, ackWrongID},
		{"unknown dialer", hello{protoVersion, connLink, 9, 5, 0}, ackUnknownPeer},
		{"dialer id 0", hello{protoVersion, connLink, 0, 5, 0}, ackUnknownPeer},
		{"self", hello{protoVersion, connLink, 5, 5, 0}, ackUnknownPeer},
		{"smaller id dials", hello{protoVersion, connLink, 3, 5, 0}, ackWrongDirection},
		{"future version", hello{protoVersion + 1, connLink, 7, 5, 0}, ackBadVersion},
		{"unknown type", hello{protoVersion, 9, 7, 5, 0}, ackBadType},
		{"stream without OnStream", hello{protoVersion, connStream, 7, 5, 0}, ackNoStreams},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, st := dialRaw(t, addr, tt.h)
			if st != tt.want {
				t.Fatalf("status %v, want %v", st, tt.want)
			}
			if st != ackOK {
				raw.waitClosed(t)
				waitFor(t, "rejection logged", func() bool { return a.log.contains(st.String()) })
			}
			raw.Close()
		})
	}
	t.Run("bad magic", func(t *testing.T) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
		(&rawPeer{c}).waitClosed(t)
		waitFor(t, "bad handshake logged", func() bool { return a.log.contains("bad handshake") })
	})
}

// A misconfigured ensemble is visible on both sides: server 4 thinks 1 is
// its peer, 1 does not know 4.
func TestMisconfiguredPeerLogged(t *testing.T) {
	checkLeaks(t)
	a := startNode(t, 1, listen(t), map[uint64]string{2: ""}, nil)
	b := startNode(t, 4, listen(t), map[uint64]string{1: a.tr.Addr().String()}, nil)
	waitFor(t, "refusal logged by both", func() bool {
		return a.log.contains("rejected connection") && b.log.contains(ErrRejected.Error()) &&
			b.log.contains(ackUnknownPeer.String())
	})
	if b.tr.Connected(1) || a.tr.Connected(4) {
		t.Fatal("misconfigured servers connected")
	}
	// Fixing the config on 1 lets 4 in.
	a.tr.SetPeers(map[uint64]string{2: "", 4: b.tr.Addr().String()})
	waitConnected(t, a, b)
}

func TestSetPeers(t *testing.T) {
	checkLeaks(t)
	nodes := mesh(t, 3, nil)
	n1, n2, n3 := nodes[0], nodes[1], nodes[2]
	waitConnected(t, n1, n3)
	waitConnected(t, n2, n3)

	// Remove 3 from 1: the link closes on both ends and stays closed (3 is
	// refused when it redials).
	n1.tr.SetPeers(map[uint64]string{1: n1.tr.Addr().String(), 2: n2.tr.Addr().String()})
	if n1.tr.Connected(3) {
		t.Fatal("removed peer still reported connected")
	}
	if n1.tr.Send(3, msg(1, "x")) {
		t.Fatal("Send to a removed peer accepted")
	}
	waitFor(t, "3 sees link to 1 down", func() bool { return !n3.tr.Connected(1) })
	waitFor(t, "3 refused by 1", func() bool { return n3.log.contains(ackUnknownPeer.String()) })
	if !n2.tr.Connected(3) {
		t.Fatal("unrelated link 2-3 went down")
	}

	// Add a new server 4, known to 1 and knowing 1: 4 dials 1.
	n4 := startNode(t, 4, listen(t), map[uint64]string{1: n1.tr.Addr().String()}, nil)
	n1.tr.SetPeers(map[uint64]string{2: n2.tr.Addr().String(), 4: n4.tr.Addr().String()})
	waitConnected(t, n1, n4)
	n1.tr.Send(4, msg(2, "welcome"))
	if got := n4.in.waitN(t, 1, 1); string(got[0].Data) != "welcome" {
		t.Fatalf("got %q", got[0].Data)
	}

	// Re-adding 3 reconnects it.
	n1.tr.SetPeers(map[uint64]string{2: n2.tr.Addr().String(), 3: n3.tr.Addr().String(), 4: n4.tr.Addr().String()})
	waitConnected(t, n1, n3)
}

func TestCloseIdempotent(t *testing.T) {
	checkLeaks(t)
	nodes := mesh(t, 2, nil)
	waitConnected(t, nodes[0], nodes[1])
	tr := nodes[0].tr
	for i := range 3 {
		if err := tr.Close(); err != nil {
			t.Fatalf("Close #%d: %v", i+1, err)
		}
	}
	if tr.Send(2, msg(1, "x")) {
		t.Fatal("Send after Close accepted")
	}
	if tr.Connected(2) {
		t.Fatal("Connected after Close")
	}
	if err := tr.SendStream(context.Background(), 2, nil, strings.NewReader("")); !errors.Is(err, ErrClosed) {
		t.Fatalf("SendStream after Close: %v", err)
	}
	tr.Start() // no effect after Close
	tr.SetPeers(map[uint64]string{3: "x:1"})
	waitFor(t, "2 sees 1 gone", func() bool { return !nodes[1].tr.Connected(1) })
}

func TestCloseWithoutStart(t *testing.T) {
	checkLeaks(t)
	ln := listen(t)
	tr, err := New(Config{ID: 1, Listener: ln, Handler: func(uint64, Message) {}, Peers: map[uint64]string{2: "x:1"}})
	if err != nil {
		t.Fatal(err)
	}
	if !tr.Send(2, msg(1, "queued")) {
		t.Fatal("Send before Start refused")
	}
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := ln.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("listener not closed: %v", err)
	}
}

// A fresh server learns from the handshakes whether its peers run an
// established ensemble, in either direction of the link, and a peer that
// does not know it at all counts as established (it runs a membership
// this server is not in): Survey is what it decides to join or to start
// an ensemble by.
func TestSurvey(t *testing.T) {
	checkLeaks(t)
	lnA, lnB, lnC := listen(t), listen(t), listen(t)
	established := func(c *Config) { c.Established = func() bool { return true } }
	// 1 runs an ensemble with 2; 2 is fresh; 3 is unknown to 1.
	a := startNode(t, 1, lnA, map[uint64]string{2: ""}, established)
	b := startNode(t, 2, lnB, map[uint64]string{1: lnA.Addr().String()}, nil)
	c := startNode(t, 3, lnC, map[uint64]string{1: lnA.Addr().String()}, nil)
	waitFor(t, "the handshakes", func() bool {
		hb, eb := b.tr.Survey()
		ha, ea := a.tr.Survey()
		hc, ec := c.tr.Survey()
		return hb == 1 && eb && ha >= 1 && !ea && hc == 1 && ec
	})
}

// Ref: issue 13, defect 2. Messages queued for a peer before it is removed
// are still sent: the last ones raft sends a member being removed tell it
// that the change removing it committed, and without them it never
// applies the change, so its client's reconfig is never answered.
func TestSetPeersFlushesARemovedPeersQueue(t *testing.T) {
	checkLeaks(t)
	nodes := mesh(t, 3, nil)
	n1, n2, n3 := nodes[0], nodes[1], nodes[2]
	waitConnected(t, n1, n3)
	// Large enough that most are still queued when 3 is removed.
	const count = 256
	pad := strings.Repeat("x", 64<<10)
	for i := range count {
		if !n1.tr.Send(3, msg(1, "m%d %s", i, pad)) {
			t.Fatalf("Send %d refused", i)
		}
	}
	n1.tr.SetPeers(map[uint64]string{2: n2.tr.Addr().String()})
	got := n3.in.waitN(t, 1, count)
	for i, m := range got {
		if want := fmt.Sprintf("m%d %s", i, pad); string(m.Data) != want {
			t.Fatalf("message %d is %.10q...; want %.10q...", i, m.Data, want)
		}
	}
	waitFor(t, "3 sees link to 1 down", func() bool { return !n3.tr.Connected(1) })
}

// A message sent from a pooled buffer arrives whole although the sender's
// next messages reuse the buffers the transport puts back: the transport
// gives a buffer back only once its message is written. Large messages
// arrive in pooled buffers too.
func TestPooledBuffersArriveWhole(t *testing.T) {
	checkLeaks(t)
	nodes := mesh(t, 2, nil)
	waitConnected(t, nodes[0], nodes[1])
	const n = 400
	fill := func(b []byte, seq int) {
		for i := range b {
			b[i] = byte(seq + i/7)
		}
	}
	for seq := range n {
		size := 4<<10 + seq*61%(60<<10)
		buf := bufpool.Get(size)
		if buf == nil {
			t.Fatalf("bufpool does not pool %d bytes", size)
		}
		fill(*buf, seq)
		if !nodes[0].tr.Send(2, Message{Kind: 1, Data: *buf, Buf: buf}) {
			t.Fatalf("send %d refused", seq)
		}
	}
	got := nodes[1].in.waitN(t, 1, n)
	for seq, m := range got {
		want := make([]byte, 4<<10+seq*61%(60<<10))
		fill(want, seq)
		if !bytes.Equal(m.Data, want) {
			t.Fatalf("message %d: %d bytes differ from the %d sent", seq, len(m.Data), len(want))
		}
		if m.Buf == nil || &(*m.Buf)[:1][0] != &m.Data[0] {
			t.Fatalf("message %d: a %d-byte payload did not arrive in its pooled buffer", seq, len(m.Data))
		}
	}
}
