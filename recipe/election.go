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

// Resign steps down (or withdraws): the next candidate takes over. Its
// acknowledgment goes first, so no one sees the acknowledgment of a
// candidate that no longer leads. It returns ErrNotHeld if this candidate
// does not lead, ErrLost if its leadership had already been lost.
func (e *Election) Resign(ctx context.Context) error {
	if err := e.dropAck(ctx); err != nil {
		return err
	}
	return e.l.release(ctx)
}

// AckNode is the node, under the election's directory, by which the
// leader acknowledges that it leads (its name has no sequence number, so
// candidates never take it for one of their own).
const AckNode = "leader"

// Acknowledge tells everyone that this leader has run its leader
// procedure. Being first in line does not mean a candidate knows it leads
// yet; the recipes guide ("Leader Election") suggests that the leader
// create a separate znode once it has acted as leader. Acknowledge creates
// the ephemeral node dir/leader holding the leader's value, replacing one
// left by a former leader; Resign removes it, and it goes with the
// leader's session. It returns ErrNotHeld unless this candidate leads.
func (e *Election) Acknowledge(ctx context.Context) error {
	if err := e.l.err(); err != nil {
		return err
	}
	c, p := e.l.c, e.l.dir+"/"+AckNode
	for {
		_, _, err := c.Create(ctx, p, e.value, zk.Ephemeral, e.l.acl)
		if !errors.Is(err, zk.ErrNodeExists) && !errors.Is(err, zk.ErrConnectionLoss) {
			return err
		}
		// Ours (a create whose reply was lost) or a former leader's.
		_, st, err := c.Get(ctx, p)
		switch {
		case errors.Is(err, zk.ErrNoNode), errors.Is(err, zk.ErrConnectionLoss):
			continue
		case err != nil:
			return err
		case st.EphemeralOwner == c.SessionID():
			_, err := c.Set(ctx, p, e.value, st.Version)
			if errors.Is(err, zk.ErrConnectionLoss) {
				continue
			}
			return err
		}
		if err := c.Delete(ctx, p, st.Version); err != nil && !errors.Is(err, zk.ErrNoNode) &&
			!errors.Is(err, zk.ErrBadVersion) && !errors.Is(err, zk.ErrConnectionLoss) {
			return err
		}
	}
}

// dropAck removes this candidate's acknowledgment, if it made one.
func (e *Election) dropAck(ctx context.Context) error {
	c, p := e.l.c, e.l.dir+"/"+AckNode
	_, st, err := retry2(ctx, func() ([]byte, zk.Stat, error) { return c.Get(ctx, p) })
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	if err != nil || st.EphemeralOwner != c.SessionID() {
		return err
	}
	return deleteNode(ctx, c, p)
}

// AcknowledgedLeader waits until the leader of the election under dir has
// acknowledged (Acknowledge) and returns its value. It watches the
// acknowledgment node; it does not poll.
func AcknowledgedLeader(ctx context.Context, c *zk.Client, dir string) ([]byte, error) {
	p := dir + "/" + AckNode
	for {
		ok, _, ch, err := c.ExistsW(ctx, p)
		if errors.Is(err, zk.ErrConnectionLoss) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if ok {
			data, _, err := c.Get(ctx, p)
			if errors.Is(err, zk.ErrNoNode) || errors.Is(err, zk.ErrConnectionLoss) {
				continue // it just went; look again
			}
			return data, err
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

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

// Token returns the fencing token of the current leadership (0 when not
// leading): the zxid of the create of the candidate's node, larger for
// every later leader.
func (e *Election) Token() FencingToken { return e.l.tok() }
