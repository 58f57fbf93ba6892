package recipe

import (
	"errors"
	"testing"
)

func TestSharedCount(t *testing.T) {
	forEachTarget(t, func(t *testing.T) {
		ctx, p := testCtx(t), testRoot(t)+"/count"
		a := NewSharedCount(newClient(t), p, 7, nil)
		heard := make(chan int32, 10)
		a.AddListener(func(v int32) { heard <- v })
		if err := a.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = a.Close() })
		if a.Count() != 7 {
			t.Fatalf("seeded count %d", a.Count())
		}
		b := NewSharedCount(newClient(t), p, 99, nil) // the seed of a later starter is ignored
		if err := b.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = b.Close() })
		vv := b.VersionedCount()
		if vv.Value != 7 {
			t.Fatalf("second count sees %d", vv.Value)
		}
		if ok, err := b.TrySetCount(ctx, vv, 8); !ok || err != nil {
			t.Fatalf("TrySetCount = %v, %v", ok, err)
		}
		if got := waitCh(t, ctx, heard, "listener"); got != 8 {
			t.Fatalf("listener heard %d", got)
		}
		if ok, err := b.TrySetCount(ctx, vv, 9); ok || err != nil { // stale version
			t.Fatalf("stale TrySetCount = %v, %v", ok, err)
		}
		if err := a.SetCount(ctx, -5); err != nil {
			t.Fatal(err)
		}
		if got := waitCh(t, ctx, heard, "listener"); got != -5 {
			t.Fatalf("listener heard %d", got)
		}
		c := newClient(t)
		data, _, err := c.Get(ctx, p)
		if err != nil || len(data) != 4 || data[0] != 0xff || data[3] != 0xfb {
			t.Fatalf("node holds % x, %v; want Curator's 4 big-endian bytes", data, err)
		}
		if _, err := parseCount([]byte("12")); !errors.Is(err, ErrNotCount) {
			t.Fatalf("parseCount(2 bytes) = %v", err)
		}
	})
}
