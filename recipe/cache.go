package recipe

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/zoohq/zoo/zk"
)

// ChildData is one node of a cache: its path, Stat and data.
type ChildData struct {
	Path string
	Stat zk.Stat
	Data []byte
}

// CacheEventType says what a CacheEvent reports (Curator's
// CuratorCacheListener.Type, plus the initialized event).
type CacheEventType int

const (
	NodeCreated CacheEventType = iota + 1 // a node appeared in the cache
	NodeChanged                           // a node's data or Stat changed
	NodeDeleted                           // a node left the cache
	Initialized                           // the first full load is done
)

func (t CacheEventType) String() string {
	switch t {
	case NodeCreated:
		return "NodeCreated"
	case NodeChanged:
		return "NodeChanged"
	case NodeDeleted:
		return "NodeDeleted"
	case Initialized:
		return "Initialized"
	}
	return "CacheEventType(?)"
}

// CacheEvent is a change to a cache. Old is the node before (NodeChanged,
// NodeDeleted), New after (NodeCreated, NodeChanged).
type CacheEvent struct {
	Type CacheEventType
	Old  *ChildData
	New  *ChildData
}

// CacheOption configures a CuratorCache.
type CacheOption func(*CuratorCache)

// SingleNodeCache caches the node at the path alone, not its subtree
// (Curator's SINGLE_NODE_CACHE; NodeCache).
func SingleNodeCache() CacheOption { return func(cc *CuratorCache) { cc.single = true } }

// WithMaxDepth caches nodes at most depth levels below the path (0: the
// node alone), as TreeCache's setMaxDepth. Negative means no limit.
func WithMaxDepth(depth int) CacheOption { return func(cc *CuratorCache) { cc.maxDepth = depth } }

// WithSessionRenewal lets the cache outlive its session: when the
// session expires, the cache calls renew for a new client (a zk.Client
// does not outlive its session) and rebuilds itself on it, reporting as
// events only what changed while it was away. renew's client is then the
// caller's to close.
func WithSessionRenewal(renew func(ctx context.Context) (*zk.Client, error)) CacheOption {
	return func(cc *CuratorCache) { cc.renew = renew }
}

// CuratorCache is Curator's CuratorCache: a local copy of the subtree at
// a path (or of one node), kept current with a persistent recursive
// watch. Listeners get an event per change and one Initialized event
// once the first load is done. After a reconnect it reads the subtree
// again (the server does not replay what persistent watches missed) and
// reports the differences, so the copy converges to the server's and no
// change goes unreported; WithSessionRenewal does the same after a
// session expiry. (A node created and deleted while the cache was away
// is not reported: nothing of it is left to see.)
type CuratorCache struct {
	c        *zk.Client
	root     string
	single   bool
	maxDepth int // -1: unlimited
	renew    func(ctx context.Context) (*zk.Client, error)

	mu        sync.Mutex
	nodes     map[string]ChildData
	listeners []func(CacheEvent)
	started   bool
	init      chan struct{}
	initDone  bool
	stop      context.CancelFunc
	done      chan struct{}
	err       error
}

// NewCuratorCache returns a cache of the subtree at path; Start starts it.
func NewCuratorCache(c *zk.Client, path string, opts ...CacheOption) *CuratorCache {
	cc := &CuratorCache{c: c, root: path, maxDepth: -1, nodes: map[string]ChildData{}, init: make(chan struct{}), done: make(chan struct{})}
	for _, o := range opts {
		o(cc)
	}
	return cc
}

// AddListener adds f, called with every event on the cache's goroutine,
// in order. It must not block for long. Add listeners before Start to
// see the first load.
func (cc *CuratorCache) AddListener(f func(CacheEvent)) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	cc.listeners = append(cc.listeners, f)
}

// Start begins caching in the background.
func (cc *CuratorCache) Start() error {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if cc.started {
		return errors.New("recipe: cache already started")
	}
	cc.started = true
	ctx, cancel := context.WithCancel(context.Background())
	cc.stop = cancel
	go func() {
		err := cc.run(ctx)
		cc.mu.Lock()
		cc.err = err
		cc.mu.Unlock()
		close(cc.done)
	}()
	return nil
}

// Initialized is closed once the first load is done.
func (cc *CuratorCache) Initialized() <-chan struct{} { return cc.init }

// Get returns the cached node at path.
func (cc *CuratorCache) Get(path string) (ChildData, bool) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	d, ok := cc.nodes[path]
	return d, ok
}

// Entries returns every cached node, ordered by path.
func (cc *CuratorCache) Entries() []ChildData {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	out := slices.Collect(maps.Values(cc.nodes))
	slices.SortFunc(out, func(a, b ChildData) int { return strings.Compare(a.Path, b.Path) })
	return out
}

// Size is the number of cached nodes.
func (cc *CuratorCache) Size() int {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return len(cc.nodes)
}

// Done is closed when the cache has stopped: Close, or a session end it
// could not renew.
func (cc *CuratorCache) Done() <-chan struct{} { return cc.done }

// Err says why the cache stopped: nil after Close.
func (cc *CuratorCache) Err() error {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return cc.err
}

// Close stops the cache and removes its watch.
func (cc *CuratorCache) Close() error {
	cc.mu.Lock()
	stop := cc.stop
	cc.started = true
	cc.mu.Unlock()
	if stop == nil {
		return nil
	}
	stop()
	<-cc.done
	return cc.Err()
}

// run follows the tree on one session after another.
func (cc *CuratorCache) run(ctx context.Context) error {
	c := cc.c
	for {
		err := cc.follow(ctx, c)
		if ctx.Err() != nil {
			return nil
		}
		if cc.renew == nil || !errors.Is(err, zk.ErrSessionExpired) {
			return errors.Join(ErrLost, err)
		}
		if c, err = cc.renew(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return errors.Join(ErrLost, err)
		}
	}
}

// follow keeps the cache current on c until its session ends (the
// session's error) or ctx ends.
func (cc *CuratorCache) follow(ctx context.Context, c *zk.Client) error {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	mode := zk.WatchPersistentRecursive
	if cc.single {
		mode = zk.WatchPersistent
	}
	var ch <-chan zk.Event
	for ch == nil {
		var err error
		ch, err = c.Watch(wctx, cc.root, mode)
		if err != nil && !errors.Is(err, zk.ErrConnectionLoss) {
			return err
		}
	}
	// The watch is set before the load: a change during the load is seen
	// by both, and reading it again is harmless.
	if err := cc.reload(wctx, c); err != nil && !errors.Is(err, zk.ErrConnectionLoss) {
		return err
	}
	for ev := range ch {
		var err error
		switch ev.Type {
		case zk.EventNotWatching:
			return ev.Err
		case zk.EventSession:
			if ev.State == zk.StateConnected || ev.State == zk.StateConnectedReadOnly {
				err = cc.reload(wctx, c) // what the watch missed
			}
		case zk.EventNodeCreated, zk.EventNodeDataChanged:
			err = cc.refresh(wctx, c, ev.Path)
		case zk.EventNodeDeleted:
			cc.remove(ev.Path)
		}
		if err != nil && !errors.Is(err, zk.ErrConnectionLoss) && wctx.Err() == nil {
			return err
		}
	}
	return ctx.Err()
}

// reload reads the whole subtree and reports the differences.
func (cc *CuratorCache) reload(ctx context.Context, c *zk.Client) error {
	fresh := map[string]ChildData{}
	if err := cc.load(ctx, c, cc.root, 0, fresh); err != nil {
		return err
	}
	cc.apply(fresh)
	cc.mu.Lock()
	first := !cc.initDone
	cc.initDone = true
	listeners := slices.Clone(cc.listeners)
	cc.mu.Unlock()
	if first {
		close(cc.init)
		for _, f := range listeners {
			f(CacheEvent{Type: Initialized})
		}
	}
	return nil
}

// load reads p, at depth below the root, (and, unless single, its
// subtree) into into.
func (cc *CuratorCache) load(ctx context.Context, c *zk.Client, p string, depth int, into map[string]ChildData) error {
	data, st, err := c.Get(ctx, p)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	if err != nil {
		return err
	}
	into[p] = ChildData{Path: p, Stat: st, Data: data}
	if cc.single || st.NumChildren == 0 || depth == cc.maxDepth {
		return nil
	}
	kids, _, err := c.Children(ctx, p)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	if err != nil {
		return err
	}
	slices.Sort(kids)
	for _, k := range kids {
		if err := cc.load(ctx, c, joinPath(p, k), depth+1, into); err != nil {
			return err
		}
	}
	return nil
}

// depth is how many levels p is below the root.
func (cc *CuratorCache) depth(p string) int {
	rel := strings.TrimPrefix(p, cc.root)
	if rel == "" {
		return 0
	}
	if cc.root == "/" {
		return strings.Count(rel, "/") + 1
	}
	return strings.Count(rel, "/")
}

func joinPath(dir, name string) string {
	if dir == "/" {
		return "/" + name
	}
	return dir + "/" + name
}

// refresh reads one node after an event on it.
func (cc *CuratorCache) refresh(ctx context.Context, c *zk.Client, p string) error {
	if (cc.single && p != cc.root) || (cc.maxDepth >= 0 && cc.depth(p) > cc.maxDepth) {
		return nil
	}
	data, st, err := c.Get(ctx, p)
	switch {
	case errors.Is(err, zk.ErrNoNode):
		cc.remove(p)
		return nil
	case err != nil:
		return err
	}
	n := ChildData{Path: p, Stat: st, Data: data}
	cc.mu.Lock()
	old, ok := cc.nodes[p]
	cc.nodes[p] = n
	listeners := slices.Clone(cc.listeners)
	cc.mu.Unlock()
	cc.tell(listeners, diffNodes(mapOf(old, ok), mapOf(n, true)))
	return nil
}

func mapOf(d ChildData, ok bool) map[string]ChildData {
	if !ok {
		return nil
	}
	return map[string]ChildData{d.Path: d}
}

// remove drops p and its subtree from the cache.
func (cc *CuratorCache) remove(p string) {
	cc.mu.Lock()
	gone := map[string]ChildData{}
	for k, v := range cc.nodes {
		if k == p || strings.HasPrefix(k, strings.TrimSuffix(p, "/")+"/") {
			gone[k] = v
			delete(cc.nodes, k)
		}
	}
	listeners := slices.Clone(cc.listeners)
	cc.mu.Unlock()
	cc.tell(listeners, diffNodes(gone, nil))
}

func (cc *CuratorCache) tell(listeners []func(CacheEvent), events []CacheEvent) {
	for _, ev := range events {
		for _, f := range listeners {
			f(ev)
		}
	}
}

// apply replaces the cache with next and tells the listeners what
// changed: deletions deepest first, then creations and changes parents
// first.
func (cc *CuratorCache) apply(next map[string]ChildData) {
	cc.mu.Lock()
	prev := cc.nodes
	cc.nodes = next
	listeners := slices.Clone(cc.listeners)
	cc.mu.Unlock()
	cc.tell(listeners, diffNodes(prev, next))
}

func diffNodes(prev, next map[string]ChildData) []CacheEvent {
	var dels, rest []CacheEvent
	for p, old := range prev {
		if _, ok := next[p]; !ok {
			dels = append(dels, CacheEvent{Type: NodeDeleted, Old: &old})
		}
	}
	for p, n := range next {
		old, ok := prev[p]
		switch {
		case !ok:
			rest = append(rest, CacheEvent{Type: NodeCreated, New: &n})
		case old.Stat.Czxid != n.Stat.Czxid:
			// Deleted and created again while we looked away.
			dels = append(dels, CacheEvent{Type: NodeDeleted, Old: &old})
			rest = append(rest, CacheEvent{Type: NodeCreated, New: &n})
		case old.Stat.Mzxid != n.Stat.Mzxid || old.Stat.Version != n.Stat.Version || !bytes.Equal(old.Data, n.Data):
			rest = append(rest, CacheEvent{Type: NodeChanged, Old: &old, New: &n})
		}
	}
	slices.SortFunc(dels, func(a, b CacheEvent) int { return strings.Compare(b.Old.Path, a.Old.Path) })
	slices.SortFunc(rest, func(a, b CacheEvent) int { return strings.Compare(a.New.Path, b.New.Path) })
	return append(dels, rest...)
}

// NewTreeCache returns a cache of the subtree at path down to maxDepth
// levels (negative: all), Curator's TreeCache (which Curator 5 replaced
// with CuratorCache).
func NewTreeCache(c *zk.Client, path string, maxDepth int, opts ...CacheOption) *CuratorCache {
	return NewCuratorCache(c, path, append(opts, WithMaxDepth(maxDepth))...)
}

// NodeCache is Curator's NodeCache: a CuratorCache of one node.
type NodeCache struct{ *CuratorCache }

// NewNodeCache returns a cache of the node at path.
func NewNodeCache(c *zk.Client, path string, opts ...CacheOption) *NodeCache {
	return &NodeCache{NewCuratorCache(c, path, append(opts, SingleNodeCache())...)}
}

// Current returns the node, if it exists.
func (n *NodeCache) Current() (ChildData, bool) { return n.Get(n.root) }
