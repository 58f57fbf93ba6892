package interop

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// juteMaxBuffer is Apache's default jute.maxbuffer (0xfffff): the largest
// request frame, length prefix excluded, the server accepts.
const juteMaxBuffer = 0xfffff

// TestLargeChildList lists 2000 children with long names in one reply of
// about 1.2 MiB. jute.maxbuffer limits what the server reads, not what it
// sends: Apache replies in full (go-zookeeper reads any size by default).
func TestLargeChildList(t *testing.T) {
	t.Parallel()
	forEachTarget(t, func(t *testing.T, tg Target) {
		e := newEnv(t, tg, stdOpts)
		c := e.connect()
		p := c.create(t, e.p("big"), nil, 0)
		const n, batch = 2000, 100
		pad := strings.Repeat("x", 600)
		var want []string
		for i := 0; i < n; i += batch {
			ops := make([]any, 0, batch)
			for j := i; j < i+batch; j++ {
				name := fmt.Sprintf("%04d-%s", j, pad)
				want = append(want, name)
				ops = append(ops, &zk.CreateRequest{Path: p + "/" + name, Acl: openACL})
			}
			_, err := c.Multi(ops...)
			must(t, tg.Name, "multi create batch", err)
		}
		size := 0
		for _, name := range want {
			size += 4 + len(name)
		}
		if size <= juteMaxBuffer {
			t.Fatalf("test bug: the list (%d bytes) should exceed jute.maxbuffer", size)
		}

		kids, st, err := c.Children(p)
		must(t, tg.Name, "children", err)
		slices.Sort(kids)
		if !slices.Equal(kids, want) {
			t.Errorf("%s: listed %d children; want the %d created", tg.Name, len(kids), n)
		}
		if st.NumChildren != n || st.Cversion != n {
			t.Errorf("%s: stat %+v; want numChildren and cversion %d", tg.Name, *st, n)
		}
	})
}

// TestRequestSizeLimit: Apache reads a request frame of up to
// jute.maxbuffer bytes; a longer one makes it close the connection with no
// reply. The session survives and the client reconnects to it.
func TestRequestSizeLimit(t *testing.T) {
	t.Parallel()
	forEachTarget(t, func(t *testing.T, tg Target) {
		e := newEnv(t, tg, stdOpts)
		c := e.connect()
		p := c.create(t, e.p("d"), nil, 0)
		sid := c.SessionID()
		// A setData frame: xid, opcode, path, data, version.
		dataLen := func(frame int) int { return frame - 4 - 4 - (4 + len(p)) - 4 - 4 }

		_, err := c.Set(p, make([]byte, dataLen(juteMaxBuffer)), -1)
		must(t, tg.Name, "set with a frame of exactly jute.maxbuffer", err)

		from := c.events.len()
		_, err = c.Set(p, make([]byte, dataLen(juteMaxBuffer+1)), -1)
		if !errors.Is(err, zk.ErrConnectionClosed) {
			t.Errorf("%s: set over jute.maxbuffer: %v; want the connection closed", tg.Name, err)
		}
		i := c.events.waitState(t, tg.Name, zk.StateDisconnected, from, 20*time.Second)
		c.events.waitState(t, tg.Name, zk.StateHasSession, i, 20*time.Second)
		if c.SessionID() != sid {
			t.Errorf("%s: session %#x after the oversized request; want %#x", tg.Name, c.SessionID(), sid)
		}
		_, st, err := c.Get(p)
		must(t, tg.Name, "get", err)
		if int(st.DataLength) != dataLen(juteMaxBuffer) || st.Version != 1 {
			t.Errorf("%s: stat %+v; want the first set's %d bytes at version 1", tg.Name, *st, dataLen(juteMaxBuffer))
		}
	})
}
