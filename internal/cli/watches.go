package cli

import (
	"context"
	"time"

	"github.com/zoohq/zoo/zk"
)

// addWatch remembers a watch's channel so that drain prints its events.
func (s *shell) addWatch(ch <-chan zk.Event) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.watches = append(s.watches, ch)
}

// drain prints the events waiting in the watch channels. The client puts
// an event in its channel before it hands out any later reply, so
// draining after each command prints the events a command caused before
// the next command's output, in a deterministic order.
//
// zkCli registers one Watcher for everything, and the Java client calls a
// watcher once per notification however many of its watches match; our
// client sends the notification to each matching watch's channel. So an
// event seen on several channels is printed as often as the channel that
// saw it most often holds it.
func (s *shell) drain() {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	printed := map[eventKey]int{}
	live := s.watches[:0]
	for _, ch := range s.watches {
		seen := map[eventKey]int{}
		open := drainOne(ch, func(ev zk.Event) {
			k := eventKey{ev.Type, ev.Path}
			if seen[k]++; seen[k] > printed[k] {
				printed[k]++
				s.printEvent(ev)
			}
		})
		if open {
			live = append(live, ch)
		}
	}
	clear(s.watches[len(live):])
	s.watches = live
}

// eventKey identifies a notification among those waiting.
type eventKey struct {
	typ  zk.EventType
	path string
}

// drainOne passes ch's waiting events to f and says whether ch is still
// open.
func drainOne(ch <-chan zk.Event, f func(zk.Event)) bool {
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				return false
			}
			f(ev)
		default:
			return true
		}
	}
}

// printEvent prints a node event as zkCli's watcher does. Session events
// are printed once, by the state callback, not per watch; a watch that
// ended with its session has nothing to say.
func (s *shell) printEvent(ev zk.Event) {
	if ev.Type == zk.EventSession || ev.Type == zk.EventNotWatching {
		return
	}
	s.event("SyncConnected", ev.Type.String(), ev.Path)
}

// pollWatches prints events as they arrive while the terminal waits for
// input, until the returned function is called.
func (s *shell) pollWatches() (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				s.drain()
			}
		}
	}()
	return func() { cancel(); <-done }
}

// cmdAddWatch is "addWatch [-m mode] path".
func cmdAddWatch(s *shell, c *cmdLine) error {
	mode := zk.WatchPersistentRecursive
	if m, ok := c.opts['m']; ok {
		switch m {
		case "PERSISTENT":
			mode = zk.WatchPersistent
		case "PERSISTENT_RECURSIVE":
		default:
			return errUsage
		}
	}
	p := c.args[0]
	if err := validatePath(p, false); err != nil {
		return err
	}
	ctx, cancel := s.ctx()
	defer cancel()
	ch, err := s.client.AddWatch(ctx, p, mode)
	if err != nil {
		return err
	}
	s.addWatch(ch)
	return nil
}

// cmdRemoveWatches is "removewatches path [-c|-d|-a] [-l]". The client
// library has no local-only removal, so -l removes on the server too.
func cmdRemoveWatches(s *shell, c *cmdLine) error {
	t := zk.WatcherAny
	switch {
	case c.has('c'):
		t = zk.WatcherChildren
	case c.has('d'):
		t = zk.WatcherData
	}
	p := c.args[0]
	if err := validatePath(p, false); err != nil {
		return err
	}
	ctx, cancel := s.ctx()
	defer cancel()
	return s.client.RemoveWatches(ctx, p, t)
}

// cmdPrintWatches is "printwatches on|off"; without an argument it says
// which.
func cmdPrintWatches(s *shell, c *cmdLine) error {
	if len(c.args) == 0 {
		state := "on"
		if s.quiet.Load() {
			state = "off"
		}
		s.printf("printwatches is %s\n", state)
		return nil
	}
	s.quiet.Store(c.args[0] != "on")
	return nil
}
