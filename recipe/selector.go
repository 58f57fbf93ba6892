package recipe

import (
	"context"
	"errors"
	"sync"

	"github.com/zoohq/zoo/zk"
)

// LeadershipFunc is the work of a leader (Curator's takeLeadership). It
// leads while it runs: when it returns, leadership is given up. Its ctx
// is cancelled when leadership is lost (the lock node deleted, the
// connection or session lost, Close); it must then stop at once. token
// is the leadership's fencing token.
type LeadershipFunc func(ctx context.Context, token FencingToken) error

// LeaderSelector is Curator's LeaderSelector: the participants contend for
// an InterProcessMutex on path whose nodes hold their ids; the holder
// runs its LeadershipFunc, and gives up leadership when it returns. With
// AutoRequeue the participant then queues again, else Requeue does. Java
// processes running Curator's LeaderSelector on the same path take part
// in the same election.
type LeaderSelector struct {
	c    *zk.Client
	dir  string
	id   string
	acl  []zk.ACL
	lead LeadershipFunc

	mu          sync.Mutex
	autoRequeue bool
	started     bool
	leading     bool
	queue       chan struct{} // capacity 1: a request to take part once more
	stop        context.CancelFunc
	done        chan struct{}
	err         error
	down        bool               // the connection is down (monitor)
	cancelLead  context.CancelFunc // ends the running leadership
}

// NewLeaderSelector returns a participant with id in the election at
// path, which runs lead whenever it leads.
func NewLeaderSelector(c *zk.Client, path, id string, lead LeadershipFunc, acl []zk.ACL) *LeaderSelector {
	return &LeaderSelector{c: c, dir: path, id: id, acl: orOpen(acl), lead: lead,
		queue: make(chan struct{}, 1), done: make(chan struct{})}
}

// AutoRequeue makes the participant queue again each time its
// leadership ends (Curator's autoRequeue). Call it before Start.
func (s *LeaderSelector) AutoRequeue() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.autoRequeue = true
}

// Start queues the participant for leadership once.
func (s *LeaderSelector) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return errors.New("recipe: LeaderSelector already started")
	}
	s.started = true
	ctx, cancel := context.WithCancel(context.Background())
	s.stop = cancel
	s.queue <- struct{}{}
	go func() {
		err := s.run(ctx)
		s.mu.Lock()
		s.err = err
		s.mu.Unlock()
		close(s.done)
	}()
	return nil
}

// Requeue queues the participant again if it is neither queued nor
// leading; it reports whether it did.
func (s *LeaderSelector) Requeue() bool {
	select {
	case s.queue <- struct{}{}:
		return true
	default:
		return false
	}
}

// HasLeadership reports whether the LeadershipFunc is running.
func (s *LeaderSelector) HasLeadership() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.leading
}

// Participants lists the participants in line order, the leader first.
func (s *LeaderSelector) Participants(ctx context.Context) ([]Participant, error) {
	return participants(ctx, s.c, s.dir, lockName)
}

// Close leaves the election: a running LeadershipFunc's ctx is cancelled
// and Close waits for it to return. It returns the error that ended the
// selector (ErrLost if the session ended), nil otherwise.
func (s *LeaderSelector) Close() error {
	s.mu.Lock()
	started := s.started
	s.started = true
	s.mu.Unlock()
	if !started {
		return nil
	}
	s.stop()
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Done is closed once the selector has stopped (Close or session end).
func (s *LeaderSelector) Done() <-chan struct{} { return s.done }

// run takes the lock once per queue request until ctx ends.
func (s *LeaderSelector) run(ctx context.Context) error {
	// A persistent watch on the election's directory, set before any
	// leadership, tells of every connection loss while leading (its
	// node events are ignored). One set after taking the lock could miss
	// a loss that happened in between.
	var wg sync.WaitGroup
	defer wg.Wait() // after cancel: the monitor ends once the watch is removed
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	mon, err := retry(ctx, func() (<-chan zk.Event, error) { return s.c.Watch(ctx, s.dir, zk.WatchPersistent) })
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return errors.Join(ErrLost, err)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		s.monitor(mon)
	}()
	for {
		select {
		case <-s.queue:
		case <-ctx.Done():
			return nil
		case <-s.c.Done():
			return errors.Join(ErrLost, s.c.Err())
		}
		if err := s.once(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return errors.Join(ErrLost, err)
		}
		s.mu.Lock()
		requeue := s.autoRequeue
		s.mu.Unlock()
		if requeue {
			s.Requeue()
		}
	}
}

// monitor follows the connection: while it is down, no leadership.
func (s *LeaderSelector) monitor(mon <-chan zk.Event) {
	for ev := range mon {
		down := ev.Type == zk.EventNotWatching || (ev.Type == zk.EventSession && ev.State == zk.StateDisconnected)
		up := ev.Type == zk.EventSession && !down
		if !down && !up {
			continue
		}
		s.mu.Lock()
		s.down = down
		if down && s.cancelLead != nil {
			s.cancelLead()
		}
		s.mu.Unlock()
	}
}

// once waits for the lock, leads, and releases. An error means the
// session ended (or ctx did).
func (s *LeaderSelector) once(ctx context.Context) error {
	m := newIPMutex(s.c, s.dir, []byte(s.id), s.acl)
	if err := m.Acquire(ctx); err != nil {
		return err
	}
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	lost := make(chan struct{})
	go func() { // ends leadership when the lock node goes or the session ends
		defer close(lost)
		select {
		case <-m.Done():
			cancel()
		case <-lctx.Done():
		}
	}()
	s.mu.Lock()
	s.leading, s.cancelLead = true, cancel
	if s.down { // the connection went down after the lock was taken
		cancel()
	}
	s.mu.Unlock()
	_ = s.lead(lctx, m.Token()) // its error ends only this leadership, as in Curator
	s.mu.Lock()
	s.leading, s.cancelLead = false, nil
	s.mu.Unlock()
	cancel()
	<-lost
	_ = m.Release(context.WithoutCancel(ctx))
	return s.c.Err()
}
