package recipe

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestItemEncoding(t *testing.T) {
	// Curator's ItemSerializer for the single item "hi".
	want := []byte{0, 1, 0, 1, 1, 0, 0, 0, 2, 'h', 'i', 2}
	if got := EncodeItems([]byte("hi")); !bytes.Equal(got, want) {
		t.Fatalf("EncodeItems = % x, want % x", got, want)
	}
	items, err := DecodeItems(EncodeItems([]byte("a"), nil, []byte("ccc")))
	if err != nil || fmt.Sprintf("%q", items) != `["a" "" "ccc"]` {
		t.Fatalf("DecodeItems = %q, %v", items, err)
	}
	for _, bad := range [][]byte{nil, {0, 1, 0, 1}, {0, 1, 0, 1, 1, 0, 0, 0, 9, 'x', 2}, {0, 0, 0, 0, 2}} {
		if _, err := DecodeItems(bad); !errors.Is(err, ErrBadItem) {
			t.Errorf("DecodeItems(% x) = %v, want ErrBadItem", bad, err)
		}
	}
	if d, ok := dueOf("queue-|18BCFE56800|0000000003"); !ok || d != 0x18BCFE56800 {
		t.Fatalf("dueOf = %x, %v", d, ok)
	}
}

func FuzzDecodeItems(f *testing.F) {
	f.Add(EncodeItems([]byte("hi"), []byte("there")))
	f.Add([]byte{0, 1, 0, 1, 2})
	f.Fuzz(func(t *testing.T, b []byte) {
		items, err := DecodeItems(b)
		if err != nil {
			return
		}
		// Bytes after the end marker are ignored, as Curator ignores them.
		again, err := DecodeItems(EncodeItems(items...))
		if err != nil || fmt.Sprintf("%q", again) != fmt.Sprintf("%q", items) {
			t.Fatalf("items %q do not survive encoding: %q, %v", items, again, err)
		}
	})
}

// Items come out in due order, not before they are due, each to one
// consumer only.
func TestDistributedDelayQueue(t *testing.T) {
	forEachTarget(t, func(t *testing.T) {
		ctx, dir := testCtx(t), testRoot(t)
		q := NewDistributedDelayQueue(newClient(t), dir, nil)
		now := time.Now()
		if err := q.Put(ctx, []byte("late"), now.Add(1500*time.Millisecond)); err != nil {
			t.Fatal(err)
		}
		if err := q.Put(ctx, []byte("early"), now.Add(300*time.Millisecond)); err != nil {
			t.Fatal(err)
		}
		if err := q.Put(ctx, []byte("now"), time.Time{}); err != nil {
			t.Fatal(err)
		}
		var got []string
		for range 3 {
			it, err := q.Take(ctx)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, string(it))
			if string(it) == "late" && time.Now().Before(now.Add(1500*time.Millisecond)) {
				t.Fatal("late item taken before it was due")
			}
		}
		if strings.Join(got, ",") != "now,early,late" {
			t.Fatalf("order %v", got)
		}

		// Many consumers, many items: each item taken exactly once.
		const items, consumers = 20, 4
		for i := range items {
			if err := q.Put(ctx, []byte(fmt.Sprint(i)), time.Time{}); err != nil {
				t.Fatal(err)
			}
		}
		var (
			mu   sync.Mutex
			seen = map[string]int{}
			wg   sync.WaitGroup
		)
		cctx, cancel := context.WithCancel(ctx)
		defer cancel()
		for range consumers {
			cq := NewDistributedDelayQueue(newClient(t), dir, nil)
			wg.Go(func() {
				for {
					it, err := cq.Take(cctx)
					if err != nil {
						return
					}
					mu.Lock()
					seen[string(it)]++
					if len(seen) == items {
						cancel()
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if len(seen) != items {
			t.Fatalf("took %d distinct items, want %d", len(seen), items)
		}
		for k, n := range seen {
			if n != 1 {
				t.Fatalf("item %s taken %d times", k, n)
			}
		}
	})
}
