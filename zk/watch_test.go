package zk

import (
	"errors"
	"fmt"
	"strconv"
	"testing"
)

// Ref: programmer's guide section 4, "ZooKeeper Watches": getData and
// exists set data watches, getChildren child watches; which changes fire
// them; a watch is a one-time trigger.
func TestOneTimeWatches(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e *env) {
		c := e.connect()
		other := e.connect()
		ctx := ctx(t)
		acl := OpenACLUnsafe()
		mk := func(p string) {
			t.Helper()
			_, _, err := other.Create(ctx, p, nil, Persistent, acl)
			must(t, "create "+p, err)
		}
		mk(e.p("d"))
		_, _, ch, err := c.GetW(ctx, e.p("d"))
		must(t, "getW", err)
		_, err = other.Set(ctx, e.p("d"), []byte("1"), -1)
		must(t, "set", err)
		expectEvent(t, ch, EventNodeDataChanged, e.p("d"))
		expectClosed(t, ch)

		_, _, ch, err = c.GetW(ctx, e.p("d"))
		must(t, "getW", err)
		must(t, "delete", other.Delete(ctx, e.p("d"), -1))
		expectEvent(t, ch, EventNodeDeleted, e.p("d"))
		expectClosed(t, ch)

		ok, _, ch, err := c.ExistsW(ctx, e.p("d"))
		if err != nil || ok {
			t.Fatalf("existsW on a missing node = %v, %v", ok, err)
		}
		mk(e.p("d"))
		expectEvent(t, ch, EventNodeCreated, e.p("d"))
		expectClosed(t, ch)

		ok, _, ch, err = c.ExistsW(ctx, e.p("d"))
		if err != nil || !ok {
			t.Fatalf("existsW on an existing node = %v, %v", ok, err)
		}
		_, err = other.Set(ctx, e.p("d"), nil, -1)
		must(t, "set", err)
		expectEvent(t, ch, EventNodeDataChanged, e.p("d"))

		_, _, ch, err = c.ChildrenW(ctx, e.p("d"))
		must(t, "childrenW", err)
		_, err = other.Set(ctx, e.p("d"), []byte("data changes do not fire child watches"), -1)
		must(t, "set", err)
		mk(e.p("d/kid"))
		expectEvent(t, ch, EventNodeChildrenChanged, e.p("d"))
		expectClosed(t, ch)

		_, _, ch, err = c.ChildrenW(ctx, e.p("d/kid"))
		must(t, "childrenW", err)
		must(t, "delete", other.Delete(ctx, e.p("d/kid"), -1))
		expectEvent(t, ch, EventNodeDeleted, e.p("d/kid"))

		// Ref: paper section 2.2: getData sets no watch on a missing node.
		_, _, ch, err = c.GetW(ctx, e.p("missing"))
		if !errors.Is(err, ErrNoNode) || ch != nil {
			t.Errorf("getW on a missing node = %v, %v", ch, err)
		}
	})
}

// Ref: programmer's guide, "Things to Remember about Watches": a watch is
// triggered once for a notification even if it was set by two calls. Each
// call's channel gets the one event once; nothing fires twice.
func TestWatchSetTwiceFiresOnce(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e *env) {
		c := e.connect()
		ctx := ctx(t)
		_, _, err := c.Create(ctx, e.p("x"), nil, Persistent, OpenACLUnsafe())
		must(t, "create", err)
		_, _, a, err := c.GetW(ctx, e.p("x"))
		must(t, "getW", err)
		_, _, b, err := c.ExistsW(ctx, e.p("x"))
		must(t, "existsW", err)
		_, _, d, err := c.GetW(ctx, e.p("x"))
		must(t, "getW", err)
		_, err = c.Set(ctx, e.p("x"), []byte("1"), -1)
		must(t, "set", err)
		_, err = c.Set(ctx, e.p("x"), []byte("2"), -1)
		must(t, "set", err)
		for _, ch := range []<-chan Event{a, b, d} {
			expectEvent(t, ch, EventNodeDataChanged, e.p("x"))
			expectClosed(t, ch)
		}
	})
}

// Ref: paper section 2.3 and programmer's guide 4.1: "A client will see a
// watch event for a znode it is watching before seeing the new data that
// corresponds to that znode." Here: once a read returns the new data, the
// event is already in the watch's channel.
func TestWatchEventBeforeNewData(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e *env) {
		c := e.connect()
		writer := e.connect()
		ctx := ctx(t)
		_, _, err := writer.Create(ctx, e.p("cfg"), []byte("0"), Persistent, OpenACLUnsafe())
		must(t, "create", err)
		for i := 1; i <= 50; i++ {
			_, _, ch, err := c.GetW(ctx, e.p("cfg"))
			must(t, "getW", err)
			_, err = writer.Set(ctx, e.p("cfg"), []byte(strconv.Itoa(i)), -1)
			must(t, "set", err)
			for {
				data, _, err := c.Get(ctx, e.p("cfg"))
				must(t, "get", err)
				if string(data) != strconv.Itoa(i) {
					continue // this server has not applied the write yet
				}
				select {
				case ev := <-ch:
					if ev.Type != EventNodeDataChanged {
						t.Fatalf("event %+v", ev)
					}
				default:
					t.Fatalf("round %d: read the new data before the watch event", i)
				}
				break
			}
		}
	})
}

// Ref: the Java client's addWatch (ZooKeeper 3.6+): persistent watches stay
// after firing; recursive ones cover the subtree and get no child events.
func TestPersistentWatches(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e *env) {
		c := e.connect()
		other := e.connect()
		ctx := ctx(t)
		acl := OpenACLUnsafe()
		_, _, err := other.Create(ctx, e.p("p"), nil, Persistent, acl)
		must(t, "create", err)
		pch, err := c.AddWatch(ctx, e.p("p"), WatchPersistent)
		must(t, "addWatch", err)
		rch, err := c.AddWatch(ctx, e.root, WatchPersistentRecursive)
		must(t, "addWatch recursive", err)

		_, err = other.Set(ctx, e.p("p"), []byte("1"), -1)
		must(t, "set", err)
		_, _, err = other.Create(ctx, e.p("p/kid"), nil, Persistent, acl)
		must(t, "create kid", err)
		_, err = other.Set(ctx, e.p("p/kid"), []byte("1"), -1)
		must(t, "set kid", err)
		_, err = other.Set(ctx, e.p("p"), []byte("2"), -1)
		must(t, "set", err)
		must(t, "delete kid", other.Delete(ctx, e.p("p/kid"), -1))
		must(t, "delete", other.Delete(ctx, e.p("p"), -1))

		for _, want := range []Event{
			{Type: EventNodeDataChanged, Path: e.p("p")},
			{Type: EventNodeChildrenChanged, Path: e.p("p")},
			{Type: EventNodeDataChanged, Path: e.p("p")},
			{Type: EventNodeChildrenChanged, Path: e.p("p")},
			{Type: EventNodeDeleted, Path: e.p("p")},
		} {
			expectEvent(t, pch, want.Type, want.Path)
		}
		for _, want := range []Event{
			{Type: EventNodeDataChanged, Path: e.p("p")},
			{Type: EventNodeCreated, Path: e.p("p/kid")},
			{Type: EventNodeDataChanged, Path: e.p("p/kid")},
			{Type: EventNodeDataChanged, Path: e.p("p")},
			{Type: EventNodeDeleted, Path: e.p("p/kid")},
			{Type: EventNodeDeleted, Path: e.p("p")},
		} {
			expectEvent(t, rch, want.Type, want.Path)
		}
		// The watches outlive their node: creating it again fires them.
		_, _, err = other.Create(ctx, e.p("p"), nil, Persistent, acl)
		must(t, "create again", err)
		expectEvent(t, pch, EventNodeCreated, e.p("p"))
		expectEvent(t, rch, EventNodeCreated, e.p("p"))

		must(t, "removeWatch", c.RemoveWatch(ctx, pch))
		expectEvent(t, pch, EventPersistentWatchRemoved, e.p("p"))
		expectClosed(t, pch)
		if err := c.RemoveWatch(ctx, pch); !errors.Is(err, ErrNoWatcher) {
			t.Errorf("removing a removed watch: %v", err)
		}
		must(t, "removeWatches", c.RemoveWatches(ctx, e.root, WatcherAny))
		expectEvent(t, rch, EventPersistentWatchRemoved, e.root)
		expectClosed(t, rch)
	})
}

// On Apache 3.8 a session has one watch mode per path: a one-time watch
// set on the server where a persistent watch is replaces it
// (ZOOKEEPER-4466). The client keeps such one-time watches to itself and
// fires them from the persistent watch's events, so both work.
func TestOneTimeWatchUnderPersistentWatch(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e *env) {
		c := e.connect()
		other := e.connect()
		ctx := ctx(t)
		acl := OpenACLUnsafe()
		_, _, err := other.Create(ctx, e.p("p"), nil, Persistent, acl)
		must(t, "create", err)
		pch, err := c.AddWatch(ctx, e.p("p"), WatchPersistent)
		must(t, "addWatch", err)
		rch, err := c.AddWatch(ctx, e.p("r"), WatchPersistentRecursive)
		must(t, "addWatch recursive", err)

		_, _, dch, err := c.GetW(ctx, e.p("p"))
		must(t, "getW", err)
		_, _, cch, err := c.ChildrenW(ctx, e.p("p"))
		must(t, "childrenW", err)
		_, _, xch, err := c.ExistsW(ctx, e.p("r/x"))
		must(t, "existsW under the recursive watch", err)

		_, err = other.Set(ctx, e.p("p"), []byte("1"), -1)
		must(t, "set", err)
		expectEvent(t, dch, EventNodeDataChanged, e.p("p"))
		expectEvent(t, pch, EventNodeDataChanged, e.p("p"))
		_, _, err = other.Create(ctx, e.p("p/k"), nil, Persistent, acl)
		must(t, "create", err)
		expectEvent(t, cch, EventNodeChildrenChanged, e.p("p"))
		expectEvent(t, pch, EventNodeChildrenChanged, e.p("p"))
		_, _, err = other.Create(ctx, e.p("r"), nil, Persistent, acl)
		must(t, "create r", err)
		_, _, err = other.Create(ctx, e.p("r/x"), nil, Persistent, acl)
		must(t, "create r/x", err)
		expectEvent(t, rch, EventNodeCreated, e.p("r"))
		expectEvent(t, rch, EventNodeCreated, e.p("r/x"))
		expectEvent(t, xch, EventNodeCreated, e.p("r/x"))

		// The persistent watch is still there on the server.
		_, err = other.Set(ctx, e.p("p"), []byte("2"), -1)
		must(t, "set", err)
		expectEvent(t, pch, EventNodeDataChanged, e.p("p"))

		// Removing the one-time watches leaves the persistent one, on the
		// server too (Apache would drop it with a removeWatches(Data)).
		_, _, dch, err = c.GetW(ctx, e.p("p"))
		must(t, "getW", err)
		_, _, ech, err := c.GetW(ctx, e.p("p"))
		must(t, "getW", err)
		must(t, "removeWatches data", c.RemoveWatches(ctx, e.p("p"), WatcherData))
		expectEvent(t, dch, EventDataWatchRemoved, e.p("p"))
		_, _, fch, err := c.GetW(ctx, e.p("p"))
		must(t, "getW", err)
		must(t, "removeWatch", c.RemoveWatch(ctx, fch))
		expectEvent(t, fch, EventDataWatchRemoved, e.p("p"))
		expectEvent(t, ech, EventDataWatchRemoved, e.p("p"))
		_, err = other.Set(ctx, e.p("p"), []byte("3"), -1)
		must(t, "set", err)
		expectEvent(t, pch, EventNodeDataChanged, e.p("p"))
	})
}

// A persistent watch whose consumer stops reading ends with
// ErrWatchOverflow once its buffer is full: memory stays bounded and the
// consumer learns that it missed events.
func TestWatchOverflow(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e *env) {
		c := e.connect(WithWatchBuffer(4))
		ctx := ctx(t)
		_, _, err := c.Create(ctx, e.p("o"), nil, Persistent, OpenACLUnsafe())
		must(t, "create", err)
		ch, err := c.AddWatch(ctx, e.p("o"), WatchPersistent)
		must(t, "addWatch", err)
		for i := range 10 {
			// The client's own write: its event arrives before its reply.
			_, err := c.Set(ctx, e.p("o"), []byte(strconv.Itoa(i)), -1)
			must(t, "set", err)
		}
		var got []Event
		for ev := range ch {
			got = append(got, ev)
		}
		if len(got) != 4 || got[0].Type != EventNodeDataChanged || !errors.Is(got[3].Err, ErrWatchOverflow) {
			t.Errorf("events %+v; want 3 changes and the overflow", got)
		}
		if err := c.RemoveWatch(ctx, ch); !errors.Is(err, ErrNoWatcher) {
			t.Errorf("removing an overflowed watch: %v", err)
		}
	})
}

// Ref: the Java client's removeWatches / removeAllWatches.
func TestRemoveWatches(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e *env) {
		c := e.connect()
		ctx := ctx(t)
		_, _, err := c.Create(ctx, e.p("w"), nil, Persistent, OpenACLUnsafe())
		must(t, "create", err)
		_, _, dch, err := c.GetW(ctx, e.p("w"))
		must(t, "getW", err)
		_, _, ech, err := c.ExistsW(ctx, e.p("w"))
		must(t, "existsW", err)
		_, _, cch, err := c.ChildrenW(ctx, e.p("w"))
		must(t, "childrenW", err)

		must(t, "removeWatches data", c.RemoveWatches(ctx, e.p("w"), WatcherData))
		expectEvent(t, dch, EventDataWatchRemoved, e.p("w"))
		expectEvent(t, ech, EventDataWatchRemoved, e.p("w"))
		expectClosed(t, dch)
		if err := c.RemoveWatches(ctx, e.p("w"), WatcherData); !errors.Is(err, ErrNoWatcher) {
			t.Errorf("second removal: %v, want NoWatcher", err)
		}
		// The child watch is still set, on the server too.
		_, _, err = c.Create(ctx, e.p("w/k"), nil, Persistent, OpenACLUnsafe())
		must(t, "create", err)
		expectEvent(t, cch, EventNodeChildrenChanged, e.p("w"))

		// RemoveWatch of one of two watches of a kind on a path removes
		// only that one; the other still fires.
		_, _, a, err := c.GetW(ctx, e.p("w"))
		must(t, "getW", err)
		_, _, b, err := c.GetW(ctx, e.p("w"))
		must(t, "getW", err)
		must(t, "removeWatch", c.RemoveWatch(ctx, a))
		expectEvent(t, a, EventDataWatchRemoved, e.p("w"))
		_, err = c.Set(ctx, e.p("w"), nil, -1)
		must(t, "set", err)
		expectEvent(t, b, EventNodeDataChanged, e.p("w"))
		if err := c.RemoveWatches(ctx, "bad", WatcherAny); !errors.Is(err, ErrInvalidPath) {
			t.Errorf("bad path: %v", err)
		}
	})
}

// Ref: paper section 2.2: "The ZooKeeper client guarantees that the
// corresponding callbacks for each operation are invoked in order", and
// programmer's guide 4.1: watch events are ordered with asynchronous
// replies. Thousands of pipelined calls, a third of them writes that fire
// watches: callbacks run in call order, each write's event is in its
// channel before the write's callback runs, and each read sees the writes
// made before it.
func TestAsyncOrdering(t *testing.T) {
	forEachTarget(t, func(t *testing.T, e *env) {
		const n = 3000
		c := e.connect(WithWatchBuffer(2 * n))
		ctx := ctx(t)
		_, _, err := c.Create(ctx, e.p("o"), []byte("-1"), Persistent, OpenACLUnsafe())
		must(t, "create", err)
		pch, err := c.AddWatch(ctx, e.p("o"), WatchPersistent)
		must(t, "addWatch", err)

		var (
			next    int            // callbacks run one at a time: no lock
			events  int            // data events drained from pch
			pending []<-chan Event // one-time watches set by earlier calls
			fail    error
			done    = make(chan struct{})
		)
		check := func(seq int, f func() error) {
			if fail == nil && seq != next {
				fail = fmt.Errorf("callback %d ran when %d was due", seq, next)
			}
			next++
			for drained := false; !drained; {
				select {
				case ev := <-pch:
					if ev.Type == EventNodeDataChanged {
						events++
					}
				default:
					drained = true
				}
			}
			if err := f(); err != nil && fail == nil {
				fail = fmt.Errorf("call %d: %w", seq, err)
			}
			if next == n {
				close(done)
			}
		}
		sets := 0
		for i := range n {
			var err error
			switch i % 3 {
			case 0: // a write that fires the watches
				sets++
				want := sets
				err = c.SetAsync(ctx, e.p("o"), []byte(strconv.Itoa(i)), -1, func(st Stat, err error) {
					check(i, func() error {
						if err != nil {
							return err
						}
						if st.Version != int32(want) || events < want {
							return fmt.Errorf("set #%d: version %d, %d events so far", want, st.Version, events)
						}
						for _, ch := range pending {
							select {
							case ev := <-ch:
								if ev.Type != EventNodeDataChanged {
									return fmt.Errorf("one-time watch got %+v", ev)
								}
							default:
								return errors.New("one-time watch not fired before the write's reply")
							}
						}
						pending = pending[:0]
						return nil
					})
				})
			case 1: // a read: sees the write just before it
				wantData := strconv.Itoa(i - 1)
				err = c.GetWAsync(ctx, e.p("o"), func(data []byte, _ Stat, ch <-chan Event, err error) {
					check(i, func() error {
						if err != nil {
							return err
						}
						if string(data) != wantData {
							return fmt.Errorf("read %q, want %q", data, wantData)
						}
						pending = append(pending, ch)
						return nil
					})
				})
			case 2:
				err = c.ExistsAsync(ctx, e.p("o"), func(ok bool, _ Stat, err error) {
					check(i, func() error {
						if !ok {
							return errors.Join(err, errors.New("node missing"))
						}
						return err
					})
				})
			}
			must(t, "async call", err)
		}
		<-done
		if fail != nil {
			t.Fatal(fail)
		}
		if events != sets {
			t.Errorf("%d data events for %d writes", events, sets)
		}
	})
}
