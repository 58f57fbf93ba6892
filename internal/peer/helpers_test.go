package peer

import (
	"bytes"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zoohq/zoo/internal/zktest"
)

const waitTimeout = 15 * time.Second

func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if leaked := waitNoLeaks(); len(leaked) > 0 {
			fmt.Fprintf(os.Stderr, "leaked goroutines:\n%s\n", strings.Join(leaked, "\n\n"))
			code = 1
		}
	}
	os.Exit(code)
}

// transportGoroutines lists the goroutines a Transport started (via goFunc,
// goLocked or SendStream) that are still alive.
func transportGoroutines() []string {
	var out []string
	for _, g := range zktest.Goroutines() {
		if strings.Contains(g, "created by github.com/zoohq/zoo/internal/peer.(*Transport)") {
			out = append(out, g)
		}
	}
	return out
}

// waitNoLeaks polls until no transport goroutine is left or the deadline
// passes, and returns what is left.
func waitNoLeaks() []string {
	deadline := time.Now().Add(waitTimeout)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		g := transportGoroutines()
		if len(g) == 0 || time.Now().After(deadline) {
			return g
		}
		<-tick.C
	}
}

// checkLeaks fails the test if, after every later cleanup (the transports'
// Close), goroutines started by a transport are still running.
func checkLeaks(t *testing.T) {
	t.Helper()
	t.Cleanup(func() {
		if g := waitNoLeaks(); len(g) > 0 {
			t.Errorf("leaked %d goroutines:\n%s", len(g), strings.Join(g, "\n\n"))
		}
	})
}

// waitFor polls cond until it holds, failing the test at the deadline.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		<-tick.C
	}
}

// logBuf is a slog destination tests can search, and that also goes to
// t.Log for failures.
type logBuf struct {
	t  *testing.T
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	l.b.Write(p)
	l.mu.Unlock()
	l.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func (l *logBuf) contains(s string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Contains(l.b.String(), s)
}

// inbox collects delivered messages per sender.
type inbox struct {
	mu   sync.Mutex
	msgs map[uint64][]Message
}

func newInbox() *inbox { return &inbox{msgs: make(map[uint64][]Message)} }

func (b *inbox) handle(from uint64, m Message) {
	b.mu.Lock()
	b.msgs[from] = append(b.msgs[from], m)
	b.mu.Unlock()
}

func (b *inbox) from(id uint64) []Message {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]Message(nil), b.msgs[id]...)
}

// waitN waits until n messages from id have arrived and returns them.
func (b *inbox) waitN(t *testing.T, id uint64, n int) []Message {
	t.Helper()
	waitFor(t, fmt.Sprintf("%d messages from %d", n, id), func() bool { return len(b.from(id)) >= n })
	return b.from(id)
}

type node struct {
	id  uint64
	tr  *Transport
	in  *inbox
	log *logBuf
}

func listen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// testConfig is fast: heartbeats and backoff short enough that tests
// recover quickly, idle timeout long enough that a loaded -race run does
// not flap links.
func testConfig(id uint64, ln net.Listener, peers map[uint64]string) Config {
	cfg := Config{
		ID:                id,
		Listener:          ln,
		Peers:             peers,
		HeartbeatInterval: 50 * time.Millisecond,
		IdleTimeout:       3 * time.Second,
	}
	cfg.Backoff.Min = 5 * time.Millisecond
	cfg.Backoff.Max = 50 * time.Millisecond
	return cfg
}

// startNode starts a transport on ln; mod may adjust the config. Close runs
// at cleanup.
func startNode(t *testing.T, id uint64, ln net.Listener, peers map[uint64]string, mod func(*Config)) *node {
	t.Helper()
	n := &node{id: id, in: newInbox(), log: &logBuf{t: t}}
	cfg := testConfig(id, ln, peers)
	cfg.Handler = n.in.handle
	cfg.Logger = slog.New(slog.NewTextHandler(n.log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if mod != nil {
		mod(&cfg)
	}
	tr, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	n.tr = tr
	t.Cleanup(func() {
		if err := tr.Close(); err != nil {
			t.Errorf("close %d: %v", id, err)
		}
	})
	tr.Start()
	return n
}

// mesh starts servers 1..n, all knowing each other.
func mesh(t *testing.T, n int, mod func(*Config)) []*node {
	t.Helper()
	lns := make([]net.Listener, n)
	addrs := make(map[uint64]string)
	for i := range lns {
		lns[i] = listen(t)
		addrs[uint64(i+1)] = lns[i].Addr().String()
	}
	nodes := make([]*node, n)
	for i := range nodes {
		nodes[i] = startNode(t, uint64(i+1), lns[i], addrs, mod)
	}
	return nodes
}

func waitConnected(t *testing.T, a, b *node) {
	t.Helper()
	waitFor(t, fmt.Sprintf("link %d<->%d", a.id, b.id), func() bool {
		return a.tr.Connected(b.id) && b.tr.Connected(a.id)
	})
}

func msg(kind uint8, format string, args ...any) Message {
	return Message{Kind: kind, Data: fmt.Appendf(nil, format, args...)}
}

// faultConn corrupts the last byte of the next Write once armed. A writer
// flushes whole frames, so that byte is a CRC byte.
type faultConn struct {
	net.Conn
	armed *atomic.Bool
}

func (c *faultConn) Write(p []byte) (int, error) {
	if len(p) > 0 && c.armed.CompareAndSwap(true, false) {
		q := append([]byte(nil), p...)
		q[len(q)-1] ^= 0xff
		return c.Conn.Write(q)
	}
	return c.Conn.Write(p)
}

// rawPeer speaks the protocol by hand, to send what a Transport never would.
type rawPeer struct {
	net.Conn
}

func dialRaw(t *testing.T, addr string, h hello) (*rawPeer, ackStatus) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.SetDeadline(time.Now().Add(waitTimeout)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write(h.append(nil)); err != nil {
		t.Fatal(err)
	}
	var ack [ackLen]byte
	if _, err := c.Read(ack[:]); err != nil {
		t.Fatalf("reading ack: %v", err)
	}
	return &rawPeer{c}, ackStatus(ack[0])
}

// waitClosed reads (and drops) until the other side closes the connection.
func (r *rawPeer) waitClosed(t *testing.T) {
	t.Helper()
	buf := make([]byte, 4096)
	for {
		if _, err := r.Read(buf); err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				t.Fatalf("connection not closed by the transport")
			}
			return
		}
	}
}
