package recipe

import (
	"context"
	"sync"

	"github.com/zoohq/zoo/zk"
)

// lockName is the name Curator's InterProcessMutex gives lock nodes
// (before the protected prefix and after it the sequence number).
const lockName = "lock-"

// InterProcessMutex is Curator's InterProcessMutex: a reentrant exclusive
// lock on a path, with Curator's node layout (path/_c_<uuid>-lock-NNNNNNNNNN),
// so that it excludes Java processes holding an InterProcessMutex on the
// same path. Waiters watch only their predecessor (no herd effect).
//
// Reentrancy is per InterProcessMutex value (Go has no thread identity
// to tie it to): Acquire on a value that holds the lock counts one more
// hold, and the lock is released by the matching number of Release calls.
// Its methods are safe for concurrent use; concurrent Acquire calls on one
// value that does not hold the lock take it one after the other.
type InterProcessMutex struct {
	c    *zk.Client
	dir  string
	data []byte
	acl  []zk.ACL
	acq  chan struct{} // one acquisition at a time

	mu    sync.Mutex
	count int
	node  string
	token FencingToken
	h     *hold
}

// NewInterProcessMutex returns a lock on path (created, with its
// ancestors, as container nodes on first use). Its nodes get acl
// (zk.OpenACLUnsafe() if nil) and no data.
func NewInterProcessMutex(c *zk.Client, path string, acl []zk.ACL) *InterProcessMutex {
	return newIPMutex(c, path, nil, acl)
}

func newIPMutex(c *zk.Client, path string, data []byte, acl []zk.ACL) *InterProcessMutex {
	return &InterProcessMutex{c: c, dir: path, data: data, acl: orOpen(acl), acq: make(chan struct{}, 1)}
}

// Acquire blocks until the lock is held or ctx ends. On error nothing is
// held that was not held before, and our node has left the line.
func (m *InterProcessMutex) Acquire(ctx context.Context) error {
	if m.reenter() {
		return nil
	}
	select {
	case m.acq <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-m.acq }()
	if m.reenter() {
		return nil
	}
	node, err := createInLine(ctx, m.c, m.dir, lockName, m.data, m.acl)
	if err != nil {
		return err
	}
	if err := m.waitTurn(ctx, node); err != nil {
		_ = deleteNode(ctx, m.c, node)
		return err
	}
	zxid, err := czxid(ctx, m.c, node)
	if err != nil {
		_ = deleteNode(ctx, m.c, node)
		return err
	}
	m.mu.Lock()
	m.count, m.node, m.token = 1, node, FencingToken(zxid)
	m.h = watchHold(m.c, node)
	m.mu.Unlock()
	return nil
}

// reenter counts one more hold if the lock is held and not lost.
func (m *InterProcessMutex) reenter() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.count == 0 || m.h.err() != nil {
		return false
	}
	m.count++
	return true
}

// waitTurn waits until node is first in line (StandardLockInternalsDriver
// with one lease: watch the node just before ours).
func (m *InterProcessMutex) waitTurn(ctx context.Context, node string) error {
	for {
		sorted, i, err := lineState(ctx, m.c, m.dir, lockName, node)
		if err != nil {
			return err
		}
		if i < 0 {
			return ErrLost
		}
		if i == 0 {
			return nil
		}
		if testHookWaiting != nil {
			testHookWaiting(node, m.dir+"/"+sorted[i-1])
		}
		if err := waitDeleted(ctx, m.c, m.dir+"/"+sorted[i-1]); err != nil {
			return err
		}
	}
}

// Release undoes one Acquire; the last one deletes the lock node. It
// returns ErrNotHeld if the lock is not held, and ErrLost (wrapped) if it
// had been lost while held: the critical section may have overlapped
// another holder's.
func (m *InterProcessMutex) Release(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.count == 0 {
		return ErrNotHeld
	}
	m.count--
	if m.count > 0 {
		return m.h.err()
	}
	lost := m.h.release()
	err := deleteNode(ctx, m.c, m.node)
	m.h, m.node, m.token = nil, "", 0
	if lost != nil {
		return lost
	}
	return err
}

// IsAcquired reports whether this value holds the lock (and has not
// learned that it lost it).
func (m *InterProcessMutex) IsAcquired() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.count > 0 && m.h.err() == nil
}

// Token returns the fencing token of the current hold (0 when not held).
func (m *InterProcessMutex) Token() FencingToken {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.token
}

// Done returns a channel closed when the hold ends: the lock node was
// deleted, the session ended, or the last Release. It is closed while
// nothing is held.
func (m *InterProcessMutex) Done() <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.h == nil {
		return closedChan
	}
	return m.h.done
}

// Err returns ErrLost (wrapped) once a held lock was lost, nil while it
// is held, and ErrNotHeld when nothing is held.
func (m *InterProcessMutex) Err() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.h == nil {
		return ErrNotHeld
	}
	return m.h.err()
}

// Node returns the path of the lock node while held, "" otherwise.
func (m *InterProcessMutex) Node() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.node
}

// ParticipantNodes returns the paths of the lock nodes under path, the
// holder first (Curator's getParticipantNodes).
func (m *InterProcessMutex) ParticipantNodes(ctx context.Context) ([]string, error) {
	kids, err := children(ctx, m.c, m.dir)
	if err != nil {
		return nil, err
	}
	out := sortCurator(kids, lockName)
	for i, k := range out {
		out[i] = m.dir + "/" + k
	}
	return out, nil
}
