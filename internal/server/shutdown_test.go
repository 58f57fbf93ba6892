package server

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/zoohq/zoo/internal/jute"
)

// Shutdown with connections in every state returns promptly, closes them
// all, makes Serve return ErrServerClosed, and leaves no goroutine behind
// (TestMain checks that for the whole package). Ref: STYLE pattern 17.
func TestShutdownWithOpenConnections(t *testing.T) {
	cfg := baseConfig()
	cfg.Logger = testLogger(t)
	ts := newTestServer(t, cfg)

	var clients []*rawClient
	add := func(c *rawClient) *rawClient { clients = append(clients, c); return c }

	add(dialRaw(t, ts.addr))                                // no handshake yet
	add(dialRaw(t, ts.addr)).writeRaw(frameHeader(40))      // half a connect request
	idle := add(newSession(t, ts.addr))                     // an idle session
	add(newSession(t, ts.addr)).writeRaw(frameHeader(1000)) // half a request
	watcher := add(newSession(t, ts.addr))                  // a session with a watch
	add(dialRaw(t, ts.addr)).writeRaw([]byte("ru"))         // half a four-letter word
	slow := add(dialSmallBuffer(t, ts.addr))                // a client not reading
	root := testRoot(t, idle)
	idle.create(root+"/big", make([]byte, 500<<10), 0)
	watcher.mustCall(jute.OpGetData, &jute.PathWatch{Path: root, Watch: true}, nil, jute.OK)
	slow.handshake(connectReq(30000))
	var out []byte
	for range 50 {
		_, f := slow.request(jute.OpGetData, &jute.PathWatch{Path: root + "/big"})
		out = append(out, f...)
	}
	slow.writeRaw(out)
	// A burst of writes in flight on one more session.
	busy := add(newSession(t, ts.addr))
	out = nil
	for range 200 {
		_, f := busy.request(jute.OpSetData, &jute.SetDataRequest{Path: root, Data: []byte("x"), Version: -1})
		out = append(out, f...)
	}
	busy.writeRaw(out)
	// A pipelined read waits on those writes (FIFO).
	busy.send(jute.OpGetData, &jute.PathWatch{Path: root})

	start := time.Now()
	if err := ts.shutdown(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Shutdown took %v", d)
	}
	for i, c := range clients {
		_ = c.nc.SetReadDeadline(time.Now().Add(ioTimeout))
		for {
			if _, err := c.readFrame(); err != nil {
				if !isClosed(err) {
					t.Errorf("client %d: %v, want the connection closed", i, err)
				}
				break
			}
		}
	}

	// Idempotent, and Serve refuses a new listener.
	if err := ts.srv.Shutdown(context.Background()); err != nil {
		t.Errorf("second Shutdown: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := ts.srv.Serve(ln); !errors.Is(err, ErrServerClosed) {
		t.Errorf("Serve after Shutdown: %v", err)
	}
	if _, err := net.Dial("tcp", ln.Addr().String()); err == nil {
		t.Error("Serve after Shutdown left its listener open")
	}
}

// Shutdown of a server that never served, and Shutdown with an expired
// context, both return; the latter reports the context's error only if
// the goroutines are not done.
func TestShutdownEdges(t *testing.T) {
	t.Run("never served", func(t *testing.T) {
		srv, err := New(baseConfig())
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("cancelled context", func(t *testing.T) {
		ts := newTestServer(t, baseConfig())
		newSession(t, ts.addr)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := ts.srv.Shutdown(ctx); err != nil && !errors.Is(err, context.Canceled) {
			t.Fatalf("Shutdown with a cancelled context: %v", err)
		}
		// A second call with time to spare waits for the rest.
		if err := ts.shutdown(5 * time.Second); err != nil {
			t.Fatal(err)
		}
	})
}

// Replies to writes still in flight when their connection closes (the
// client hangs up, closes its session, or sends a bad frame) are dropped
// without harm. Run with -race: the reply and the close race by design.
func TestRepliesRacingClose(t *testing.T) {
	ts := startServer(t, nil)
	setup := newSession(t, ts.addr)
	root := testRoot(t, setup)
	for _, tc := range []struct {
		name string
		end  func(c *rawClient) []byte
	}{
		{"client hangs up", func(*rawClient) []byte { return nil }},
		{"closeSession", func(c *rawClient) []byte { return c.requestFrame(jute.OpCloseSession, nil) }},
		{"bad length", func(*rawClient) []byte { return frameHeader(-1) }},
		{"truncated request", func(*rawClient) []byte { return append(frameHeader(9), 0, 0, 0, 9, 0, 0, 0, 4, 0) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for range 100 {
				c := newSession(t, ts.addr)
				var out []byte
				for range 10 {
					out = append(out, c.requestFrame(jute.OpCreate, createReq(root+"/n-", nil, jute.FlagEphemeralSequential))...)
				}
				out = append(out, tc.end(c)...)
				c.writeRaw(out)
				_ = c.nc.(*net.TCPConn).CloseWrite()
				c.expectClosed()
				c.close()
			}
			checkServing(t, ts.addr)
		})
	}
}
