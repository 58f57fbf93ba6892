package zk

import "sync"

// dispatcher runs asynchronous completions and state callbacks, one at a
// time and in the order they were pushed, on its own goroutine: the Java
// client's event thread.
//
// Its queue is not bounded by count, but every entry is the completion of
// a call the caller made (and WithMaxInFlight bounds those that are still
// on the wire) or a session state change. Watch events do not pass through
// it; they go straight to their channels, which are bounded.
type dispatcher struct {
	mu       sync.Mutex
	queue    []func()
	stopping bool
	wake     chan struct{} // capacity 1
	done     chan struct{} // closed when the goroutine exits
}

func newDispatcher() *dispatcher {
	d := &dispatcher{wake: make(chan struct{}, 1), done: make(chan struct{})}
	go d.run()
	return d
}

// push queues f. After stop, f still runs if the goroutine has not yet
// drained its queue; pushes after that are dropped, which cannot happen
// for completions: every call completes before the session ends.
func (d *dispatcher) push(f func()) {
	d.mu.Lock()
	d.queue = append(d.queue, f)
	d.mu.Unlock()
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// stop lets the goroutine exit once the queue is empty.
func (d *dispatcher) stop() {
	d.mu.Lock()
	d.stopping = true
	d.mu.Unlock()
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

func (d *dispatcher) run() {
	defer close(d.done)
	for {
		d.mu.Lock()
		batch, stopping := d.queue, d.stopping
		d.queue = nil
		d.mu.Unlock()
		for i, f := range batch {
			f()
			batch[i] = nil
		}
		if len(batch) == 0 {
			if stopping {
				return
			}
			<-d.wake
		}
	}
}
