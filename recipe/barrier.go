package recipe

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/zoohq/zoo/zk"
)

const readyNode = "ready"

// DoubleBarrier synchronizes the start and the end of a computation
// (recipes guide, "Double Barriers"): Enter returns once threshold
// participants have entered, Leave once all of them have left.
//
// Each participant is an ephemeral node dir/name; names must be unique
// among participants and must not be "ready". A directory serves one
// round: the "ready" node that opens the barrier stays, so use a fresh
// dir for each round.
type DoubleBarrier struct {
	c         *zk.Client
	dir, name string
	threshold int
	acl       []zk.ACL
}

// NewDoubleBarrier returns participant name of the barrier under dir
// that opens when threshold participants have entered.
func NewDoubleBarrier(c *zk.Client, dir, name string, threshold int, acl []zk.ACL) *DoubleBarrier {
	return &DoubleBarrier{c: c, dir: dir, name: name, threshold: threshold, acl: orOpen(acl)}
}

// Enter registers the participant and blocks until threshold participants
// have registered. The last to arrive creates dir/ready, on which the
// others wait (a single event wakes them all, as the guide intends).
func (b *DoubleBarrier) Enter(ctx context.Context) error {
	if err := ensurePath(ctx, b.c, b.dir, b.acl); err != nil {
		return err
	}
	ready := b.dir + "/" + readyNode
	ok, ch, err := retry2(ctx, func() (bool, <-chan zk.Event, error) {
		ok, _, ch, err := b.c.ExistsW(ctx, ready)
		return ok, ch, err
	})
	if err != nil {
		return err
	}
	if err := b.join(ctx); err != nil {
		dropWatch(ctx, b.c, ch)
		return err
	}
	if ok {
		dropWatch(ctx, b.c, ch)
		return nil
	}
	n, err := b.count(ctx)
	if err != nil {
		dropWatch(ctx, b.c, ch)
		return err
	}
	if n >= b.threshold {
		_, err := retry(ctx, func() (string, error) {
			p, _, err := b.c.Create(ctx, ready, nil, zk.Persistent, b.acl)
			return p, err
		})
		if err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return err
		}
		return nil // our own create fires ch; it has room for the event
	}
	if testHookWaiting != nil {
		testHookWaiting(b.dir+"/"+b.name, ready)
	}
	select {
	case ev := <-ch:
		return watchErr(ev)
	case <-ctx.Done():
		dropWatch(ctx, b.c, ch)
		_ = deleteNode(ctx, b.c, b.dir+"/"+b.name)
		return ctx.Err()
	}
}

// join creates our ephemeral node; after a lost reply the node may exist
// already, ours if its owner is our session.
func (b *DoubleBarrier) join(ctx context.Context) error {
	p := b.dir + "/" + b.name
	_, err := retry(ctx, func() (string, error) {
		p, _, err := b.c.Create(ctx, p, nil, zk.Ephemeral, b.acl)
		return p, err
	})
	if !errors.Is(err, zk.ErrNodeExists) {
		return err
	}
	_, st, err := b.c.Exists(ctx, p)
	if err != nil {
		return err
	}
	if st.EphemeralOwner != b.c.SessionID() {
		return fmt.Errorf("recipe: participant %s: %w", p, zk.ErrNodeExists)
	}
	return nil
}

// members lists the participants, sorted, without the ready node.
func (b *DoubleBarrier) members(ctx context.Context) ([]string, error) {
	kids, err := children(ctx, b.c, b.dir)
	if err != nil {
		return nil, err
	}
	kids = slices.DeleteFunc(kids, func(s string) bool { return s == readyNode })
	slices.Sort(kids)
	return kids, nil
}

func (b *DoubleBarrier) count(ctx context.Context) (int, error) {
	m, err := b.members(ctx)
	return len(m), err
}

// Leave unregisters the participant and blocks until every participant
// has left. Following the guide, the lowest participant waits for the
// highest, and every other one deletes its node and waits for the lowest,
// so each departure wakes one waiter only.
func (b *DoubleBarrier) Leave(ctx context.Context) error {
	self := b.dir + "/" + b.name
	for {
		m, err := b.members(ctx)
		if err != nil {
			return err
		}
		i := slices.Index(m, b.name)
		switch {
		case len(m) == 0:
			return nil
		case len(m) == 1 && i == 0:
			return deleteNode(ctx, b.c, self)
		case i == 0:
			err = awaitGone(ctx, b.c, b.dir+"/"+m[len(m)-1], self)
		default:
			if i > 0 {
				if err := deleteNode(ctx, b.c, self); err != nil {
					return err
				}
			}
			err = awaitGone(ctx, b.c, b.dir+"/"+m[0], self)
		}
		if err != nil {
			return err
		}
	}
}
