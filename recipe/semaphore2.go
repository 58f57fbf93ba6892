package recipe

import (
	"context"
	"errors"
	"path"
	"slices"

	"github.com/zoohq/zoo/zk"
)

// leaseName is the name Curator's InterProcessSemaphoreV2 gives leases.
const leaseName = "lease-"

// InterProcessSemaphoreV2 is Curator's InterProcessSemaphoreV2: at most
// maxLeases leases are out at once. A lease is a protected ephemeral
// sequential node path/leases/_c_<uuid>-lease-N; a contender takes the
// InterProcessMutex path/locks, adds its lease, waits (still holding the
// lock, so contenders queue on it in order) until at most maxLeases
// leases exist, and releases the lock. Java processes using Curator's
// InterProcessSemaphoreV2 on the same path share the leases. Every user
// of a path must agree on maxLeases.
type InterProcessSemaphoreV2 struct {
	c    *zk.Client
	dir  string
	max  int
	data []byte
	acl  []zk.ACL
}

// NewInterProcessSemaphoreV2 returns a semaphore of maxLeases leases at
// path. Leases hold no data.
func NewInterProcessSemaphoreV2(c *zk.Client, path string, maxLeases int, acl []zk.ACL) *InterProcessSemaphoreV2 {
	return &InterProcessSemaphoreV2{c: c, dir: path, max: maxLeases, acl: orOpen(acl)}
}

// Lease is one lease of an InterProcessSemaphoreV2.
type Lease struct {
	c    *zk.Client
	Path string // the lease's node
}

// Close returns the lease. A lease whose node is already gone (its
// session ended) is not an error.
func (l *Lease) Close(ctx context.Context) error { return deleteNode(ctx, l.c, l.Path) }

// Acquire blocks until it holds a lease, or ctx ends.
func (s *InterProcessSemaphoreV2) Acquire(ctx context.Context) (*Lease, error) {
	if s.max <= 0 {
		return nil, errors.New("recipe: semaphore with no leases")
	}
	// A mutex per call: the mutex is reentrant per value, and two
	// concurrent Acquire calls must queue on it like two processes.
	lock := NewInterProcessMutex(s.c, s.dir+"/locks", s.acl)
	if err := lock.Acquire(ctx); err != nil {
		return nil, err
	}
	defer func() { _ = lock.Release(ctx) }()
	leases := s.dir + "/leases"
	for {
		node, err := createInLine(ctx, s.c, leases, leaseName, s.data, s.acl)
		if err != nil {
			return nil, err
		}
		ok, err := s.waitRoom(ctx, leases, path.Base(node))
		if err != nil {
			_ = deleteNode(ctx, s.c, node)
			return nil, err
		}
		if ok {
			return &Lease{c: s.c, Path: node}, nil
		}
		// Our node vanished (Curator's RETRY_DUE_TO_MISSING_NODE): again.
	}
}

// waitRoom waits until the leases number at most max; false if ours is
// gone.
func (s *InterProcessSemaphoreV2) waitRoom(ctx context.Context, leases, ours string) (bool, error) {
	for {
		kids, ch, err := retry2(ctx, func() ([]string, <-chan zk.Event, error) {
			k, _, ch, err := s.c.ChildrenW(ctx, leases)
			return k, ch, err
		})
		if err != nil {
			return false, err
		}
		if !slices.Contains(kids, ours) || len(kids) <= s.max {
			dropWatch(ctx, s.c, ch)
			return slices.Contains(kids, ours), nil
		}
		if testHookWaiting != nil {
			testHookWaiting(leases+"/"+ours, leases)
		}
		select {
		case ev := <-ch:
			if err := watchErr(ev); err != nil {
				return false, err
			}
		case <-ctx.Done():
			dropWatch(ctx, s.c, ch)
			return false, ctx.Err()
		}
	}
}

// ParticipantNodes returns the paths of the leases out now.
func (s *InterProcessSemaphoreV2) ParticipantNodes(ctx context.Context) ([]string, error) {
	kids, err := children(ctx, s.c, s.dir+"/leases")
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := sortCurator(kids, leaseName)
	for i, k := range out {
		out[i] = s.dir + "/leases/" + k
	}
	return out, nil
}
