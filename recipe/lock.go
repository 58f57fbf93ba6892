package recipe

import (
	"context"

	"github.com/zoohq/zoo/zk"
)

// Mutex is a distributed exclusive lock (recipes guide, "Locks"): each
// contender creates an ephemeral sequential node under dir and waits only
// for the node just before its own, so an Unlock wakes exactly one waiter
// and the lock is granted in the order of arrival (FIFO).
//
// A Mutex is not reentrant: Lock on a Mutex that holds the lock returns
// ErrHeld, and so does a Lock while another Lock on the same value is
// under way. One Mutex value stands for one holder; separate Mutex values
// contend with each other even when they share a Client. Its methods are
// safe for concurrent use.
type Mutex struct{ l seqLock }

// NewMutex returns a Mutex on the directory dir (created if missing),
// whose nodes get the ACL acl (zk.OpenACLUnsafe() if nil).
func NewMutex(c *zk.Client, dir string, acl []zk.ACL) *Mutex {
	return &Mutex{seqLock{c: c, dir: dir, kind: "lock", acl: orOpen(acl)}}
}

func orOpen(acl []zk.ACL) []zk.ACL {
	if acl == nil {
		return zk.OpenACLUnsafe()
	}
	return acl
}

// Lock blocks until the lock is held or ctx ends. On error the Mutex does
// not hold the lock and has withdrawn from the line.
func (m *Mutex) Lock(ctx context.Context) error { return m.l.acquire(ctx, nil, firstInLine) }

// Unlock releases the lock. It returns ErrNotHeld if the lock is not held
// and ErrLost if it had been lost while held (the caller's critical
// section may have overlapped another holder's).
func (m *Mutex) Unlock(ctx context.Context) error { return m.l.release(ctx) }

// Done returns a channel that is closed when the lock is lost (its node
// deleted, the session expired or closed) or released. While the lock is
// not held it returns a closed channel.
func (m *Mutex) Done() <-chan struct{} { return m.l.done() }

// Err returns ErrLost (wrapped) once the held lock was lost, nil while it
// is held, and ErrNotHeld when nothing is held.
func (m *Mutex) Err() error { return m.l.err() }

// Node returns the path of the lock's node while held, "" otherwise.
func (m *Mutex) Node() string { return m.l.node() }

// Token returns the fencing token of the current hold (0 when not held):
// the zxid of the create of the lock node, larger for every later holder.
func (m *Mutex) Token() FencingToken { return m.l.tok() }
