package recipe

import (
	"context"
	"errors"
	"sync"

	"github.com/zoohq/zoo/zk"
)

// latchName is the name Curator's LeaderLatch gives its nodes.
const latchName = "latch-"

// LeaderLatchListener is told when a LeaderLatch gains or loses
// leadership (Curator's LeaderLatchListener). Its methods run on the
// latch's goroutine, one at a time, in order; they must not block for
// long.
type LeaderLatchListener interface {
	IsLeader()
	NotLeader()
}

// LeaderLatch is Curator's LeaderLatch: every participant keeps a
// protected ephemeral sequential node path/_c_<uuid>-latch-N holding its
// id; the first in line leads, each other one watches only the one before
// it. Java processes running Curator's LeaderLatch on the same path take
// part in the same election.
//
// As in Curator (with its default error policy), leadership is given up
// as soon as the connection is lost, since the session may expire
// without the client knowing, and taken back if the node is still first
// once the session is back. If the session expires, the latch ends: Done
// is closed and Err says why (a zk.Client does not outlive its session;
// start a new latch on a new client).
type LeaderLatch struct {
	c   *zk.Client
	dir string
	id  string
	acl []zk.ACL

	mu        sync.Mutex
	started   bool
	leader    bool
	token     FencingToken
	listeners []LeaderLatchListener
	observers []chan bool
	changed   chan struct{} // closed and replaced at every change
	stop      context.CancelFunc
	done      chan struct{}
	err       error
}

// NewLeaderLatch returns a participant with id in the election at path
// (created, with its ancestors, as containers).
func NewLeaderLatch(c *zk.Client, path, id string, acl []zk.ACL) *LeaderLatch {
	return &LeaderLatch{c: c, dir: path, id: id, acl: orOpen(acl), changed: make(chan struct{}), done: make(chan struct{})}
}

// AddListener adds a listener; add them before Start to miss nothing.
func (l *LeaderLatch) AddListener(ls LeaderLatchListener) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.listeners = append(l.listeners, ls)
}

// Observe returns a channel that carries the latch's leadership: true
// when it gains it, false when it loses it. The channel holds only the
// latest value: a consumer that falls behind sees the current state, not
// every flip. It is closed when the latch ends.
func (l *LeaderLatch) Observe() <-chan bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	ch := make(chan bool, 1)
	select {
	case <-l.done:
		close(ch)
	default:
		l.observers = append(l.observers, ch)
	}
	return ch
}

// Start joins the election; the latch works in the background until
// Close or the end of the session.
func (l *LeaderLatch) Start() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.started {
		return errors.New("recipe: LeaderLatch already started")
	}
	l.started = true
	ctx, cancel := context.WithCancel(context.Background())
	l.stop = cancel
	go func() {
		err := l.run(ctx)
		l.finish(err)
	}()
	return nil
}

// Close leaves the election (deleting the node, so the next participant
// leads) and waits until the latch has stopped. It returns the error that
// had ended the latch, if any.
func (l *LeaderLatch) Close() error {
	l.mu.Lock()
	if !l.started {
		l.started = true
		l.mu.Unlock()
		l.finish(nil)
		return nil
	}
	l.mu.Unlock()
	l.stop()
	<-l.done
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// Done is closed when the latch has ended (Close, or the session ended).
func (l *LeaderLatch) Done() <-chan struct{} { return l.done }

// Err says why the latch ended: nil after Close, ErrLost (wrapping the
// session's error) if the session ended.
func (l *LeaderLatch) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// HasLeadership reports whether this participant leads now.
func (l *LeaderLatch) HasLeadership() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.leader
}

// Token returns the fencing token of the current leadership (0 when not
// leading): the zxid of the create of the leader's node.
func (l *LeaderLatch) Token() FencingToken {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.leader {
		return 0
	}
	return l.token
}

// Await blocks until this participant leads, the latch ends (ErrLost or
// ErrNotHeld after Close) or ctx ends.
func (l *LeaderLatch) Await(ctx context.Context) error {
	for {
		l.mu.Lock()
		leader, changed := l.leader, l.changed
		l.mu.Unlock()
		if leader {
			return nil
		}
		select {
		case <-changed:
		case <-l.done:
			if err := l.Err(); err != nil {
				return err
			}
			return ErrNotHeld
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Participants lists the participants in line order, the leader first.
func (l *LeaderLatch) Participants(ctx context.Context) ([]Participant, error) {
	return participants(ctx, l.c, l.dir, latchName)
}

// Leader returns the current leader, or ErrNoLeader.
func (l *LeaderLatch) Leader(ctx context.Context) (Participant, error) {
	ps, err := l.Participants(ctx)
	if err != nil {
		return Participant{}, err
	}
	if len(ps) == 0 {
		return Participant{}, ErrNoLeader
	}
	return ps[0], nil
}

// setLeader records a change and tells listeners and observers.
func (l *LeaderLatch) setLeader(leader bool, token FencingToken) {
	l.mu.Lock()
	if l.leader == leader {
		l.mu.Unlock()
		return
	}
	l.leader, l.token = leader, token
	close(l.changed)
	l.changed = make(chan struct{})
	listeners := append([]LeaderLatchListener(nil), l.listeners...)
	for _, ch := range l.observers {
		select { // keep only the latest value
		case <-ch:
		default:
		}
		ch <- leader
	}
	l.mu.Unlock()
	for _, ls := range listeners {
		if leader {
			ls.IsLeader()
		} else {
			ls.NotLeader()
		}
	}
}

func (l *LeaderLatch) finish(err error) {
	l.setLeader(false, 0)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.err = err
	for _, ch := range l.observers {
		close(ch)
	}
	l.observers = nil
	close(l.done)
}

// run takes part until ctx ends (nil) or the session ends (the error).
func (l *LeaderLatch) run(ctx context.Context) error {
	var node string
	defer func() {
		if node != "" {
			_ = deleteNode(ctx, l.c, node)
		}
	}()
	for {
		if node == "" {
			n, err := createInLine(ctx, l.c, l.dir, latchName, []byte(l.id), l.acl)
			if err != nil {
				return l.stopErr(ctx, err)
			}
			node = n
		}
		gone, err := l.follow(ctx, node)
		if err != nil {
			return l.stopErr(ctx, err)
		}
		if gone { // our node was deleted: take a new place (Curator's reset)
			l.setLeader(false, 0)
			node = ""
		}
	}
}

// stopErr turns the error that stops the latch into its Err: nil when
// closed on purpose.
func (l *LeaderLatch) stopErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	if errors.Is(err, ErrLost) {
		return err
	}
	return errors.Join(ErrLost, err)
}

// follow watches node's place in line until something changes: it
// returns gone=true if node was deleted, false to look again.
func (l *LeaderLatch) follow(ctx context.Context, node string) (gone bool, err error) {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// A persistent watch on our own node tells of its deletion and of
	// the connection's loss and return; Watch removes it when we return.
	own, err := retry(wctx, func() (<-chan zk.Event, error) { return l.c.Watch(wctx, node, zk.WatchPersistent) })
	if err != nil {
		return false, err
	}
	for {
		sorted, i, err := lineState(wctx, l.c, l.dir, latchName, node)
		if err != nil {
			return false, err
		}
		if i < 0 {
			return true, nil
		}
		var prev <-chan zk.Event
		if i == 0 {
			zxid, err := czxid(wctx, l.c, node)
			if errors.Is(err, zk.ErrNoNode) {
				return true, nil
			}
			if err != nil {
				return false, err
			}
			l.setLeader(true, FencingToken(zxid))
		} else {
			l.setLeader(false, 0)
			ok, _, ch, err := retry3(wctx, func() (bool, zk.Stat, <-chan zk.Event, error) {
				return l.c.ExistsW(wctx, l.dir+"/"+sorted[i-1])
			})
			if err != nil {
				return false, err
			}
			if !ok {
				dropWatch(wctx, l.c, ch)
				continue
			}
			prev = ch
		}
		again, gone, err := l.wait(wctx, own, prev)
		if prev != nil {
			dropWatch(wctx, l.c, prev) // unless it fired: ErrNoWatcher, locally
		}
		if !again {
			return gone, err
		}
	}
}

// wait waits for an event on our node or the one before it. It returns
// again=true to look at the line again.
func (l *LeaderLatch) wait(ctx context.Context, own, prev <-chan zk.Event) (again, gone bool, err error) {
	for {
		select {
		case ev, ok := <-own:
			switch {
			case !ok:
				return false, false, ErrLost
			case ev.Type == zk.EventNodeDeleted:
				return false, true, nil
			case ev.Type == zk.EventNotWatching:
				return false, false, watchErr(ev)
			case ev.Type == zk.EventSession && ev.State == zk.StateDisconnected:
				l.setLeader(false, 0) // the session may expire unseen
			case ev.Type == zk.EventSession:
				return true, false, nil // back: look again
			}
		case ev := <-prev:
			if err := watchErr(ev); err != nil {
				return false, false, err
			}
			return true, false, nil
		case <-ctx.Done():
			return false, false, ctx.Err()
		}
	}
}
