package server

import (
	"testing"

	"github.com/zoohq/zoo/internal/jute"
)

// Ref: issue 14 (server CPU per op): a writer that has sent its
// connection's replies waits to send the next burst, of any connection,
// instead of a new goroutine being started for every burst (each grew its
// stack on the way to writev: 5% of the server's CPU at 100% reads).
func TestWritersServeBurstsOfManyConnections(t *testing.T) {
	ts := startServer(t, nil)
	cs := []*rawClient{newSession(t, ts.addr), newSession(t, ts.addr), newSession(t, ts.addr)}
	cs[0].create("/w", nil, 0)
	before := ts.srv.writers.Load()
	const writes = 150
	for i := range writes {
		// One at a time: every reply is a burst of its own, queued by
		// the apply of the write and sent by a writer that then has
		// nothing more to write.
		cs[i%len(cs)].mustCall(jute.OpSetData, &jute.SetDataRequest{Path: "/w", Version: -1}, nil, jute.OK)
	}
	if n := ts.srv.writers.Load() - before; n > 5 {
		t.Fatalf("%d writer goroutines started for %d replies one after another, want a few", n, writes)
	}
}

// Ref: issue 14: the replies to reads a client pipelines are written by
// the connection's reader, a batch to a writev, without handing them to
// a writer goroutine; and they come back whole and in order.
func TestReaderWritesRepliesToPipelinedReads(t *testing.T) {
	ts := startServer(t, nil)
	c := newSession(t, ts.addr)
	c.create("/r", []byte("data"), 0)
	before := ts.srv.bursts.Load()
	const reads = 200
	var batch []byte
	var xids []int32
	for i := range reads {
		op, rec := jute.OpGetData, jute.Record(&jute.PathWatch{Path: "/r"})
		if i%2 == 1 {
			op = jute.OpExists
		}
		xid := c.nextXid()
		xids = append(xids, xid)
		batch = appendRequest(batch, xid, op, rec)
	}
	c.writeRaw(batch)
	for i, xid := range xids {
		r := c.readReply()
		if r.hdr.Xid != xid || r.hdr.Err != jute.OK {
			t.Fatalf("reply %d: %v, want xid %d and OK", i, r, xid)
		}
		if i%2 == 0 {
			var resp jute.GetDataResponse
			r.decode(t, &resp)
			if string(resp.Data) != "data" {
				t.Fatalf("reply %d: data %q, want %q", i, resp.Data, "data")
			}
		}
	}
	if n := ts.srv.bursts.Load() - before; n != 0 {
		t.Fatalf("%d bursts of replies handed to a writer, want the reader to write them all", n)
	}
}

// The reader holds the replies it writes only while the next request is
// buffered whole: one whose rest has not arrived does not keep the
// replies before it from the client, which may be waiting for them
// before it sends the rest.
func TestRepliesGoOutBeforeAPartialFrame(t *testing.T) {
	ts := startServer(t, nil)
	c := newSession(t, ts.addr)
	xid, first := c.request(jute.OpExists, &jute.PathWatch{Path: "/"})
	xid2, second := c.request(jute.OpExists, &jute.PathWatch{Path: "/"})
	half := len(second) / 2
	c.writeRaw(append(first, second[:half]...))
	if r := c.readReply(); r.hdr.Xid != xid || r.hdr.Err != jute.OK {
		t.Fatalf("first reply %v, want xid %d and OK", r, xid)
	}
	c.writeRaw(second[half:])
	if r := c.readReply(); r.hdr.Xid != xid2 || r.hdr.Err != jute.OK {
		t.Fatalf("second reply %v, want xid %d and OK", r, xid2)
	}
}
