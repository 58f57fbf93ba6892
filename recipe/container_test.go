package recipe

import (
	"testing"
)

// A Mutex's directory is a container: once the last contender is gone
// the server removes it, instead of leaving it behind.
func TestMutexDirectoryIsContainer(t *testing.T) {
	forEachTarget(t, func(t *testing.T) {
		ctx, dir := testCtx(t), testRoot(t)+"/locks/a"
		c := newClient(t)
		m := NewMutex(c, dir, nil)
		if err := m.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		if err := m.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		if !pollFor(ctx, func() bool { ok, _, err := c.Exists(ctx, testRootOf(dir)); return err == nil && !ok }) {
			t.Fatal("lock directories left behind")
		}
		if hs, err := Holders(ctx, c, dir); err != nil || len(hs) != 0 {
			t.Fatalf("Holders of a reaped lock = %v, %v", hs, err)
		}
		if err := m.Lock(ctx); err != nil { // and it is made again
			t.Fatal(err)
		}
		_ = m.Unlock(ctx)
	})
}

// testRootOf is the first component of p.
func testRootOf(p string) string {
	for i := 1; i < len(p); i++ {
		if p[i] == '/' {
			return p[:i]
		}
	}
	return p
}
