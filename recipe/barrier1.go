package recipe

import (
	"context"
	"errors"

	"github.com/zoohq/zoo/zk"
)

// Barrier blocks processes until it is removed (recipes guide,
// "Barriers"): it is in place while its node exists. Waiters watch the
// one node, and its removal wakes them all, which is the point.
type Barrier struct {
	c   *zk.Client
	p   string
	acl []zk.ACL
}

// NewBarrier returns the barrier whose node is p.
func NewBarrier(c *zk.Client, p string, acl []zk.ACL) *Barrier {
	return &Barrier{c: c, p: p, acl: orOpen(acl)}
}

// Set puts the barrier in place (creating missing parents). Setting a
// barrier that is in place is not an error.
func (b *Barrier) Set(ctx context.Context) error {
	err := ensurePath(ctx, b.c, b.p, b.acl)
	if errors.Is(err, zk.ErrNodeExists) {
		return nil
	}
	return err
}

// Remove lifts the barrier, releasing every waiter.
func (b *Barrier) Remove(ctx context.Context) error { return deleteNode(ctx, b.c, b.p) }

// Wait blocks until the barrier is not in place, or ctx ends.
func (b *Barrier) Wait(ctx context.Context) error {
	for {
		ok, ch, err := retry2(ctx, func() (bool, <-chan zk.Event, error) {
			ok, _, ch, err := b.c.ExistsW(ctx, b.p)
			return ok, ch, err
		})
		if err != nil {
			return err
		}
		if !ok {
			dropWatch(ctx, b.c, ch)
			return nil
		}
		if testHookWaiting != nil {
			testHookWaiting(b.p+"/", b.p)
		}
		select {
		case ev := <-ch:
			if err := watchErr(ev); err != nil {
				return err
			}
		case <-ctx.Done():
			dropWatch(ctx, b.c, ch)
			return ctx.Err()
		}
	}
}
