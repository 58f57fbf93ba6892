package recipe

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/zoohq/zoo/zk"
)

// Queue is a distributed FIFO queue (recipes guide, "Queues"): each item
// is a persistent sequential node under dir; Take removes the lowest.
//
// Put is exactly-once even when its reply is lost (the GUID finds the
// item again). Take is at-most-once: an item is handed to the consumer
// whose delete removed it. If the reply to that delete is lost and the
// item is then gone, Take cannot tell whether it or another consumer
// removed it, and returns the data with an error wrapping ErrUncertain.
//
// Consumers waiting on an empty queue all watch dir's children, as in the
// guide: a Put wakes every waiting consumer (herd effect), and all but one
// go back to waiting.
type Queue struct {
	c   *zk.Client
	dir string
	acl []zk.ACL
	// order sorts the items for Take; nil means by sequence number.
	order func(a, b node) int
}

// NewQueue returns the queue under dir.
func NewQueue(c *zk.Client, dir string, acl []zk.ACL) *Queue {
	return &Queue{c: c, dir: dir, acl: orOpen(acl)}
}

// Put appends an item.
func (q *Queue) Put(ctx context.Context, data []byte) error {
	if err := ensurePath(ctx, q.c, q.dir, q.acl); err != nil {
		return err
	}
	_, err := createSeq(ctx, q.c, q.dir, "qn", data, zk.PersistentSequential, q.acl)
	return err
}

// Take removes and returns the oldest item, blocking while the queue is
// empty until an item arrives or ctx ends.
func (q *Queue) Take(ctx context.Context) ([]byte, error) {
	if err := ensurePath(ctx, q.c, q.dir, q.acl); err != nil {
		return nil, err
	}
	for {
		kids, err := children(ctx, q.c, q.dir)
		if err != nil {
			return nil, err
		}
		ns := sortedNodes(kids)
		if q.order != nil {
			slices.SortStableFunc(ns, q.order)
		}
		if data, ok, err := q.takeFirst(ctx, ns); ok || err != nil {
			return data, err
		}
		// Empty (or all taken by others): watch and look again, so an
		// item put in between is not missed.
		kids, ch, err := retry2(ctx, func() ([]string, <-chan zk.Event, error) {
			k, _, ch, err := q.c.ChildrenW(ctx, q.dir)
			return k, ch, err
		})
		if err != nil {
			return nil, err
		}
		if len(sortedNodes(kids)) > 0 {
			dropWatch(ctx, q.c, ch)
			continue
		}
		select {
		case ev := <-ch:
			if err := watchErr(ev); err != nil {
				return nil, err
			}
		case <-ctx.Done():
			dropWatch(ctx, q.c, ch)
			return nil, ctx.Err()
		}
	}
}

// takeFirst tries the items in order and removes the first it can.
func (q *Queue) takeFirst(ctx context.Context, ns []node) ([]byte, bool, error) {
	for _, n := range ns {
		p := q.dir + "/" + n.name
		data, err := retry(ctx, func() ([]byte, error) {
			d, _, err := q.c.Get(ctx, p)
			return d, err
		})
		if errors.Is(err, zk.ErrNoNode) {
			continue // another consumer took it
		}
		if err != nil {
			return nil, false, err
		}
		err = q.c.Delete(ctx, p, -1)
		if errors.Is(err, zk.ErrConnectionLoss) {
			err = deleteAgain(ctx, q.c, p)
			if errors.Is(err, zk.ErrNoNode) {
				return data, true, fmt.Errorf("recipe: take %s: %w", p, ErrUncertain)
			}
		}
		switch {
		case err == nil:
			return data, true, nil
		case errors.Is(err, zk.ErrNoNode):
			continue
		default:
			return nil, false, err
		}
	}
	return nil, false, nil
}

func deleteAgain(ctx context.Context, c *zk.Client, p string) error {
	_, err := retry(ctx, func() (struct{}, error) { return struct{}{}, c.Delete(ctx, p, -1) })
	return err
}

// PriorityQueue is a Queue whose Take returns the item of lowest priority
// number first, and among equal priorities the oldest (recipes guide,
// "Priority Queues": the priority is part of the node's name).
type PriorityQueue struct{ q Queue }

// MaxPriority is the largest priority number Put accepts.
const MaxPriority = 99999

// ErrPriority means a priority out of [0, MaxPriority].
var ErrPriority = errors.New("recipe: priority out of range")

// NewPriorityQueue returns the priority queue under dir.
func NewPriorityQueue(c *zk.Client, dir string, acl []zk.ACL) *PriorityQueue {
	return &PriorityQueue{Queue{c: c, dir: dir, acl: orOpen(acl), order: func(a, b node) int {
		// Kinds are "p" and a zero-padded priority: they compare as text.
		return strings.Compare(a.kind, b.kind)
	}}}
}

// Put adds an item with priority prio (0 is the most urgent).
func (p *PriorityQueue) Put(ctx context.Context, data []byte, prio int) error {
	if prio < 0 || prio > MaxPriority {
		return fmt.Errorf("%w: %d", ErrPriority, prio)
	}
	q := &p.q
	if err := ensurePath(ctx, q.c, q.dir, q.acl); err != nil {
		return err
	}
	_, err := createSeq(ctx, q.c, q.dir, fmt.Sprintf("p%05d", prio), data, zk.PersistentSequential, q.acl)
	return err
}

// Take removes and returns the most urgent item, blocking while the queue
// is empty (as Queue.Take).
func (p *PriorityQueue) Take(ctx context.Context) ([]byte, error) { return p.q.Take(ctx) }
