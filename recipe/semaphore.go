package recipe

import (
	"context"

	"github.com/zoohq/zoo/zk"
)

// Semaphore lets at most n holders in at once. Contenders line up as
// ephemeral sequential nodes under dir; the first n hold it.
//
// A waiter may proceed when any node before it goes, so no single node
// can be watched (a waiter watching one predecessor would stay blocked
// when another holder leaves first): waiters watch the directory's
// children, and each release wakes every waiter (herd effect), as with
// the guide's queue. It is not reentrant: Acquire on a holding Semaphore
// returns ErrHeld.
type Semaphore struct {
	l seqLock
	n int
}

// NewSemaphore returns a semaphore of n places under dir. All users of a
// directory must agree on n.
func NewSemaphore(c *zk.Client, dir string, n int, acl []zk.ACL) *Semaphore {
	return &Semaphore{l: seqLock{c: c, dir: dir, kind: "sem", acl: orOpen(acl)}, n: n}
}

// Acquire blocks until this holder is among the first n, or ctx ends.
func (s *Semaphore) Acquire(ctx context.Context) error {
	return s.l.acquireWatchingDir(ctx, func(i int) bool { return i < s.n })
}

// Release gives the place up (ErrNotHeld, ErrLost as Mutex.Unlock).
func (s *Semaphore) Release(ctx context.Context) error { return s.l.release(ctx) }

// Done is closed when the place is lost or released.
func (s *Semaphore) Done() <-chan struct{} { return s.l.done() }
