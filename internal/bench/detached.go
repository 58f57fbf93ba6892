package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"sync/atomic"
	"time"

	"github.com/zoohq/zoo/internal/jute"
)

// Detached sessions take the sessions axis past the open-file limit.
//
// A held idle session costs a descriptor in the server and one here, so
// the held axis stops at the limit (20,000 where the curve was first
// measured, against issue 14's 100,000). But a session outlives its
// connection: the server keeps it, its timeout running, until it expires
// or a client closes it. A detached session is opened with a bare
// handshake whose connection is dropped at once, so it costs the server
// its session state and no descriptor. It measures what a session costs
// apart from its connection (the session table and its expiry
// bookkeeping), which is what a server carries for clients that come and
// go; the held axis measures the connection's cost too.
//
// The zk client cannot leave a session without a connection (it
// reconnects, and its Close ends the session), hence the bare protocol.
// A detached session must outlive the curve, so a server that negotiates
// its timeout down (maxSessionTimeout) is refused rather than measured
// with sessions expiring under it. At the end each one is reattached and
// closed, as a client's Close would, so that the target is left as it was
// found; one that cannot be reattached had expired, and spoils the run.

// detached is a session with no connection.
type detached struct {
	server string
	id     int64
	passwd []byte
}

// Detached is a set of sessions the server holds without a connection.
type Detached struct{ ds []detached }

// Len is how many sessions there are.
func (d *Detached) Len() int { return len(d.ds) }

// OpenDetached opens n sessions with the given timeout and drops their
// connections, session i on server i mod N. It fails with
// ErrTimeoutCapped if a server grants less than timeout.
func OpenDetached(ctx context.Context, t Target, n int, timeout time.Duration) (*Detached, error) {
	t, err := t.withDefaults()
	if err != nil {
		return nil, err
	}
	ds, err := openDetached(ctx, t, n, timeout)
	return &Detached{ds}, err
}

// Close reattaches each session and closes it. It returns how many had
// expired, and the first other error, after trying every session.
func (d *Detached) Close(ctx context.Context, t Target) (expired int, err error) {
	t, err = t.withDefaults()
	if err != nil {
		return 0, err
	}
	return closeDetached(ctx, t, d.ds)
}

// ErrTimeoutCapped: the server negotiated a detached session's timeout
// below what was asked.
var ErrTimeoutCapped = errors.New("bench: the server capped the session timeout")

// openDetached opens n detached sessions with the given timeout, session
// i on server i mod N, 32 at a time.
func openDetached(ctx context.Context, t Target, n int, timeout time.Duration) ([]detached, error) {
	ds := make([]detached, n)
	var opened atomic.Int64
	p := countProgress(t, "opened", n, &opened)
	err := parallel(n, 32, func(i int) error {
		server := t.Servers[i%len(t.Servers)]
		d, err := openOne(ctx, t, server, timeout)
		if err != nil {
			return err
		}
		ds[i] = d
		opened.Add(1)
		return nil
	})
	p.stop()
	if err != nil {
		// Those opened already are closed, not left to expire.
		var opened []detached
		for _, d := range ds {
			if d.server != "" {
				opened = append(opened, d)
			}
		}
		_, _ = closeDetached(context.WithoutCancel(ctx), t, opened)
		return nil, err
	}
	return ds, nil
}

func openOne(ctx context.Context, t Target, server string, timeout time.Duration) (detached, error) {
	if timeout <= 0 || timeout/time.Millisecond > math.MaxInt32 {
		return detached{}, fmt.Errorf("%w: session timeout %v", ErrBadOptions, timeout)
	}
	want := int32(timeout / time.Millisecond)
	resp, nc, err := bareHandshake(ctx, t, server, &jute.ConnectRequest{TimeOut: want, Passwd: make([]byte, 16)})
	if err != nil {
		return detached{}, err
	}
	_ = nc.Close()
	if resp.TimeOut <= 0 || resp.SessionID == 0 {
		return detached{}, fmt.Errorf("%s refused a new session", server)
	}
	d := detached{server: server, id: resp.SessionID, passwd: resp.Passwd}
	if resp.TimeOut < want {
		_, _ = closeDetached(context.WithoutCancel(ctx), t, []detached{d})
		return detached{}, fmt.Errorf("%w: %s gave %d ms for the %d ms asked; raise its maxSessionTimeout",
			ErrTimeoutCapped, server, resp.TimeOut, want)
	}
	return d, nil
}

// closeDetached reattaches each session and closes it, 32 at a time. It
// returns how many had expired (the server refused to reattach them),
// and the first other error, after trying every session.
func closeDetached(ctx context.Context, t Target, ds []detached) (expired int, err error) {
	var gone, done atomic.Int64
	var firstErr atomic.Pointer[error]
	p := countProgress(t, "closed", len(ds), &done)
	_ = parallel(len(ds), 32, func(i int) error {
		switch err := closeOne(ctx, t, ds[i]); {
		case errors.Is(err, errExpired):
			gone.Add(1)
		case err != nil:
			firstErr.CompareAndSwap(nil, &err)
		}
		done.Add(1)
		return nil
	})
	p.stop()
	if p := firstErr.Load(); p != nil {
		err = *p
	}
	return int(gone.Load()), err
}

var errExpired = errors.New("session expired")

func closeOne(ctx context.Context, t Target, d detached) error {
	resp, nc, err := bareHandshake(ctx, t, d.server, &jute.ConnectRequest{TimeOut: 30000, SessionID: d.id, Passwd: d.passwd})
	if err != nil {
		return err
	}
	defer nc.Close()
	if resp.TimeOut <= 0 {
		return errExpired
	}
	if _, err := nc.Write(jute.AppendFrame(nil, &jute.RequestHeader{Xid: 1, Type: jute.OpCloseSession})); err != nil {
		return fmt.Errorf("close session 0x%x: %w", d.id, err)
	}
	frame, err := jute.ReadFrame(nc, nil, 1<<20)
	if err != nil {
		return fmt.Errorf("close session 0x%x: %w", d.id, err)
	}
	var h jute.ReplyHeader
	if err := jute.UnmarshalPrefix(frame, &h); err != nil {
		return fmt.Errorf("close session 0x%x: %w", d.id, err)
	}
	if h.Err != jute.OK {
		return fmt.Errorf("close session 0x%x: error %d", d.id, h.Err)
	}
	return nil
}

// bareHandshake dials server and sends req; the connection is returned
// open, with a deadline of t.ConnectTimeout.
func bareHandshake(ctx context.Context, t Target, server string, req *jute.ConnectRequest) (*jute.ConnectResponse, net.Conn, error) {
	dctx, cancel := context.WithTimeout(ctx, t.ConnectTimeout)
	defer cancel()
	var dialer net.Dialer
	nc, err := dialer.DialContext(dctx, "tcp", server)
	if err != nil {
		return nil, nil, fmt.Errorf("connect %s: %w", server, err)
	}
	dl, _ := dctx.Deadline()
	_ = nc.SetDeadline(dl)
	resp, err := func() (*jute.ConnectResponse, error) {
		if _, err := nc.Write(jute.AppendFrame(nil, req)); err != nil {
			return nil, err
		}
		frame, err := jute.ReadFrame(nc, nil, 1<<20)
		if err != nil {
			return nil, err
		}
		var resp jute.ConnectResponse
		if err := jute.UnmarshalPrefix(frame, &resp); err != nil {
			return nil, err
		}
		return &resp, nil
	}()
	if err != nil {
		_ = nc.Close()
		return nil, nil, fmt.Errorf("handshake with %s: %w", server, err)
	}
	return resp, nc, nil
}

// countProgress reports count of n detached sessions every second, when
// there are enough for it to matter.
func countProgress(t Target, what string, n int, count *atomic.Int64) *progress {
	w := t.Progress
	if n < 1000 {
		w = nil
	}
	return startProgress(w, t.ProgressEvery, func(el time.Duration) string {
		c := count.Load()
		return fmt.Sprintf("sessions: %6.1fs %d/%d detached sessions %s (%.0f/s)", el.Seconds(), c, n, what, float64(c)/max(el.Seconds(), 1e-9))
	})
}
