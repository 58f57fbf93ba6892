package recipe

import (
	"context"

	"github.com/zoohq/zoo/zk"
)

// RWMutex is a distributed read/write lock (recipes guide, "Shared
// Locks"): readers and writers line up as ephemeral sequential nodes
// ("<guid>-read-N", "<guid>-write-N") under dir. A reader waits only for
// the last writer before it, a writer only for the node just before it.
// Releasing a write lock wakes the readers right behind it (they may all
// proceed); nothing else wakes more than one waiter.
//
// Neither side is reentrant: RLock on an RWMutex that holds the read lock
// returns ErrHeld, and a holder of the write lock that calls RLock on the
// same value queues behind itself and blocks until ctx ends. One RWMutex
// value may hold the read lock or the write lock (or, deadlock aside,
// queue for both).
type RWMutex struct{ r, w seqLock }

// NewRWMutex returns a read/write lock on the directory dir.
func NewRWMutex(c *zk.Client, dir string, acl []zk.ACL) *RWMutex {
	acl = orOpen(acl)
	return &RWMutex{
		r: seqLock{c: c, dir: dir, kind: "read", acl: acl},
		w: seqLock{c: c, dir: dir, kind: "write", acl: acl},
	}
}

// lastWriterBefore is the reader's blocker (guide, "Shared Locks", read
// step 3).
func lastWriterBefore(ns []node, i int) string {
	for j := i - 1; j >= 0; j-- {
		if ns[j].kind == "write" {
			return ns[j].name
		}
	}
	return ""
}

// RLock blocks until the read lock is held or ctx ends.
func (m *RWMutex) RLock(ctx context.Context) error { return m.r.acquire(ctx, nil, lastWriterBefore) }

// RUnlock releases the read lock (ErrNotHeld, ErrLost as Mutex.Unlock).
func (m *RWMutex) RUnlock(ctx context.Context) error { return m.r.release(ctx) }

// RDone is closed when the read lock is lost or released.
func (m *RWMutex) RDone() <-chan struct{} { return m.r.done() }

// Lock blocks until the write lock is held or ctx ends.
func (m *RWMutex) Lock(ctx context.Context) error { return m.w.acquire(ctx, nil, firstInLine) }

// Unlock releases the write lock (ErrNotHeld, ErrLost as Mutex.Unlock).
func (m *RWMutex) Unlock(ctx context.Context) error { return m.w.release(ctx) }

// Done is closed when the write lock is lost or released.
func (m *RWMutex) Done() <-chan struct{} { return m.w.done() }
