package recipe

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/zoohq/zoo/zk"
)

// cutter is a dialer whose connections the test can cut, and refuse
// until restored: the client cannot reach the server, so the server
// expires its session.
type cutter struct {
	mu     sync.Mutex
	conns  []net.Conn
	refuse bool
}

func (d *cutter) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.refuse {
		return nil, errors.New("cut")
	}
	c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
	if err == nil {
		d.conns = append(d.conns, c)
	}
	return c, err
}

func (d *cutter) cut(refuse bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.refuse = refuse
	for _, c := range d.conns {
		_ = c.Close()
	}
	d.conns = nil
}

// The holder's session expires while it is cut off: the next waiter gets
// the lock, and the holder, once it reaches the server again, learns that
// its session expired and sees the lock lost (never a false "held").
func TestMutexHolderSessionExpires(t *testing.T) {
	forEachTarget(t, func(t *testing.T) {
		ctx, dir := testCtx(t), testRoot(t)
		waiting := make(chan string, 1)
		setHooks(t, dir, hooks{waiting: func(self, _ string) { waiting <- self }})
		d := &cutter{}
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		hc, err := zk.Connect(cctx, serverAddr(t), zk.WithSessionTimeout(time.Second), zk.WithDialer(d.dial))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = hc.Close() })
		holder := NewMutex(hc, dir, nil)
		if err := holder.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		next := NewMutex(newClient(t), dir, nil)
		got := make(chan error, 1)
		go func() { got <- next.Lock(ctx) }()
		waitCh(t, ctx, waiting, "waiter to queue")
		d.cut(true)
		if err := waitCh(t, ctx, got, "next Lock after the holder's session expired"); err != nil {
			t.Fatal(err)
		}
		d.cut(false) // the holder reconnects and is told its session expired
		waitCh(t, ctx, holder.Done(), "holder's Done")
		if err := holder.Err(); !errors.Is(err, ErrLost) {
			t.Fatalf("holder.Err() = %v, want ErrLost", err)
		}
		if err := next.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	})
}
