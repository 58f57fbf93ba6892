package server

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zoohq/zoo/internal/jute"
)

// The memory an idle session costs is what decides how many sessions a
// server holds (issue 17: 19–24 KB each, never given back). These tests
// count it in-process: the server's live heap plus goroutine stacks, after
// a collection, with clients that hold nothing but their socket so that
// what is measured is (almost all) the server's.

// thinClient is a session's client side reduced to its socket.
type thinClient struct {
	nc  net.Conn
	sid int64
}

// openThin opens a session with a bare socket and no buffers.
func openThin(addr string, timeoutMs int32) (*thinClient, error) {
	nc, err := net.DialTimeout("tcp", addr, ioTimeout)
	if err != nil {
		return nil, err
	}
	req := connectReq(timeoutMs)
	if _, err := nc.Write(jute.AppendFrame(nil, &req)); err != nil {
		nc.Close()
		return nil, err
	}
	_ = nc.SetReadDeadline(time.Now().Add(ioTimeout))
	frame, err := readThinFrame(nc)
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("connect response: %w", err)
	}
	var resp jute.ConnectResponse
	if err := jute.Unmarshal(frame, &resp); err != nil || resp.SessionID == 0 {
		nc.Close()
		return nil, fmt.Errorf("connect refused: %+v %v", resp, err)
	}
	_ = nc.SetReadDeadline(time.Time{})
	return &thinClient{nc: nc, sid: resp.SessionID}, nil
}

func readThinFrame(r io.Reader) ([]byte, error) {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return nil, err
	}
	size := binary.BigEndian.Uint32(n[:])
	if size > 1<<20 {
		return nil, fmt.Errorf("frame of %d bytes", size)
	}
	frame := make([]byte, size)
	_, err := io.ReadFull(r, frame)
	return frame, err
}

// ping sends a ping and waits for its reply.
func (c *thinClient) ping() error {
	_ = c.nc.SetDeadline(time.Now().Add(ioTimeout))
	defer c.nc.SetDeadline(time.Time{})
	if _, err := c.nc.Write(appendRequest(nil, -2, jute.OpPing, nil)); err != nil {
		return err
	}
	frame, err := readThinFrame(c.nc)
	if err != nil {
		return err
	}
	var h jute.ReplyHeader
	if err := jute.Unmarshal(frame[:16], &h); err != nil {
		return err
	}
	if h.Xid != -2 || h.Err != jute.OK {
		return fmt.Errorf("ping answered %+v", h)
	}
	return nil
}

// closeSession ends the session as a client does, and closes the socket.
func (c *thinClient) closeSession() error {
	defer c.nc.Close()
	_ = c.nc.SetDeadline(time.Now().Add(ioTimeout))
	if _, err := c.nc.Write(appendRequest(nil, 1, jute.OpCloseSession, nil)); err != nil {
		return err
	}
	_, err := readThinFrame(c.nc)
	return err
}

// openMany opens n sessions, a few at a time.
func openMany(t testing.TB, addr string, n int, timeoutMs int32) []*thinClient {
	t.Helper()
	return openSessions(t, addr, n, timeoutMs, false)
}

// openSessions opens n sessions, a few at a time; with drop, each client
// closes its socket once its session is open (a client that died).
func openSessions(t testing.TB, addr string, n int, timeoutMs int32, drop bool) []*thinClient {
	t.Helper()
	out := make([]*thinClient, n)
	var wg sync.WaitGroup
	errs := make(chan error, 1)
	next := make(chan int)
	for range 8 {
		wg.Go(func() {
			for i := range next {
				c, err := openThin(addr, timeoutMs)
				if err != nil {
					select {
					case errs <- err:
					default:
					}
					continue
				}
				if drop {
					c.nc.Close()
				}
				out[i] = c
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	select {
	case err := <-errs:
		for _, c := range out {
			if c != nil {
				c.nc.Close()
			}
		}
		t.Fatalf("open sessions: %v", err)
	default:
	}
	return out
}

// closeMany closes every session, a few at a time.
func closeMany(t testing.TB, cs []*thinClient) {
	t.Helper()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	next := make(chan *thinClient)
	for range 8 {
		wg.Go(func() {
			for c := range next {
				if err := c.closeSession(); err != nil {
					mu.Lock()
					first = err
					mu.Unlock()
				}
			}
		})
	}
	for _, c := range cs {
		next <- c
	}
	close(next)
	wg.Wait()
	if first != nil {
		t.Fatalf("close sessions: %v", first)
	}
}

// liveBytes is the process's live heap and goroutine stacks after a full
// collection: what the server holds, not what it has yet to collect.
func liveBytes() uint64 {
	var ms runtime.MemStats
	for range 2 {
		runtime.GC()
	}
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc + ms.StackInuse
}

// sessionCounts returns how many connections and tracked sessions the
// server holds.
func (ts *testServer) sessionCounts() (conns, sessions int) {
	s := ts.srv
	s.mu.RLock()
	conns = len(s.conns)
	s.mu.RUnlock()
	s.smu.Lock()
	sessions = s.hk.tracker.Len()
	s.smu.Unlock()
	return conns, sessions
}

func (ts *testServer) waitSessions(t testing.TB, conns, sessions int) {
	t.Helper()
	waitFor(t, 30*time.Second, func() error {
		if c, s := ts.sessionCounts(); c != conns || s != sessions {
			return fmt.Errorf("%d connections and %d sessions, want %d and %d", c, s, conns, sessions)
		}
		return nil
	})
}

// TestSessionMemoryIdle opens idle sessions, checks what each costs, then
// closes them and checks that the memory is given back. A first wave of
// as many sessions comes and goes before the measure: the Go runtime
// keeps a dead goroutine's descriptor for reuse, so the level to return
// to is the one after a wave, and a second wave must not raise it (issue
// 17 saw each wave add hundreds of MiB).
func TestSessionMemoryIdle(t *testing.T) {
	if testing.Short() {
		t.Skip("opens thousands of sockets")
	}
	const (
		n = 3000
		// Issue 17's target is 8 KB of RSS per idle session. RSS adds the
		// collector's headroom to the live heap and stacks measured here
		// (which include the client side's sockets): scale.sh saw 8.4 KB
		// of RSS when this measured 6.4 KB, before idle readers rested
		// (rest.go). Resting saves their 2 KiB of stack.
		perSession = 6 << 10
	)
	dir := t.TempDir()
	// The clients never ping: a timeout longer than opening thousands of
	// sessions takes on a loaded machine under -race.
	const timeoutMs = 600000
	ts := startServer(t, func(c *Config) {
		c.MaxClientCnxns = 0
		c.MaxSessionTimeout = timeoutMs
		// A data directory and frequent snapshots keep the log's share
		// of memory (two txns a session) bounded, so that what is
		// measured after the sessions close is what they left behind.
		c.DataDir, c.SnapCount, c.CommitLogCount = dir, 1000, 100
		c.RestAfter = 10 * time.Millisecond
	})
	start := liveBytes()
	closeMany(t, openMany(t, ts.addr, n, timeoutMs))
	ts.waitSessions(t, 0, 0)
	before := liveBytes()
	t.Logf("live heap+stacks: %d KiB at start, %d KiB after a first wave of %d sessions", start>>10, before>>10, n)

	cs := openMany(t, ts.addr, n, timeoutMs)
	ts.waitSessions(t, n, n)
	// Some sessions are used once more, as an idle client's pings do.
	for _, c := range cs[:100] {
		if err := c.ping(); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, 30*time.Second, func() error {
		if n := ts.waitingReaders(); n != 0 {
			return fmt.Errorf("%d idle readers have not rested", n)
		}
		return nil
	})
	open := liveBytes()
	per := (int64(open) - int64(before)) / n
	t.Logf("%d KiB with %d idle sessions: %d B per session", open>>10, n, per)
	if per > perSession && !raceEnabled {
		t.Errorf("an idle session costs %d bytes, want at most %d", per, perSession)
	}

	closeMany(t, cs)
	ts.waitSessions(t, 0, 0)
	after := liveBytes()
	held := int64(after) - int64(before)
	t.Logf("after closing them: %d KiB (%+d KiB)", after>>10, held>>10)
	if limit := int64(before) / 5; held > limit {
		t.Errorf("after the sessions closed the server holds %d bytes more than before them, want at most %d (20%%)", held, limit)
	}
}

func TestMemReleaseOncePerWave(t *testing.T) {
	var m memRelease
	now := time.Unix(1000, 0)
	steps := []struct {
		conns int
		after time.Duration
		want  bool
	}{
		{100, 0, false},             // few connections
		{10000, time.Second, false}, // a wave arrives
		{9000, time.Second, false},  // some leave: not half
		{4000, time.Second, false},  // most of the wave left, and more are leaving
		{3000, time.Second, false},
		{3000, time.Second, true},  // the wave is over
		{2500, time.Second, false}, // released already; the peak restarts at 3000
		{100, time.Second, false},  // falling
		{100, time.Second, false},  // within releaseEvery of the last
		{100, releaseEvery, true},  // and now it is due
		{100, releaseEvery, false}, // nothing new left
		{900, releaseEvery, false}, // small churn never releases
		{50, releaseEvery, false},
		{50, releaseEvery, false},
	}
	for i, s := range steps {
		now = now.Add(s.after)
		if got := m.due(s.conns, now); got != s.want {
			t.Fatalf("step %d (%d connections): due = %v, want %v", i, s.conns, got, s.want)
		}
	}
}

// Housekeeping asks for memory back between expiring sessions; the release
// can take seconds on a large tree, so asking must never wait for it.
func TestMemFreerAskNeverBlocks(t *testing.T) {
	running, unblock := make(chan struct{}), make(chan struct{})
	var freed atomic.Int32
	m := newMemFreer(func() {
		if freed.Add(1) == 1 {
			close(running)
			<-unblock // the first release takes "seconds"
		}
	})
	quit := make(chan struct{})
	done := make(chan struct{})
	go func() { defer close(done); m.run(quit) }()
	m.ask()
	<-running
	for range 100 {
		m.ask() // returns at once while the release runs
	}
	close(unblock)
	waitFor(t, ioTimeout, func() error {
		if n := freed.Load(); n != 2 {
			return fmt.Errorf("%d releases, want 2 (the asks during one coalesce into one)", n)
		}
		return nil
	})
	close(quit)
	<-done
}
