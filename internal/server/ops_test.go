package server

import (
	"slices"
	"strings"
	"testing"

	"github.com/zoohq/zoo/internal/jute"
)

// multiRead answers each op on its own: a failing op is an error result,
// the others their reads. Ref: Apache's FinalRequestProcessor, multiRead.
func TestMultiRead(t *testing.T) {
	for _, tg := range targets(t) {
		t.Run(tg.name, func(t *testing.T) {
			c := newSession(t, tg.addr)
			root := testRoot(t, c)
			c.create(root+"/a", []byte("x"), 0)
			var resp jute.MultiResponse
			c.mustCall(jute.OpMultiRead, &jute.MultiRequest{Ops: []jute.MultiOp{
				{Op: jute.OpGetData, Record: &jute.PathWatch{Path: root + "/a"}},
				{Op: jute.OpGetChildren, Record: &jute.PathWatch{Path: root}},
				{Op: jute.OpGetData, Record: &jute.PathWatch{Path: root + "/missing"}},
			}}, &resp, jute.OK)
			if len(resp.Results) != 3 {
				t.Fatalf("%d results, want 3: %+v", len(resp.Results), resp.Results)
			}
			if d, ok := resp.Results[0].Record.(*jute.GetDataResponse); !ok || string(d.Data) != "x" {
				t.Errorf("getData result %+v, want data x", resp.Results[0])
			}
			if ch, ok := resp.Results[1].Record.(*jute.GetChildrenResponse); !ok || !slices.Equal(ch.Children, []string{"a"}) {
				t.Errorf("getChildren result %+v, want [a]", resp.Results[1])
			}
			if r := resp.Results[2]; r.Op != jute.OpError || r.Err != jute.NoNode {
				t.Errorf("missing node result %+v, want an error result NoNode", r)
			}
		})
	}
}

// checkWatches and removeWatches see only the asking connection's
// watches; a removed watch no longer fires.
// Ref: programmer's guide, "Remove Watches".
func TestCheckAndRemoveWatches(t *testing.T) {
	for _, tg := range targets(t) {
		t.Run(tg.name, func(t *testing.T) {
			a := newSession(t, tg.addr)
			b := newSession(t, tg.addr)
			root := testRoot(t, a)
			p := root + "/w"
			a.create(p, nil, 0)
			a.mustCall(jute.OpGetData, &jute.PathWatch{Path: p, Watch: true}, nil, jute.OK)
			a.mustCall(jute.OpCheckWatches, &jute.WatchTypeRequest{Path: p, Type: jute.WatcherData}, nil, jute.OK)
			a.mustCall(jute.OpCheckWatches, &jute.WatchTypeRequest{Path: p, Type: jute.WatcherChildren}, nil, jute.NoWatcher)
			a.mustCall(jute.OpRemoveWatches, &jute.WatchTypeRequest{Path: p, Type: jute.WatcherAny}, nil, jute.OK)
			a.mustCall(jute.OpCheckWatches, &jute.WatchTypeRequest{Path: p, Type: jute.WatcherData}, nil, jute.NoWatcher)
			a.mustCall(jute.OpRemoveWatches, &jute.WatchTypeRequest{Path: p, Type: jute.WatcherAny}, nil, jute.NoWatcher)
			b.mustCall(jute.OpSetData, &jute.SetDataRequest{Path: p, Data: []byte("v"), Version: -1}, nil, jute.OK)
			// call fails on any frame before the reply: no event came.
			a.mustCall(jute.OpExists, &jute.PathWatch{Path: p}, nil, jute.OK)
		})
	}
}

// setWatches2 on reconnect fires at once the watches whose node changed
// after the client's last zxid, and registers the rest, persistent ones
// included. Ref: DESIGN decision 7; Apache's DataTree.setWatches.
func TestSetWatchesReplay(t *testing.T) {
	for _, tg := range targets(t) {
		t.Run(tg.name, func(t *testing.T) {
			a := newSession(t, tg.addr)
			b := newSession(t, tg.addr)
			root := testRoot(t, a)
			changed, same, born, kids, gone := root+"/changed", root+"/same", root+"/born", root+"/kids", root+"/gone"
			for _, p := range []string{changed, same, kids, gone} {
				a.create(p, nil, 0)
			}
			var st jute.StatResponse
			h := a.mustCall(jute.OpExists, &jute.PathWatch{Path: same}, &st, jute.OK)
			seen := h.Zxid
			b.mustCall(jute.OpSetData, &jute.SetDataRequest{Path: changed, Data: []byte("v"), Version: -1}, nil, jute.OK)
			b.create(born, nil, 0)
			b.create(kids+"/k", nil, 0)
			b.mustCall(jute.OpDelete, &jute.PathVersion{Path: gone, Version: -1}, nil, jute.OK)

			xid := a.send(jute.OpSetWatches2, &jute.SetWatches2{
				RelativeZxid:      seen,
				DataWatches:       []string{changed, same, gone},
				ExistWatches:      []string{born},
				ChildWatches:      []string{kids},
				PersistentWatches: []string{same},
			})
			events, r := a.readUntil(xid)
			if r.hdr.Err != jute.OK {
				t.Fatalf("setWatches2: %v", r)
			}
			got := map[string]int32{}
			for _, ev := range events {
				got[ev.Path] = ev.Type
			}
			want := map[string]int32{
				changed: jute.EventNodeDataChanged,
				gone:    jute.EventNodeDeleted,
				born:    jute.EventNodeCreated,
				kids:    jute.EventNodeChildrenChanged,
			}
			if len(got) != len(want) {
				t.Errorf("events %+v, want %+v", events, want)
			}
			for p, typ := range want {
				if got[p] != typ {
					t.Errorf("event for %s: %d, want %d (all: %+v)", p, got[p], typ, events)
				}
			}
			// The unchanged node's data watch and persistent watch were
			// registered: one change, one event (a watcher gets one per change).
			b.mustCall(jute.OpSetData, &jute.SetDataRequest{Path: same, Data: []byte("w"), Version: -1}, nil, jute.OK)
			if ev := a.readEvent(); ev.Path != same || ev.Type != jute.EventNodeDataChanged {
				t.Errorf("event %+v, want NodeDataChanged on %s", ev, same)
			}
			// The one-time watch is spent; the persistent one fires again.
			b.mustCall(jute.OpSetData, &jute.SetDataRequest{Path: same, Data: []byte("x"), Version: -1}, nil, jute.OK)
			if ev := a.readEvent(); ev.Path != same || ev.Type != jute.EventNodeDataChanged {
				t.Errorf("event %+v, want NodeDataChanged on %s from the persistent watch", ev, same)
			}
		})
	}
}

// whoAmI lists the connection's identities: its ip and each auth, once.
func TestWhoAmI(t *testing.T) {
	for _, tg := range targets(t) {
		t.Run(tg.name, func(t *testing.T) {
			c := newSession(t, tg.addr)
			auth := &jute.AuthPacket{Scheme: "digest", Auth: []byte("alice:secret")}
			for range 2 { // twice: identities are a set
				c.writeFrame(&jute.RequestHeader{Xid: jute.XidAuth, Type: jute.OpAuth}, auth)
				if r := c.readReply(); r.hdr.Xid != jute.XidAuth || r.hdr.Err != jute.OK {
					t.Fatalf("auth reply %v", r)
				}
			}
			var who jute.WhoAmIResponse
			c.mustCall(jute.OpWhoAmI, nil, &who, jute.OK)
			// A set: Apache 3.8 lists the digest before the ip.
			want := []jute.ClientInfo{{AuthScheme: "digest", User: "alice"}, {AuthScheme: "ip", User: "127.0.0.1"}}
			slices.SortFunc(who.ClientInfo, func(a, b jute.ClientInfo) int { return strings.Compare(a.AuthScheme, b.AuthScheme) })
			if !slices.Equal(who.ClientInfo, want) {
				t.Errorf("whoAmI %+v, want %+v", who.ClientInfo, want)
			}
		})
	}
}

// getEphemerals lists the session's ephemerals under a string prefix;
// getAllChildrenNumber counts every descendant.
func TestEphemeralsAndDescendants(t *testing.T) {
	for _, tg := range targets(t) {
		t.Run(tg.name, func(t *testing.T) {
			c := newSession(t, tg.addr)
			other := newSession(t, tg.addr)
			root := testRoot(t, c)
			c.create(root+"/p", nil, 0)
			c.create(root+"/p/e1", nil, jute.FlagEphemeral)
			c.create(root+"/p/e2", nil, jute.FlagEphemeral)
			c.create(root+"/pe", nil, jute.FlagEphemeral)
			other.create(root+"/p/theirs", nil, jute.FlagEphemeral)
			var eph jute.StringsResponse
			c.mustCall(jute.OpGetEphemerals, &jute.PathRequest{Path: root + "/p"}, &eph, jute.OK)
			slices.Sort(eph.Strings)
			// A string prefix, not a path: /p matches /pe too.
			if want := []string{root + "/p/e1", root + "/p/e2", root + "/pe"}; !slices.Equal(eph.Strings, want) {
				t.Errorf("getEphemerals %v, want %v", eph.Strings, want)
			}
			var n jute.CountResponse
			c.mustCall(jute.OpGetAllChildrenNumber, &jute.PathRequest{Path: root}, &n, jute.OK)
			if n.TotalNumber != 5 {
				t.Errorf("getAllChildrenNumber %d, want 5", n.TotalNumber)
			}
			c.mustCall(jute.OpGetAllChildrenNumber, &jute.PathRequest{Path: root + "/none"}, nil, jute.NoNode)
		})
	}
}
