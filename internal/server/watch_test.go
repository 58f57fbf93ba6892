package server

import (
	"strconv"
	"testing"

	"github.com/zoohq/zoo/internal/jute"
)

// readUntil reads frames until the reply to xid, returning the
// notifications that came before it. Any other reply fails the test.
func (c *rawClient) readUntil(xid int32) (events []jute.WatcherEvent, r reply) {
	c.t.Helper()
	for {
		r = c.readReply()
		switch r.hdr.Xid {
		case xid:
			return events, r
		case jute.XidNotification:
			if r.hdr.Zxid != -1 || r.hdr.Err != jute.OK {
				c.t.Fatalf("notification header %+v, want zxid -1 and OK (as Apache sends)", r.hdr)
			}
			events = append(events, r.event(c.t))
		default:
			c.t.Fatalf("got %v while waiting for xid %d", r, xid)
		}
	}
}

// readEvent reads the next frame, which must be a notification.
func (c *rawClient) readEvent() jute.WatcherEvent {
	c.t.Helper()
	r := c.readReply()
	if r.hdr.Xid != jute.XidNotification || r.hdr.Zxid != -1 {
		c.t.Fatalf("got %v, want a notification with zxid -1", r)
	}
	return r.event(c.t)
}

// A watch event reaches the client before any reply that shows the change
// it reports: a client never sees data newer than an event it has not yet
// received. Ref: programmer's guide, "What ZooKeeper Guarantees about
// Watches" ("A client will see a watch event for a znode it is watching
// before seeing the new data that corresponds to that znode"); DESIGN
// decision 7.
func TestWatchEventBeforeNewerReply(t *testing.T) {
	for _, tg := range targets(t) {
		t.Run(tg.name, func(t *testing.T) {
			a := newSession(t, tg.addr)
			b := newSession(t, tg.addr)
			root := testRoot(t, a)
			for _, tc := range []struct {
				name  string
				watch func(p string) (jute.Op, jute.Record, jute.Code) // A's watching read
				// change is B's write, and read A's read after it.
				change    func(p string) (jute.Op, jute.Record)
				read      func(p string) (jute.Op, jute.Record, jute.Code)
				wantEvent int32
				eventPath func(p string) string
			}{
				{
					name: "data watch, setData",
					watch: func(p string) (jute.Op, jute.Record, jute.Code) {
						return jute.OpGetData, &jute.PathWatch{Path: p, Watch: true}, jute.OK
					},
					change: func(p string) (jute.Op, jute.Record) {
						return jute.OpSetData, &jute.SetDataRequest{Path: p, Data: []byte("new"), Version: -1}
					},
					read: func(p string) (jute.Op, jute.Record, jute.Code) {
						return jute.OpGetData, &jute.PathWatch{Path: p}, jute.OK
					},
					wantEvent: jute.EventNodeDataChanged,
				},
				{
					name: "child watch, create",
					watch: func(p string) (jute.Op, jute.Record, jute.Code) {
						return jute.OpGetChildren, &jute.PathWatch{Path: p, Watch: true}, jute.OK
					},
					change: func(p string) (jute.Op, jute.Record) {
						return jute.OpCreate, createReq(p+"/child", nil, 0)
					},
					read: func(p string) (jute.Op, jute.Record, jute.Code) {
						return jute.OpGetChildren, &jute.PathWatch{Path: p}, jute.OK
					},
					wantEvent: jute.EventNodeChildrenChanged,
				},
				{
					name: "exist watch, create",
					watch: func(p string) (jute.Op, jute.Record, jute.Code) {
						return jute.OpExists, &jute.PathWatch{Path: p + "/new", Watch: true}, jute.NoNode
					},
					change: func(p string) (jute.Op, jute.Record) {
						return jute.OpCreate, createReq(p+"/new", nil, 0)
					},
					read: func(p string) (jute.Op, jute.Record, jute.Code) {
						return jute.OpExists, &jute.PathWatch{Path: p + "/new"}, jute.OK
					},
					wantEvent: jute.EventNodeCreated,
					eventPath: func(p string) string { return p + "/new" },
				},
				{
					name: "data watch, delete",
					watch: func(p string) (jute.Op, jute.Record, jute.Code) {
						return jute.OpGetData, &jute.PathWatch{Path: p, Watch: true}, jute.OK
					},
					change: func(p string) (jute.Op, jute.Record) {
						return jute.OpDelete, &jute.PathVersion{Path: p, Version: -1}
					},
					read: func(p string) (jute.Op, jute.Record, jute.Code) {
						return jute.OpExists, &jute.PathWatch{Path: p}, jute.NoNode
					},
					wantEvent: jute.EventNodeDeleted,
				},
			} {
				t.Run(tc.name, func(t *testing.T) {
					defer a.bind(t)()
					defer b.bind(t)()
					p := root + "/" + strconv.Itoa(int(tc.wantEvent))
					b.create(p, []byte("old"), 0)
					op, rec, code := tc.watch(p)
					a.mustCall(op, rec, nil, code)
					op, rec = tc.change(p)
					b.mustCall(op, rec, nil, jute.OK)
					op, rec, code = tc.read(p)
					events, r := a.readUntil(a.send(op, rec))
					if r.hdr.Err != code {
						t.Fatalf("read after the change: %v, want %v", r, code)
					}
					wantPath := p
					if tc.eventPath != nil {
						wantPath = tc.eventPath(p)
					}
					want := jute.WatcherEvent{Type: tc.wantEvent, State: jute.StateSyncConnected, Path: wantPath}
					if len(events) != 1 || events[0] != want {
						t.Fatalf("before the reply came %+v, want exactly %+v", events, want)
					}
				})
			}
		})
	}
}

// The same guarantee with A's read racing B's write: whichever wins, a
// reply that shows the new data comes after the event, and a reply that
// shows the old data comes before it.
func TestWatchEventRacingRead(t *testing.T) {
	for _, tg := range targets(t) {
		t.Run(tg.name, func(t *testing.T) {
			a := newSession(t, tg.addr)
			b := newSession(t, tg.addr)
			p := testRoot(t, a) + "/w"
			a.create(p, []byte("0"), 0)
			sawNew := 0
			for i := range 100 {
				old, next := strconv.Itoa(i), strconv.Itoa(i+1)
				a.mustCall(jute.OpGetData, &jute.PathWatch{Path: p, Watch: true}, nil, jute.OK)
				bx := b.send(jute.OpSetData, &jute.SetDataRequest{Path: p, Data: []byte(next), Version: -1})
				events, r := a.readUntil(a.send(jute.OpGetData, &jute.PathWatch{Path: p}))
				var resp jute.GetDataResponse
				r.decode(t, &resp)
				switch string(resp.Data) {
				case next:
					sawNew++
					if len(events) != 1 || events[0].Type != jute.EventNodeDataChanged {
						t.Fatalf("round %d: reply shows %q but came after events %+v", i, next, events)
					}
				case old:
					if len(events) != 0 {
						t.Fatalf("round %d: reply shows the old %q after events %+v", i, old, events)
					}
					if ev := a.readEvent(); ev.Type != jute.EventNodeDataChanged || ev.Path != p {
						t.Fatalf("round %d: event %+v", i, ev)
					}
				default:
					t.Fatalf("round %d: data %q", i, resp.Data)
				}
				if _, r := b.readUntil(bx); r.hdr.Err != jute.OK {
					t.Fatalf("setData: %v", r)
				}
			}
			t.Logf("the read saw the new data in %d of 100 rounds", sawNew)
		})
	}
}

// A watch fires once: a second change sends no second event.
// Ref: programmer's guide, "ZooKeeper Watches" (one-time trigger).
func TestWatchFiresOnce(t *testing.T) {
	for _, tg := range targets(t) {
		t.Run(tg.name, func(t *testing.T) {
			a := newSession(t, tg.addr)
			p := testRoot(t, a)
			a.mustCall(jute.OpGetData, &jute.PathWatch{Path: p, Watch: true}, nil, jute.OK)
			for i := range 2 {
				events, r := a.readUntil(a.send(jute.OpSetData, &jute.SetDataRequest{Path: p, Data: []byte{byte(i)}, Version: -1}))
				if r.hdr.Err != jute.OK {
					t.Fatal(r)
				}
				if want := 1 - i; len(events) != want {
					t.Fatalf("change %d: %d events, want %d", i, len(events), want)
				}
			}
			// A ping flushes anything still on its way.
			if events, _ := a.readUntil(a.send(jute.OpPing, nil)); len(events) != 0 {
				t.Fatalf("late events %+v", events)
			}
		})
	}
}
