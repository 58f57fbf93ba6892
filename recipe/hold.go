package recipe

import (
	"context"
	"errors"
	"sync"

	"github.com/zoohq/zoo/zk"
)

// hold watches the ephemeral node that stands for something held (a
// lock, a leadership) and closes done when it is lost: the node was
// deleted, or the session ended. It also closes revoked when someone asks
// the holder to let go (see Revoke).
type hold struct {
	done    chan struct{}
	revoked chan struct{}
	stop    context.CancelFunc
	wg      sync.WaitGroup
	mu      sync.Mutex
	lost    error
	closed  bool
}

func watchHold(c *zk.Client, p string) *hold {
	ctx, cancel := context.WithCancel(context.Background())
	h := &hold{done: make(chan struct{}), revoked: make(chan struct{}), stop: cancel}
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		if err := h.watch(ctx, c, p); err != nil {
			h.finish(err)
		}
	}()
	return h
}

// watch returns nil when stopped, or the reason the hold was lost.
func (h *hold) watch(ctx context.Context, c *zk.Client, p string) error {
	for {
		data, _, ch, err := retry3(ctx, func() ([]byte, zk.Stat, <-chan zk.Event, error) {
			return c.GetW(ctx, p)
		})
		switch {
		case ctx.Err() != nil:
			return nil
		case errors.Is(err, zk.ErrNoNode):
			return ErrLost
		case err != nil:
			return errors.Join(ErrLost, err)
		}
		if string(data) == revokeRequest {
			h.revoke()
		}
		select {
		case ev := <-ch:
			if ev.Type == zk.EventNodeDeleted {
				return ErrLost
			}
			if err := watchErr(ev); err != nil {
				return err
			}
		case <-ctx.Done():
			return nil
		}
	}
}

func (h *hold) revoke() {
	h.mu.Lock()
	defer h.mu.Unlock()
	select {
	case <-h.revoked:
	default:
		close(h.revoked)
	}
}

func retry3[A, B, C any](ctx context.Context, f func() (A, B, C, error)) (A, B, C, error) {
	for {
		a, b, c, err := f()
		if err == nil || !errors.Is(err, zk.ErrConnectionLoss) || ctx.Err() != nil {
			return a, b, c, err
		}
	}
}

// finish closes done once, recording why.
func (h *hold) finish(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	h.closed = true
	h.lost = err
	close(h.done)
}

// release stops watching (the holder gives the node up on purpose) and
// reports whether the hold had been lost before.
func (h *hold) release() error {
	h.stop()
	h.wg.Wait()
	h.mu.Lock()
	lost := h.lost
	h.mu.Unlock()
	h.finish(nil)
	return lost
}

func (h *hold) err() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.lost
}

// closedChan is what Done returns while nothing is held.
var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// seqLock is the machinery shared by Mutex, Election and RWMutex: an
// ephemeral sequential node under dir, a rule saying which node it waits
// for, and a hold once it is first in line.
type seqLock struct {
	c    *zk.Client
	dir  string
	kind string
	acl  []zk.ACL

	mu    sync.Mutex
	busy  bool   // an acquire is under way
	name  string // our node while held
	token FencingToken
	h     *hold
}

func (l *seqLock) acquire(ctx context.Context, data []byte, blocker func([]node, int) string) error {
	return l.acquireWith(ctx, data, func(name string) error {
		return awaitTurn(ctx, l.c, l.dir, name, blocker)
	})
}

// acquireWith creates our node and calls wait to wait for our turn.
func (l *seqLock) acquireWith(ctx context.Context, data []byte, wait func(name string) error) error {
	l.mu.Lock()
	if l.h != nil || l.busy {
		l.mu.Unlock()
		return ErrHeld
	}
	l.busy = true
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		l.busy = false
		l.mu.Unlock()
	}()
	var name string
	for {
		// The directory is a container, so that it does not outlive its
		// last contender; the server may remove it between the two calls.
		if err := ensureContainer(ctx, l.c, l.dir, l.acl); err != nil {
			return err
		}
		var err error
		name, err = createSeq(ctx, l.c, l.dir, l.kind, data, zk.EphemeralSequential, l.acl)
		if errors.Is(err, zk.ErrNoNode) && ctx.Err() == nil {
			continue
		}
		if err != nil {
			return err
		}
		break
	}
	if err := wait(name); err != nil {
		// Give up our place so that we do not block those behind us.
		_ = deleteNode(ctx, l.c, l.dir+"/"+name)
		return err
	}
	zxid, err := czxid(ctx, l.c, l.dir+"/"+name)
	if err != nil {
		_ = deleteNode(ctx, l.c, l.dir+"/"+name)
		if errors.Is(err, zk.ErrNoNode) {
			return ErrLost
		}
		return err
	}
	l.mu.Lock()
	l.name, l.token = name, FencingToken(zxid)
	l.h = watchHold(l.c, l.dir+"/"+name)
	l.mu.Unlock()
	return nil
}

// release deletes our node. It returns ErrLost if the hold had been lost
// before, ErrNotHeld if nothing was held.
func (l *seqLock) release(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.h == nil {
		return ErrNotHeld
	}
	lost := l.h.release()
	err := deleteNode(ctx, l.c, l.dir+"/"+l.name)
	l.h, l.name, l.token = nil, "", 0
	if lost != nil {
		return lost
	}
	return err
}

func (l *seqLock) done() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.h == nil {
		return closedChan
	}
	return l.h.done
}

func (l *seqLock) err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.h == nil {
		return ErrNotHeld
	}
	return l.h.err()
}

// revokedCh returns the hold's revoked channel, or nil (blocks forever)
// when nothing is held.
func (l *seqLock) revokedCh() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.h == nil {
		return nil
	}
	return l.h.revoked
}

// tok returns the fencing token of the hold, 0 when nothing is held.
func (l *seqLock) tok() FencingToken {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.token
}

// node returns the path of our node while held, "" otherwise.
func (l *seqLock) node() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.h == nil {
		return ""
	}
	return l.dir + "/" + l.name
}

// firstInLine is the blocker of an exclusive lock: wait for the node just
// before ours (recipes guide, "Locks", step 4).
func firstInLine(ns []node, i int) string {
	if i == 0 {
		return ""
	}
	return ns[i-1].name
}

// acquireWatchingDir is acquire for rules that depend on the whole line
// (Semaphore): it waits on the children of dir until ok(index) holds.
func (l *seqLock) acquireWatchingDir(ctx context.Context, ok func(i int) bool) error {
	return l.acquireWith(ctx, nil, func(name string) error {
		return awaitPosition(ctx, l.c, l.dir, name, ok)
	})
}

// awaitPosition waits, watching dir's children, until ok(index of self).
func awaitPosition(ctx context.Context, c *zk.Client, dir, self string, ok func(i int) bool) error {
	for {
		kids, ch, err := retry2(ctx, func() ([]string, <-chan zk.Event, error) {
			k, _, ch, err := c.ChildrenW(ctx, dir)
			return k, ch, err
		})
		if err != nil {
			return err
		}
		i := indexOf(sortedNodes(kids), self)
		if i < 0 || ok(i) {
			dropWatch(ctx, c, ch)
			if i < 0 {
				return ErrLost
			}
			return nil
		}
		if testHookWaiting != nil {
			testHookWaiting(dir+"/"+self, dir)
		}
		select {
		case ev := <-ch:
			if err := watchErr(ev); err != nil {
				return err
			}
			if testHookWoken != nil {
				testHookWoken(dir + "/" + self)
			}
		case <-ctx.Done():
			dropWatch(ctx, c, ch)
			return ctx.Err()
		}
	}
}
