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
	before := ts.srv.writers.Load()
	const pings = 300
	for i := range pings {
		// One at a time: every reply is a burst of its own, sent by
		// a writer that then has nothing more to write.
		cs[i%len(cs)].mustCall(jute.OpPing, nil, nil, jute.OK)
	}
	if n := ts.srv.writers.Load() - before; n > 5 {
		t.Fatalf("%d writer goroutines started for %d replies one after another, want a few", n, pings)
	}
}
