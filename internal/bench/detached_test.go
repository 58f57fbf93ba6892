package bench

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
)

// globalSessions is the server's session count, from mntr, once the
// server serves (a server just started answers mntr with "not currently
// serving requests").
func globalSessions(t *testing.T, addr string) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		m, err := Mntr(context.Background(), addr)
		if err == nil {
			n, err := strconv.Atoi(m["zk_global_sessions"])
			if err != nil {
				t.Fatalf("mntr zk_global_sessions %q: %v", m["zk_global_sessions"], err)
			}
			return n
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitSessions polls until the server holds want sessions.
func waitSessions(t *testing.T, addr string, want int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		got := globalSessions(t, addr)
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server holds %d sessions after %v, want %d", got, within, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestCurveSessionsDetached: the detached axis counts sessions the
// server holds without a connection, and closes them all at the end.
func TestCurveSessionsDetached(t *testing.T) {
	addr := startZoo(t)
	before := globalSessions(t, addr)
	o := smallCurve("sessions", 10, 60)
	o.Tree, o.Detached, o.IdleTimeout = 200, true, 8*time.Second // the server allows up to 10 s
	rep, recs := runCurve(t, addr, o)
	for i, want := range []int64{10, 60} {
		s := rep.States[i]
		// The curve's 4 admin sessions are connected; the detached are not.
		if s.Sessions < want+4 || s.Connections >= want {
			t.Errorf("step %d: %d sessions over %d connections; want at least %d sessions, fewer connections than %d",
				want, s.Sessions, s.Connections, want+4, want)
		}
	}
	idle := find(recs, "sessidle", "", "60")
	if len(idle) != 1 || idle[0]["detached"] != "true" || idle[0]["global_sessions"] == "na" {
		t.Errorf("sessidle line %v", idle)
	}
	// Closed, not left to expire: the count is back at once, well inside
	// the sessions' 8 s timeout (runCurve's own check holds one more).
	waitSessions(t, addr, before+1, 2*time.Second)
}

// TestDetachedTimeoutCapped: a server that would expire the sessions
// before the curve ends is refused, and the sessions opened are closed.
func TestDetachedTimeoutCapped(t *testing.T) {
	addr := startZoo(t)
	before := globalSessions(t, addr)
	tg := testTarget(t, addr)
	_, err := openDetached(context.Background(), tg, 5, 30*time.Second) // the server caps at 10 s
	if !errors.Is(err, ErrTimeoutCapped) {
		t.Fatalf("open with a timeout above the server's maximum: %v, want ErrTimeoutCapped", err)
	}
	waitSessions(t, addr, before, 2*time.Second)
	if _, err := openDetached(context.Background(), tg, 1, -time.Second); !errors.Is(err, ErrBadOptions) {
		t.Fatalf("open with a negative timeout: %v, want ErrBadOptions", err)
	}

	o := smallCurve("sessions", 5)
	o.Tree, o.Detached, o.IdleTimeout = 20, true, 30*time.Second
	if _, err := Curve(context.Background(), tg, o); !errors.Is(err, ErrTimeoutCapped) {
		t.Fatalf("curve: %v, want ErrTimeoutCapped", err)
	}
	waitSessions(t, addr, before, 2*time.Second)
}

// TestDetachedExpiredCounted: sessions that expired before they were
// closed are counted, not taken for closed.
func TestDetachedExpiredCounted(t *testing.T) {
	addr := startZoo(t)
	before := globalSessions(t, addr)
	tg := testTarget(t, addr)
	ds, err := openDetached(context.Background(), tg, 4, time.Second) // the server's minimum
	if err != nil {
		t.Fatal(err)
	}
	keep, err := openDetached(context.Background(), tg, 2, 8*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if got := globalSessions(t, addr); got != before+6 {
		t.Fatalf("%d sessions after opening 6 detached, want %d", got, before+6)
	}
	waitSessions(t, addr, before+2, 5*time.Second) // the 1 s ones expire
	expired, err := closeDetached(context.Background(), tg, append(ds, keep...))
	if err != nil || expired != 4 {
		t.Fatalf("close: %d expired, %v; want 4 expired and no error", expired, err)
	}
	waitSessions(t, addr, before, 2*time.Second)
}

// TestOpenDetachedProgress: opening and closing many sessions reports
// its progress, and the exported calls close what they opened.
func TestOpenDetachedProgress(t *testing.T) {
	addr := startZoo(t)
	before := globalSessions(t, addr)
	var out bytes.Buffer
	tg := Target{Servers: []string{addr}, Progress: &out}
	ds, err := OpenDetached(context.Background(), tg, 1000, 8*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if ds.Len() != 1000 || globalSessions(t, addr) != before+1000 {
		t.Fatalf("%d opened, the server holds %d sessions; want 1000 more than %d", ds.Len(), globalSessions(t, addr), before)
	}
	if expired, err := ds.Close(context.Background(), tg); expired != 0 || err != nil {
		t.Fatalf("close: %d expired, %v", expired, err)
	}
	waitSessions(t, addr, before, 2*time.Second)
	for _, want := range []string{"1000/1000 detached sessions opened", "1000/1000 detached sessions closed"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("progress %q lacks %q", out.String(), want)
		}
	}
}
