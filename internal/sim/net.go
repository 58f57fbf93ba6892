package sim

import (
	"bytes"
	"context"
	"io"

	"github.com/zoohq/zoo/internal/replica"
)

// network carries messages between members: each is delivered after a
// random delay, may be lost, and is not delivered over a cut link. raft's
// messages are also duplicated and reordered; the others (forwards,
// nacks, activity) keep their order and are never duplicated, as on the
// peer transport's TCP link. Links are one-way: cut[a][b] stops a's
// messages to b only.
type network struct {
	s        *Sim
	cut      [][]bool
	drop     float64   // probability a message is lost
	dup      float64   // probability a message is delivered twice
	maxDelay int64     // ms
	fifo     [][]int64 // per link: when its last in-order message arrives
}

func (n *network) init(s *Sim, members int) {
	n.s = s
	n.cut = make([][]bool, members+1)
	n.fifo = make([][]int64, members+1)
	for i := range n.cut {
		n.cut[i] = make([]bool, members+1)
		n.fifo[i] = make([]int64, members+1)
	}
	n.maxDelay = 3
}

func (n *network) delay() int64 { return n.s.between(1, n.maxDelay) }

// link is one member's replica.Transport.
type link struct {
	s    *Sim
	from uint64
}

var _ replica.Transport = link{}
var _ replica.LinkState = link{}

// Send implements replica.Transport.
func (l link) Send(to uint64, kind uint8, data []byte) bool {
	n := &l.s.net
	if n.cut[l.from][to] {
		return false
	}
	if l.s.chance(n.drop) {
		return true // lost on the way
	}
	msg := bytes.Clone(data)
	copies, d := 1, n.delay()
	if kind == replica.KindRaft {
		// raft copes with any network: its messages are duplicated and
		// reordered too.
		if l.s.chance(n.dup) {
			copies = 2
		}
	} else {
		// The rest assume what the peer transport's TCP link gives:
		// each kind in order, never twice; a broken link loses some.
		d = max(d, n.fifo[l.from][to]-l.s.now)
		n.fifo[l.from][to] = l.s.now + d
	}
	for range copies {
		l.s.after(d, func() {
			if n.cut[l.from][to] {
				return // cut while in flight
			}
			l.s.members[to-1].deliver(l.from, kind, msg)
		})
	}
	return true
}

// SendStream implements replica.Transport: the snapshot travels as one
// message, which a cut link loses.
func (l link) SendStream(_ context.Context, to uint64, header []byte, body io.Reader) error {
	b, err := io.ReadAll(body)
	if err != nil {
		return err
	}
	n := &l.s.net
	if n.cut[l.from][to] {
		return errLinkDown
	}
	hdr := bytes.Clone(header)
	l.s.after(n.delay()+int64(len(b)/100_000), func() {
		if !n.cut[l.from][to] {
			l.s.members[to-1].deliverSnapshot(l.from, hdr, b)
		}
	})
	return nil
}

// Connected implements replica.LinkState.
func (l link) Connected(id uint64) bool {
	return !l.s.net.cut[l.from][id] && l.s.members[id-1].up
}
