package recipe

import (
	"testing"
	"time"
)

// A Go InterProcessMutex and a Java (Curator) InterProcessMutex on the
// same path exclude each other, in both orders.
func TestCuratorInteropMutex(t *testing.T) {
	forEachTarget(t, func(t *testing.T) {
		ctx, dir := testCtx(t), testRoot(t)+"/lock"
		java := newCuratorPeer(t)
		m := NewInterProcessMutex(newClient(t), dir, nil)

		java.do("lock "+dir, "locked")
		got := make(chan error, 1)
		go func() { got <- m.Acquire(ctx) }()
		waitParticipants(t, ctx, m, 2)
		select {
		case err := <-got:
			t.Fatalf("Go acquired while Java holds the lock (err %v)", err)
		default:
		}
		java.do("unlock", "unlocked")
		if err := waitCh(t, ctx, got, "Go Acquire after Java's release"); err != nil {
			t.Fatal(err)
		}

		java.send("lock " + dir)
		waitParticipants(t, ctx, m, 2)
		java.nothing(500 * time.Millisecond) // Java waits behind Go
		if err := m.Release(ctx); err != nil {
			t.Fatal(err)
		}
		java.expect("locked")
		java.do("unlock", "unlocked")
	})
}
