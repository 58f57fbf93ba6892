package recipe

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/zoohq/zoo/zk"
)

// cacheEvents records a cache's events as "Type path" strings.
func cacheEvents(cc *CuratorCache) <-chan string {
	ch := make(chan string, 1000)
	cc.AddListener(func(ev CacheEvent) {
		switch {
		case ev.New != nil:
			ch <- fmt.Sprintf("%v %s %s", ev.Type, ev.New.Path, ev.New.Data)
		case ev.Old != nil:
			ch <- fmt.Sprintf("%v %s", ev.Type, ev.Old.Path)
		default:
			ch <- ev.Type.String()
		}
	})
	return ch
}

func expectEvents(t *testing.T, ctx context.Context, ch <-chan string, want ...string) {
	t.Helper()
	for _, w := range want {
		if got := waitCh(t, ctx, ch, w); got != w {
			t.Fatalf("cache event %q, want %q", got, w)
		}
	}
}

func mkNode(t *testing.T, ctx context.Context, c *zk.Client, p, data string) {
	t.Helper()
	if _, _, err := c.Create(ctx, p, []byte(data), zk.Persistent, zk.OpenACLUnsafe()); err != nil {
		t.Fatal(err)
	}
}

func setNode(t *testing.T, ctx context.Context, c *zk.Client, p, data string) {
	t.Helper()
	if _, err := c.Set(ctx, p, []byte(data), -1); err != nil {
		t.Fatal(err)
	}
}

func delNode(t *testing.T, ctx context.Context, c *zk.Client, p string) {
	t.Helper()
	if err := c.Delete(ctx, p, -1); err != nil {
		t.Fatal(err)
	}
}

func startCache(t *testing.T, cc *CuratorCache) <-chan string {
	t.Helper()
	ch := cacheEvents(cc)
	if err := cc.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cc.Close() })
	return ch
}

func TestCuratorCacheFollowsSubtree(t *testing.T) {
	forEachTarget(t, func(t *testing.T) {
		ctx, root := testCtx(t), testRoot(t)
		w := newClient(t)
		mkNode(t, ctx, w, root, "r")
		mkNode(t, ctx, w, root+"/a", "1")
		mkNode(t, ctx, w, root+"/a/b", "2")
		cc := NewCuratorCache(newClient(t), root)
		ch := startCache(t, cc)
		expectEvents(t, ctx, ch, "NodeCreated "+root+" r", "NodeCreated "+root+"/a 1", "NodeCreated "+root+"/a/b 2", "Initialized")
		waitCh(t, ctx, cc.Initialized(), "initialized")
		mkNode(t, ctx, w, root+"/c", "3")
		expectEvents(t, ctx, ch, "NodeCreated "+root+"/c 3")
		setNode(t, ctx, w, root+"/a", "1b")
		expectEvents(t, ctx, ch, "NodeChanged "+root+"/a 1b")
		delNode(t, ctx, w, root+"/a/b")
		expectEvents(t, ctx, ch, "NodeDeleted "+root+"/a/b")
		if d, ok := cc.Get(root + "/a"); !ok || string(d.Data) != "1b" || cc.Size() != 3 {
			t.Fatalf("Get = %+v, %v; size %d", d, ok, cc.Size())
		}
	})
}

// The connection drops and changes happen meanwhile: the persistent
// watch misses them, and the cache reads the tree again and reports
// exactly the differences.
func TestCuratorCacheRebuildAfterReconnect(t *testing.T) {
	forEachTarget(t, func(t *testing.T) {
		ctx, root := testCtx(t), testRoot(t)
		w := newClient(t)
		mkNode(t, ctx, w, root, "r")
		mkNode(t, ctx, w, root+"/a", "1")
		mkNode(t, ctx, w, root+"/b", "2")
		d := &cutter{}
		c, err := zk.Connect(ctx, serverAddr(t), zk.WithSessionTimeout(10*time.Second), zk.WithDialer(d.dial))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		cc := NewCuratorCache(c, root)
		ch := startCache(t, cc)
		expectEvents(t, ctx, ch, "NodeCreated "+root+" r", "NodeCreated "+root+"/a 1", "NodeCreated "+root+"/b 2", "Initialized")
		d.cut(true)
		if !pollFor(ctx, func() bool { return c.State() != zk.StateConnected }) {
			t.Fatal("still connected")
		}
		delNode(t, ctx, w, root+"/a")
		setNode(t, ctx, w, root+"/b", "2b")
		mkNode(t, ctx, w, root+"/c", "3")
		d.cut(false)
		expectEvents(t, ctx, ch, "NodeDeleted "+root+"/a", "NodeChanged "+root+"/b 2b", "NodeCreated "+root+"/c 3")
		mkNode(t, ctx, w, root+"/d", "4") // and it still follows
		expectEvents(t, ctx, ch, "NodeCreated "+root+"/d 4")
	})
}

// The session expires: with WithSessionRenewal the cache moves to a new
// session and reports what changed while it was away.
func TestCuratorCacheRebuildAfterSessionExpiry(t *testing.T) {
	forEachTarget(t, func(t *testing.T) {
		ctx, root := testCtx(t), testRoot(t)
		w := newClient(t)
		mkNode(t, ctx, w, root, "r")
		mkNode(t, ctx, w, root+"/a", "1")
		d := &cutter{}
		c, err := zk.Connect(ctx, serverAddr(t), zk.WithSessionTimeout(time.Second), zk.WithDialer(d.dial))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		if _, _, err := c.Create(ctx, root+"/mark", nil, zk.Ephemeral, zk.OpenACLUnsafe()); err != nil {
			t.Fatal(err)
		}
		renewed := make(chan struct{}, 1)
		cc := NewCuratorCache(c, root, WithSessionRenewal(func(ctx context.Context) (*zk.Client, error) {
			renewed <- struct{}{}
			return newClient(t), nil
		}))
		ch := startCache(t, cc)
		expectEvents(t, ctx, ch, "NodeCreated "+root+" r", "NodeCreated "+root+"/a 1", "NodeCreated "+root+"/mark ", "Initialized")
		d.cut(true)
		setNode(t, ctx, w, root+"/a", "1b")
		mkNode(t, ctx, w, root+"/b", "2")
		if !pollFor(ctx, func() bool { ok, _, err := w.Exists(ctx, root+"/mark"); return err == nil && !ok }) {
			t.Fatal("the session did not expire")
		}
		d.cut(false)
		waitCh(t, ctx, renewed, "session renewal")
		expectEvents(t, ctx, ch, "NodeDeleted "+root+"/mark", "NodeChanged "+root+"/a 1b", "NodeCreated "+root+"/b 2")
		mkNode(t, ctx, w, root+"/c", "3")
		expectEvents(t, ctx, ch, "NodeCreated "+root+"/c 3")
		if cc.Size() != 4 {
			t.Fatalf("entries %v", cc.Entries())
		}
	})
}

func TestNodeCache(t *testing.T) {
	forEachTarget(t, func(t *testing.T) {
		ctx, root := testCtx(t), testRoot(t)
		w := newClient(t)
		nc := NewNodeCache(newClient(t), root)
		ch := startCache(t, nc.CuratorCache)
		expectEvents(t, ctx, ch, "Initialized")
		if _, ok := nc.Current(); ok {
			t.Fatal("a node that does not exist is cached")
		}
		mkNode(t, ctx, w, root, "v1")
		expectEvents(t, ctx, ch, "NodeCreated "+root+" v1")
		mkNode(t, ctx, w, root+"/child", "x") // not cached
		setNode(t, ctx, w, root, "v2")
		expectEvents(t, ctx, ch, "NodeChanged "+root+" v2")
		if d, ok := nc.Current(); !ok || string(d.Data) != "v2" || nc.Size() != 1 {
			t.Fatalf("Current = %+v, %v; size %d", d, ok, nc.Size())
		}
		delNode(t, ctx, w, root+"/child")
		delNode(t, ctx, w, root)
		expectEvents(t, ctx, ch, "NodeDeleted "+root)
	})
}

// A TreeCache of depth 1 holds the root and its children only.
func TestTreeCacheMaxDepth(t *testing.T) {
	forEachTarget(t, func(t *testing.T) {
		ctx, root := testCtx(t), testRoot(t)
		w := newClient(t)
		mkNode(t, ctx, w, root, "r")
		mkNode(t, ctx, w, root+"/a", "1")
		mkNode(t, ctx, w, root+"/a/deep", "2")
		tc := NewTreeCache(newClient(t), root, 1)
		ch := startCache(t, tc)
		expectEvents(t, ctx, ch, "NodeCreated "+root+" r", "NodeCreated "+root+"/a 1", "Initialized")
		mkNode(t, ctx, w, root+"/a/deep2", "3") // too deep: no event
		mkNode(t, ctx, w, root+"/b", "4")
		expectEvents(t, ctx, ch, "NodeCreated "+root+"/b 4")
		if tc.Size() != 3 {
			t.Fatalf("entries %v", tc.Entries())
		}
	})
}
