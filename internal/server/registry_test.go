package server

import (
	"slices"
	"testing"
)

func regRequest(c *conn, xid int32) *request { return &request{conn: c, xid: xid} }

func xids(rs []*request) []int32 {
	var out []int32
	for _, r := range rs {
		out = append(out, r.xid)
	}
	return out
}

// Reads wait for exactly the writes their connection sent before them,
// and come out in arrival order; other connections do not hold them.
func TestRegistryFIFO(t *testing.T) {
	g := newRegistry()
	a, b := &conn{id: 1}, &conn{id: 2}
	g.open(a.id)
	g.open(b.id)

	if wait, ok := g.addRead(regRequest(a, 1)); wait || !ok {
		t.Fatalf("read with no write in flight: wait %v ok %v, want answered now", wait, ok)
	}
	w1, _ := g.addWrite(regRequest(a, 2))
	g.addRead(regRequest(a, 3))
	w2, _ := g.addWrite(regRequest(a, 4))
	g.addRead(regRequest(a, 5))
	g.addRead(regRequest(a, 6))
	bw, _ := g.addWrite(regRequest(b, 7))
	if w1 == w2 || w1 == bw || w1 == 0 {
		t.Fatalf("tags %d %d %d: want distinct and nonzero", w1, w2, bw)
	}
	if n := g.inFlight(a.id); n != 2 {
		t.Fatalf("inFlight = %d, want 2", n)
	}
	if ch := g.drained(a.id); ch == nil {
		t.Fatal("drained with writes in flight: nil")
	}
	if got := g.take(bw); got == nil || got.xid != 7 {
		t.Fatalf("take(b's write) = %v", got)
	}
	if due := g.writeDone(b.id); len(due) != 0 {
		t.Fatalf("b's write done released %v", xids(due))
	}
	if got := g.take(w1); got == nil || got.xid != 2 {
		t.Fatalf("take(w1) = %v", got)
	}
	if g.take(w1) != nil {
		t.Fatal("a write was taken twice")
	}
	if due := g.writeDone(a.id); !slices.Equal(xids(due), []int32{3}) {
		t.Fatalf("after the first write: due %v, want [3]", xids(due))
	}
	ch := g.drained(a.id)
	g.take(w2)
	if due := g.writeDone(a.id); !slices.Equal(xids(due), []int32{5, 6}) {
		t.Fatalf("after the second write: due %v, want [5 6]", xids(due))
	}
	select {
	case <-ch:
	default:
		t.Fatal("drained not closed when the last write was done")
	}
	if w, r := g.size(); w != 0 || r != 0 {
		t.Fatalf("size = %d writes %d reads, want empty", w, r)
	}
}

// A closed connection's waiting reads come back to be failed; its writes
// stay until taken; later requests of it are refused.
func TestRegistryClose(t *testing.T) {
	g := newRegistry()
	c := &conn{id: 9}
	g.open(c.id)
	w, _ := g.addWrite(regRequest(c, 1))
	g.addRead(regRequest(c, 2))
	ch := g.drained(c.id)
	if left := g.close(c.id); !slices.Equal(xids(left), []int32{2}) {
		t.Fatalf("close returned %v, want [2]", xids(left))
	}
	select {
	case <-ch:
	default:
		t.Fatal("drained not closed at close")
	}
	if _, ok := g.addWrite(regRequest(c, 3)); ok {
		t.Fatal("write of a closed connection registered")
	}
	if _, ok := g.addRead(regRequest(c, 4)); ok {
		t.Fatal("read of a closed connection queued")
	}
	if g.take(w) == nil {
		t.Fatal("a closed connection's write was lost before its event")
	}
	if due := g.writeDone(c.id); len(due) != 0 {
		t.Fatalf("writeDone of a closed connection: %v", xids(due))
	}
	if g.close(c.id) != nil {
		t.Fatal("second close returned reads")
	}
}

// takeAll hands back every write left, including the server's own (no
// connection), and leaves the registry empty.
func TestRegistryTakeAll(t *testing.T) {
	g := newRegistry()
	c := &conn{id: 1}
	g.open(c.id)
	g.addWrite(regRequest(c, 1))
	g.addWrite(&request{})
	if all := g.takeAll(); len(all) != 2 {
		t.Fatalf("takeAll returned %d, want 2", len(all))
	}
	if w, _ := g.size(); w != 0 {
		t.Fatalf("%d writes left", w)
	}
}
