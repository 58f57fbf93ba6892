package recipe

import (
	"path"
	"testing"
	"time"

	"github.com/zoohq/zoo/zk"
)

// A PersistentNode comes back when deleted, with its latest data, and is
// deleted by Close.
func TestPersistentNodeRecreated(t *testing.T) {
	forEachTarget(t, func(t *testing.T) {
		ctx, p := testCtx(t), testRoot(t)+"/dir/me"
		n := NewPersistentNode(newClient(t), p, zk.Ephemeral, true, []byte("v1"), nil)
		if err := n.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = n.Close(ctx) })
		if err := n.WaitForInitialCreate(ctx); err != nil {
			t.Fatal(err)
		}
		first := n.ActualPath()
		if _, ok := zk.ProtectedID(path.Base(first)); !ok || path.Dir(first) != path.Dir(p) {
			t.Fatalf("actual path %s is not a protected name beside %s", first, p)
		}
		if err := n.SetData(ctx, []byte("v2")); err != nil {
			t.Fatal(err)
		}
		w := newClient(t)
		if err := w.Delete(ctx, first, -1); err != nil {
			t.Fatal(err)
		}
		var again string
		if !pollFor(ctx, func() bool {
			again = n.ActualPath()
			if again == "" || again == first {
				return false
			}
			data, _, err := w.Get(ctx, again)
			return err == nil && string(data) == "v2"
		}) {
			t.Fatalf("not re-created with the new data (actual %q)", again)
		}
		if err := n.Close(ctx); err != nil {
			t.Fatal(err)
		}
		if ok, _, err := w.Exists(ctx, again); err != nil || ok {
			t.Fatalf("node left after Close: %v, %v", ok, err)
		}
	})
}

// A PersistentTtlNode stays while touched, and once its process is gone
// the touch node expires and the server removes the container.
func TestPersistentTtlNodeExpiresWhenAbandoned(t *testing.T) {
	forEachTarget(t, func(t *testing.T) {
		ctx, p := testCtx(t), testRoot(t)+"/ttl"
		c := newClient(t)
		n := NewPersistentTtlNode(c, p, 1500*time.Millisecond, []byte("x"), nil)
		if err := n.Start(); err != nil {
			t.Fatal(err)
		}
		if err := n.WaitForInitialCreate(ctx); err != nil {
			t.Fatal(err)
		}
		w := newClient(t)
		var first int64
		if !pollFor(ctx, func() bool {
			_, st, err := w.Get(ctx, p+"/"+touchNode)
			if err != nil {
				return false
			}
			if first == 0 {
				first = st.Mtime
			}
			return st.Mtime > first && st.Version >= 2 // touched twice since
		}) {
			t.Fatal("touch node not kept fresh")
		}
		if ok, _, err := w.Exists(ctx, p); err != nil || !ok {
			t.Fatalf("ttl node gone while touched: %v, %v", ok, err)
		}
		_ = c.Close() // the process dies without cleaning up
		if !pollFor(ctx, func() bool { ok, _, err := w.Exists(ctx, p); return err == nil && !ok }) {
			t.Fatal("abandoned ttl node not removed")
		}
		_ = n.Close(ctx)
	})
}
