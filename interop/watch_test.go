package interop

import (
	"slices"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zoohq/zoo/internal/jute"
)

// Ref: programmer's guide, "ZooKeeper Watches": a watch is a one-time
// trigger, set by a read and fired by the next change.
func TestDataWatchOneShot(t *testing.T) {
	t.Parallel()
	forEachTarget(t, func(t *testing.T, tg Target) {
		e := newEnv(t, tg, stdOpts)
		w, m := e.connect(), e.connect()
		p := m.create(t, e.p("n"), []byte("v0"), 0)

		_, _, ch, err := w.GetW(p)
		must(t, tg.Name, "getW", err)
		for _, v := range []string{"v1", "v2"} {
			_, err := m.Set(p, []byte(v), -1)
			must(t, tg.Name, "set "+v, err)
		}
		expectEvent(t, tg.Name, ch, zk.EventNodeDataChanged, p)
		// A reply to w after both sets comes after any notification they
		// caused: exactly one was sent.
		data, _, err := w.Get(p)
		if err != nil || string(data) != "v2" {
			t.Fatalf("%s: get = %q, %v; want v2", tg.Name, data, err)
		}
		if got := w.events.watchEvents(p); !slices.Equal(got, []zk.EventType{zk.EventNodeDataChanged}) {
			t.Errorf("%s: notifications %v; want one NodeDataChanged", tg.Name, got)
		}

		// A failed set fires nothing; a set that writes the same bytes fires.
		_, _, ch, err = w.GetW(p)
		must(t, tg.Name, "getW again", err)
		_, err = m.Set(p, []byte("v3"), 99)
		wantCode(t, tg.Name, "set with a bad version", err, jute.BadVersion)
		_, _, err = w.Get(p)
		must(t, tg.Name, "get", err)
		noEventYet(t, tg.Name, ch)
		_, err = m.Set(p, []byte("v2"), -1)
		must(t, tg.Name, "set same data", err)
		expectEvent(t, tg.Name, ch, zk.EventNodeDataChanged, p)
	})
}

// Ref: programmer's guide, "ZooKeeper Watches" (exists sets a watch on a
// missing node too; created/changed/deleted fire it).
func TestExistsWatch(t *testing.T) {
	t.Parallel()
	forEachTarget(t, func(t *testing.T, tg Target) {
		e := newEnv(t, tg, stdOpts)
		w, m := e.connect(), e.connect()
		p := e.p("n")

		ok, _, ch, err := w.ExistsW(p)
		if err != nil || ok {
			t.Fatalf("%s: existsW(missing) = %v, %v", tg.Name, ok, err)
		}
		m.create(t, p, nil, 0)
		expectEvent(t, tg.Name, ch, zk.EventNodeCreated, p)

		_, _, ch, err = w.ExistsW(p)
		must(t, tg.Name, "existsW", err)
		_, err = m.Set(p, []byte("x"), -1)
		must(t, tg.Name, "set", err)
		expectEvent(t, tg.Name, ch, zk.EventNodeDataChanged, p)

		_, _, ch, err = w.ExistsW(p)
		must(t, tg.Name, "existsW", err)
		must(t, tg.Name, "delete", m.Delete(p, -1))
		expectEvent(t, tg.Name, ch, zk.EventNodeDeleted, p)
	})
}

// Ref: programmer's guide, "ZooKeeper Watches" (child watches fire on child
// create and delete, not on data changes of the node or its children).
func TestChildWatch(t *testing.T) {
	t.Parallel()
	forEachTarget(t, func(t *testing.T, tg Target) {
		e := newEnv(t, tg, stdOpts)
		w, m := e.connect(), e.connect()
		p := m.create(t, e.p("p"), nil, 0)

		_, _, ch, err := w.ChildrenW(p)
		must(t, tg.Name, "childrenW", err)
		m.create(t, p+"/c", nil, 0)
		expectEvent(t, tg.Name, ch, zk.EventNodeChildrenChanged, p)

		_, _, ch, err = w.ChildrenW(p)
		must(t, tg.Name, "childrenW", err)
		_, err = m.Set(p, []byte("x"), -1)
		must(t, tg.Name, "set parent", err)
		_, err = m.Set(p+"/c", []byte("x"), -1)
		must(t, tg.Name, "set child", err)
		m.create(t, p+"/c/grandchild", nil, 0)
		_, _, err = w.Get(p) // round trip: earlier notifications have arrived
		must(t, tg.Name, "get", err)
		noEventYet(t, tg.Name, ch)

		must(t, tg.Name, "delete grandchild", m.Delete(p+"/c/grandchild", -1))
		must(t, tg.Name, "delete child", m.Delete(p+"/c", -1))
		expectEvent(t, tg.Name, ch, zk.EventNodeChildrenChanged, p)
	})
}

// TestDeleteFiresEveryWatch: a delete fires the node's data, exists and
// child watches and the parent's child watch. Apache sends one
// notification per watcher and path, however many watches it had there;
// go-zookeeper hands that one to all its channels for the path.
func TestDeleteFiresEveryWatch(t *testing.T) {
	t.Parallel()
	forEachTarget(t, func(t *testing.T, tg Target) {
		e := newEnv(t, tg, stdOpts)
		w, m := e.connect(), e.connect()
		parent := m.create(t, e.p("p"), nil, 0)
		p := m.create(t, parent+"/n", nil, 0)

		_, _, data, err := w.GetW(p)
		must(t, tg.Name, "getW", err)
		_, _, exists, err := w.ExistsW(p)
		must(t, tg.Name, "existsW", err)
		_, _, child, err := w.ChildrenW(p)
		must(t, tg.Name, "childrenW", err)
		_, _, parentChild, err := w.ChildrenW(parent)
		must(t, tg.Name, "childrenW parent", err)

		_, err = m.Set(p, []byte("x"), -1)
		must(t, tg.Name, "set", err)
		expectEvent(t, tg.Name, data, zk.EventNodeDataChanged, p)
		expectEvent(t, tg.Name, exists, zk.EventNodeDataChanged, p)

		_, _, data, err = w.GetW(p)
		must(t, tg.Name, "getW", err)
		_, _, exists, err = w.ExistsW(p)
		must(t, tg.Name, "existsW", err)
		must(t, tg.Name, "delete", m.Delete(p, -1))
		for _, ch := range []<-chan zk.Event{data, exists, child} {
			expectEvent(t, tg.Name, ch, zk.EventNodeDeleted, p)
		}
		expectEvent(t, tg.Name, parentChild, zk.EventNodeChildrenChanged, parent)

		want := []zk.EventType{zk.EventNodeDataChanged, zk.EventNodeDeleted}
		if got := w.events.watchEvents(p); !slices.Equal(got, want) {
			t.Errorf("%s: notifications for %s: %v; want %v", tg.Name, p, got, want)
		}
	})
}

// TestWatchEventBeforeNewData: a client sees a watch event before it sees
// the data that triggered it. go-zookeeper hands an event to the watch
// channel on its receive goroutine before it reads the next reply, so the
// moment a read returns the new data, the event must already be queued.
// Ref: programmer's guide, "ZooKeeper Watches" (ordering guarantee).
func TestWatchEventBeforeNewData(t *testing.T) {
	t.Parallel()
	forEachTarget(t, func(t *testing.T, tg Target) {
		e := newEnv(t, tg, stdOpts)
		w, m := e.connect(), e.connect()
		p := m.create(t, e.p("n"), []byte("0"), 0)
		for round := 1; round <= 20; round++ {
			want := []byte{byte('0' + round%10), byte(round)}
			_, _, ch, err := w.GetW(p)
			must(t, tg.Name, "getW", err)
			setDone := make(chan error, 1)
			go func() {
				_, err := m.Set(p, want, -1)
				setDone <- err
			}()
			deadline := time.Now().Add(20 * time.Second)
			for {
				data, _, err := w.Get(p)
				must(t, tg.Name, "get", err)
				if string(data) == string(want) {
					select {
					case ev := <-ch:
						if ev.Type != zk.EventNodeDataChanged {
							t.Fatalf("%s: round %d: event %v; want NodeDataChanged", tg.Name, round, ev.Type)
						}
					default:
						t.Fatalf("%s: round %d: read returned the new data before its watch event", tg.Name, round)
					}
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%s: round %d: new data never visible", tg.Name, round)
				}
			}
			must(t, tg.Name, "set", <-setDone)
		}
	})
}

// TestWatchersInManySessions: every session watching a node is notified.
func TestWatchersInManySessions(t *testing.T) {
	t.Parallel()
	forEachTarget(t, func(t *testing.T, tg Target) {
		e := newEnv(t, tg, stdOpts)
		m := e.connect()
		p := m.create(t, e.p("n"), nil, 0)
		var chans []<-chan zk.Event
		for i := 0; i < 3; i++ {
			_, _, ch, err := e.connect().GetW(p)
			must(t, tg.Name, "getW", err)
			chans = append(chans, ch)
		}
		_, err := m.Set(p, []byte("x"), -1)
		must(t, tg.Name, "set", err)
		for _, ch := range chans {
			expectEvent(t, tg.Name, ch, zk.EventNodeDataChanged, p)
		}
	})
}
