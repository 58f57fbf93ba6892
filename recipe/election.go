package recipe

import (
	"context"
	"errors"

	"github.com/zoohq/zoo/zk"
)

// ErrNoLeader is returned by Leader when no candidate is in the election.
var ErrNoLeader = errors.New("recipe: no leader")

// Election is leader election (recipes guide, "Leader Election"): each
// candidate creates an ephemeral sequential node under dir holding its
// value; the lowest is the leader, and every other candidate watches only
// the candidate just before it, so a leader's departure wakes exactly its
// successor (no herd effect).
//
// An Election is one candidacy: Campaign on an Election that leads returns
// ErrHeld. After Resign (or the loss of leadership) it may campaign again,
// and then goes to the back of the line.
type Election struct {
	l     seqLock
	value []byte
}

// NewElection returns a candidate with the given value (say, its address)
// in the election under dir.
func NewElection(c *zk.Client, dir string, value []byte, acl []zk.ACL) *Election {
	return &Election{l: seqLock{c: c, dir: dir, kind: "n", acl: orOpen(acl)}, value: value}
}

// Campaign blocks until this candidate leads or ctx ends; on error it has
// withdrawn its candidacy.
func (e *Election) Campaign(ctx context.Context) error {
	return e.l.acquire(ctx, e.value, firstInLine)
}

// Resign steps down (or withdraws): the next candidate takes over. It
// returns ErrNotHeld if this candidate does not lead, ErrLost if its
// leadership had already been lost.
func (e *Election) Resign(ctx context.Context) error { return e.l.release(ctx) }

// Done returns a channel closed when leadership ends: lost (node deleted,
// session expired or closed) or resigned. It is closed while not leading.
func (e *Election) Done() <-chan struct{} { return e.l.done() }

// Err returns ErrLost once leadership was lost, nil while leading, and
// ErrNotHeld when not leading.
func (e *Election) Err() error { return e.l.err() }

// Leader returns the value of the current leader of the election under
// dir, or ErrNoLeader.
func Leader(ctx context.Context, c *zk.Client, dir string) ([]byte, error) {
	for {
		kids, err := children(ctx, c, dir)
		if errors.Is(err, zk.ErrNoNode) {
			return nil, ErrNoLeader
		}
		if err != nil {
			return nil, err
		}
		ns := sortedNodes(kids)
		if len(ns) == 0 {
			return nil, ErrNoLeader
		}
		data, err := retry(ctx, func() ([]byte, error) {
			d, _, err := c.Get(ctx, dir+"/"+ns[0].name)
			return d, err
		})
		if !errors.Is(err, zk.ErrNoNode) { // else: the leader just left, look again
			return data, err
		}
	}
}
