package main

import (
	"errors"
	"log"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
)

// attempt is one setData, with when it was issued and answered.
type attempt struct {
	issued, done time.Time
	err          error
	server       string // the server the session was on when it was answered
}

// writer issues setData calls one after another on one session. A call
// unanswered after opts.writeWait is left in flight and the next one is
// issued, so that a request stuck on a dead leader does not hide when the
// ensemble takes writes again; every call's outcome is recorded.
type writer struct {
	conn *zk.Conn
	quit chan struct{}
	done chan struct{}
	once sync.Once

	mu       sync.Mutex
	attempts []attempt
	events   []timedEvent
	inflight int
}

type timedEvent struct {
	at time.Time
	ev zk.Event
}

// quietLogger drops go-zookeeper's messages unless -v is given: it logs
// every refused reconnection attempt.
type quietLogger struct{ verbose bool }

func (l quietLogger) Printf(f string, a ...any) {
	if l.verbose {
		log.Printf("zk: "+f, a...)
	}
}

// hosts cycles through the servers without go-zookeeper's default pause of
// one second after every round of failed connections, which would round
// the measured failover up to whole seconds; it pauses 10 ms instead.
type hosts struct {
	servers []string
	next    int
	tried   int
}

func (h *hosts) Init(servers []string) error { h.servers = servers; return nil }
func (h *hosts) Len() int                    { return len(h.servers) }
func (h *hosts) Connected()                  { h.tried = 0 }
func (h *hosts) Next() (string, bool) {
	if h.tried >= len(h.servers) {
		time.Sleep(10 * time.Millisecond)
	}
	s := h.servers[h.next%len(h.servers)]
	h.next++
	h.tried++
	return s, false
}

func newWriter(servers []string, o options) (*writer, error) {
	w := &writer{quit: make(chan struct{}), done: make(chan struct{})}
	conn, _, err := zk.Connect(servers, o.session,
		zk.WithHostProvider(&hosts{}),
		zk.WithLogger(quietLogger{o.verbose}),
		zk.WithEventCallback(w.onEvent))
	if err != nil {
		return nil, err
	}
	w.conn = conn
	if _, err := conn.Create(probePath, []byte("x"), 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
		conn.Close()
		return nil, err
	}
	go w.loop(o.writeWait)
	return w, nil
}

func (w *writer) onEvent(ev zk.Event) {
	if ev.Type != zk.EventSession {
		return
	}
	w.mu.Lock()
	w.events = append(w.events, timedEvent{time.Now(), ev})
	w.mu.Unlock()
}

func (w *writer) loop(wait time.Duration) {
	defer close(w.done)
	data := make([]byte, 1024)
	for {
		select {
		case <-w.quit:
			return
		default:
		}
		ch := make(chan error, 1)
		w.mu.Lock()
		w.inflight++
		busy := w.inflight > 100
		w.mu.Unlock()
		if busy { // too many stuck calls: wait for some to end
			w.mu.Lock()
			w.inflight--
			w.mu.Unlock()
			time.Sleep(10 * time.Millisecond)
			continue
		}
		go w.set(data, ch)
		select {
		case err := <-ch:
			if err != nil {
				time.Sleep(5 * time.Millisecond)
			}
		case <-time.After(wait):
		case <-w.quit:
			return
		}
	}
}

func (w *writer) set(data []byte, ch chan<- error) {
	a := attempt{issued: time.Now()}
	_, a.err = w.conn.Set(probePath, data, -1)
	a.done = time.Now()
	a.server = w.conn.Server()
	w.mu.Lock()
	w.attempts = append(w.attempts, a)
	w.inflight--
	w.mu.Unlock()
	ch <- a.err
}

func (w *writer) close() {
	w.once.Do(func() {
		close(w.quit)
		<-w.done
		w.conn.Close()
	})
}

// markKill keeps only what happens from t on (older attempts are not needed).
func (w *writer) markKill(t time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.attempts = nil
	w.events = nil
}

// firstSuccess returns the earliest-answered successful write issued at or
// after t.
func (w *writer) firstSuccess(t time.Time) (attempt, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var best attempt
	found := false
	for _, a := range w.attempts {
		if a.err == nil && !a.issued.Before(t) && (!found || a.done.Before(best.done)) {
			best, found = a, true
		}
	}
	return best, found
}

// waitSuccess waits up to max for a successful write issued after t.
func (w *writer) waitSuccess(t time.Time, max time.Duration) bool {
	deadline := time.Now().Add(max)
	for time.Now().Before(deadline) {
		if _, ok := w.firstSuccess(t); ok {
			return true
		}
		time.Sleep(2 * time.Millisecond)
	}
	return false
}

// recentSuccess reports whether a write issued within the last d succeeded.
func (w *writer) recentSuccess(d time.Duration) bool {
	_, ok := w.firstSuccess(time.Now().Add(-d))
	return ok
}

// after summarises what followed the kill at t: the first successful write,
// the time until the session was usable again (the first HasSession event),
// and how many writes failed, by error.
func (w *writer) after(t time.Time) (attempt, time.Duration, map[string]int) {
	first, _ := w.firstSuccess(t)
	w.mu.Lock()
	defer w.mu.Unlock()
	failures := map[string]int{}
	for _, a := range w.attempts {
		if a.err != nil {
			failures[a.err.Error()]++
		}
	}
	reconnect := time.Duration(-1)
	for _, e := range w.events {
		if e.ev.State == zk.StateHasSession {
			reconnect = e.at.Sub(t)
			break
		}
	}
	return first, reconnect, failures
}
