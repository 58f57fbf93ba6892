package server

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/zoohq/zoo/internal/jute"
)

// step is one request of a pipelined script and what its reply must be.
type step struct {
	op   jute.Op
	rec  jute.Record
	want jute.Code
	// check, if set, inspects the body of an OK reply.
	check func(t testing.TB, r reply)
}

// runPipelined writes every step's request in one write, without waiting,
// then reads the replies and checks that they come back in request order
// with the right results, and with zxids that never go backwards.
// Ref: programmer's guide, "Consistency Guarantees" (Sequential
// Consistency); DESIGN decision 6 (FIFO client order).
func runPipelined(t testing.TB, c *rawClient, steps []step) {
	t.Helper()
	var out []byte
	xids := make([]int32, len(steps))
	for i, s := range steps {
		var frame []byte
		xids[i], frame = c.request(s.op, s.rec)
		out = append(out, frame...)
	}
	c.writeRaw(out)
	lastZxid := int64(-1)
	for i, s := range steps {
		r := c.readReply()
		if r.hdr.Xid != xids[i] {
			t.Fatalf("reply %d: got %v, want xid %d (%v): out of order", i, r, xids[i], s.op)
		}
		if r.hdr.Err != s.want {
			t.Fatalf("reply %d (%v %+v): error %v, want %v", i, s.op, s.rec, r.hdr.Err, s.want)
		}
		if r.hdr.Zxid < lastZxid {
			t.Fatalf("reply %d (%v): zxid %d after %d", i, s.op, r.hdr.Zxid, lastZxid)
		}
		lastZxid = r.hdr.Zxid
		if s.check != nil && r.hdr.Err == jute.OK {
			s.check(t, r)
		}
	}
}

func wantData(data string) func(testing.TB, reply) {
	return func(t testing.TB, r reply) {
		t.Helper()
		var resp jute.GetDataResponse
		r.decode(t, &resp)
		if string(resp.Data) != data {
			t.Fatalf("getData: %q, want %q", resp.Data, data)
		}
	}
}

func wantVersion(v int32) func(testing.TB, reply) {
	return func(t testing.TB, r reply) {
		t.Helper()
		var resp jute.StatResponse
		r.decode(t, &resp)
		if resp.Stat.Version != v {
			t.Fatalf("stat version %d, want %d", resp.Stat.Version, v)
		}
	}
}

func wantPath(p string) func(testing.TB, reply) {
	return func(t testing.TB, r reply) {
		t.Helper()
		var resp jute.CreateResponse
		r.decode(t, &resp)
		if resp.Path != p {
			t.Fatalf("created %q, want %q", resp.Path, p)
		}
	}
}

func wantChildren(names []string) func(testing.TB, reply) {
	return func(t testing.TB, r reply) {
		t.Helper()
		var resp jute.GetChildrenResponse
		r.decode(t, &resp)
		got := slices.Sorted(slices.Values(resp.Children))
		if !slices.Equal(got, names) {
			t.Fatalf("children %q, want %q", got, names)
		}
	}
}

// A read pipelined behind a write sees that write. Ref: DESIGN decision 6.
func TestPipelinedSequence(t *testing.T) {
	for _, tg := range targets(t) {
		t.Run(tg.name, func(t *testing.T) {
			c := newSession(t, tg.addr)
			a := testRoot(t, c) + "/a"
			runPipelined(t, c, []step{
				{jute.OpCreate, createReq(a, []byte("x"), jute.FlagPersistent), jute.OK, wantPath(a)},
				{jute.OpGetData, &jute.PathWatch{Path: a}, jute.OK, wantData("x")},
				{jute.OpSetData, &jute.SetDataRequest{Path: a, Data: []byte("y"), Version: -1}, jute.OK, wantVersion(1)},
				{jute.OpGetData, &jute.PathWatch{Path: a}, jute.OK, wantData("y")},
				{jute.OpDelete, &jute.PathVersion{Path: a, Version: -1}, jute.OK, nil},
				{jute.OpExists, &jute.PathWatch{Path: a}, jute.NoNode, nil},
			})
		})
	}
}

// mixedScript builds n random requests over a few keys under root, with
// the replies a simple model of the tree predicts.
func mixedScript(root string, n int, seed uint64) []step {
	rng := rand.New(rand.NewPCG(seed, 0))
	type node struct {
		data    string
		version int32
	}
	model := map[string]*node{}
	children := func() []string {
		var out []string
		for k := range model {
			out = append(out, k)
		}
		slices.Sort(out)
		return out
	}
	steps := make([]step, 0, n)
	for i := range n {
		name := "k" + strconv.Itoa(rng.IntN(8))
		p := root + "/" + name
		nd := model[name]
		data := fmt.Sprintf("d%d", i)
		var s step
		switch rng.IntN(9) {
		case 0:
			s = step{op: jute.OpCreate, rec: createReq(p, []byte(data), 0), want: jute.NodeExists}
			if nd == nil {
				s.want, s.check = jute.OK, wantPath(p)
				model[name] = &node{data: data}
			}
		case 1:
			s = step{op: jute.OpSetData, rec: &jute.SetDataRequest{Path: p, Data: []byte(data), Version: -1}, want: jute.NoNode}
			if nd != nil {
				nd.data = data
				nd.version++
				s.want, s.check = jute.OK, wantVersion(nd.version)
			}
		case 2:
			// A conditional set with a stale version.
			s = step{op: jute.OpSetData, rec: &jute.SetDataRequest{Path: p, Data: []byte(data), Version: 1000}, want: jute.NoNode}
			if nd != nil {
				s.want = jute.BadVersion
			}
		case 3, 4:
			s = step{op: jute.OpGetData, rec: &jute.PathWatch{Path: p}, want: jute.NoNode}
			if nd != nil {
				s.want, s.check = jute.OK, wantData(nd.data)
			}
		case 5:
			s = step{op: jute.OpExists, rec: &jute.PathWatch{Path: p}, want: jute.NoNode}
			if nd != nil {
				s.want, s.check = jute.OK, wantVersion(nd.version)
			}
		case 6:
			s = step{op: jute.OpDelete, rec: &jute.PathVersion{Path: p, Version: -1}, want: jute.NoNode}
			if nd != nil {
				s.want = jute.OK
				delete(model, name)
			}
		case 7:
			s = step{op: jute.OpGetChildren, rec: &jute.PathWatch{Path: root}, want: jute.OK, check: wantChildren(children())}
		case 8:
			if rng.IntN(2) == 0 {
				s = step{op: jute.OpPing, want: jute.OK}
			} else {
				s = step{op: jute.OpSync, rec: &jute.PathRequest{Path: root}, want: jute.OK}
			}
		}
		steps = append(steps, s)
	}
	return steps
}

// Hundreds of mixed requests pipelined on one connection come back in
// order with the results a model predicts, also when the server may hold
// only one request outstanding at a time: throttling slows a client down,
// it never drops or reorders a request.
func TestPipelinedMixed(t *testing.T) {
	tgs := targets(t)
	one := startServer(t, func(c *Config) { c.MaxOutstanding = 1 })
	tgs = append(tgs, target{name: "zoo-maxoutstanding-1", addr: one.addr, zoo: one})
	for _, tg := range tgs {
		t.Run(tg.name, func(t *testing.T) {
			c := newSession(t, tg.addr)
			root := testRoot(t, c)
			runPipelined(t, c, mixedScript(root, 600, 1))
		})
	}
}

// With MaxOutstanding = 1, several connections pipelining at once all
// finish: the one global token is always given back.
func TestThrottledConcurrentClients(t *testing.T) {
	ts := startServer(t, func(c *Config) { c.MaxOutstanding = 1 })
	setup := newSession(t, ts.addr)
	root := testRoot(t, setup)
	t.Run("clients", func(t *testing.T) {
		for i := range 4 {
			t.Run(strconv.Itoa(i), func(t *testing.T) {
				t.Parallel()
				c := newSession(t, ts.addr)
				sub := root + "/c" + strconv.Itoa(i)
				c.create(sub, nil, 0)
				runPipelined(t, c, mixedScript(sub, 300, uint64(i)))
			})
		}
	})
	// Nothing is left outstanding.
	waitFor(t, ioTimeout, func() error {
		if n := len(ts.srv.tokens); n != 0 {
			return fmt.Errorf("%d requests still hold a throttling token", n)
		}
		return nil
	})
	// Pipelining against one token made requests wait, and the metric
	// operators watch for that counted them.
	if n := ts.srv.metrics.throttleWaits.Value(); n == 0 {
		t.Error("zoo_throttled_requests stayed 0")
	}
}

// A large reply and a small one pipelined behind it arrive whole and in
// order: frames are never interleaved on the wire.
func TestPipelinedLargeReplies(t *testing.T) {
	for _, tg := range targets(t) {
		t.Run(tg.name, func(t *testing.T) {
			c := newSession(t, tg.addr)
			root := testRoot(t, c)
			big := bytes.Repeat([]byte("z"), 900<<10)
			c.create(root+"/big", big, 0)
			var steps []step
			for range 20 {
				steps = append(steps,
					step{jute.OpGetData, &jute.PathWatch{Path: root + "/big"}, jute.OK, wantData(string(big))},
					step{jute.OpExists, &jute.PathWatch{Path: root}, jute.OK, nil})
			}
			runPipelined(t, c, steps)
		})
	}
}

// sync is answered in its place among the session's requests: after the
// writes sent before it, before those sent after it. Ref: programmer's
// guide, "Consistency Guarantees"; DESIGN decision 6.
func TestPipelinedSync(t *testing.T) {
	for _, tg := range targets(t) {
		t.Run(tg.name, func(t *testing.T) {
			c := newSession(t, tg.addr)
			root := testRoot(t, c)
			var steps []step
			for i := range 100 {
				steps = append(steps,
					step{jute.OpSetData, &jute.SetDataRequest{Path: root, Data: []byte(strconv.Itoa(i)), Version: -1}, jute.OK, wantVersion(int32(i + 1))},
					step{jute.OpSync, &jute.PathRequest{Path: root}, jute.OK, nil})
			}
			runPipelined(t, c, steps)
		})
	}
}
