package recipe

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/zoohq/zoo/zk"
)

// PersistentNode is Curator's PersistentNode: a node that stays present
// as long as the PersistentNode runs, whatever happens to it. It is made
// at Start (with its ancestors, as containers), made again if someone
// deletes it, and checked again each time the connection comes back.
// With an ephemeral mode it stands for this process (a registration that
// survives deletions); if the session expires, the node is gone and the
// PersistentNode ends with ErrLost (a zk.Client does not outlive its
// session). With protected set, its name carries Curator's protected
// prefix (zk.CreateProtected).
type PersistentNode struct {
	c         *zk.Client
	path      string
	mode      zk.CreateMode
	protected bool
	acl       []zk.ACL

	mu      sync.Mutex
	data    []byte
	actual  string
	started bool
	created chan struct{} // closed at the first create
	stop    context.CancelFunc
	done    chan struct{}
	err     error
}

// NewPersistentNode returns a node at path of the given mode holding
// data; Start creates it.
func NewPersistentNode(c *zk.Client, path string, mode zk.CreateMode, protected bool, data []byte, acl []zk.ACL) *PersistentNode {
	return &PersistentNode{c: c, path: path, mode: mode, protected: protected, acl: orOpen(acl),
		data: slices.Clone(data), created: make(chan struct{}), done: make(chan struct{})}
}

// Start creates the node in the background and keeps it.
func (n *PersistentNode) Start() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.started {
		return errors.New("recipe: PersistentNode already started")
	}
	n.started = true
	ctx, cancel := context.WithCancel(context.Background())
	n.stop = cancel
	go func() {
		err := n.run(ctx)
		n.mu.Lock()
		n.err = err
		n.mu.Unlock()
		close(n.done)
	}()
	return nil
}

// WaitForInitialCreate blocks until the node has been created once, the
// PersistentNode ended, or ctx ends.
func (n *PersistentNode) WaitForInitialCreate(ctx context.Context) error {
	select {
	case <-n.created:
		return nil
	case <-n.done:
		if err := n.Err(); err != nil {
			return err
		}
		return ErrNotHeld
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ActualPath is the node's path (with its protected prefix and sequence
// number, if any), "" before it is created.
func (n *PersistentNode) ActualPath() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.actual
}

// SetData changes the node's data, now and for every later re-creation.
func (n *PersistentNode) SetData(ctx context.Context, data []byte) error {
	n.mu.Lock()
	n.data = slices.Clone(data)
	p := n.actual
	n.mu.Unlock()
	if p == "" {
		return nil // the create will use it
	}
	_, err := n.c.Set(ctx, p, data, -1)
	if errors.Is(err, zk.ErrNoNode) {
		return nil // being made again, with the new data
	}
	return err
}

// Done is closed when the PersistentNode has stopped.
func (n *PersistentNode) Done() <-chan struct{} { return n.done }

// Err says why it stopped: nil after Close, ErrLost if the session ended.
func (n *PersistentNode) Err() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.err
}

// Close stops keeping the node and deletes it.
func (n *PersistentNode) Close(ctx context.Context) error {
	n.mu.Lock()
	stop := n.stop
	n.started = true
	n.mu.Unlock()
	if stop == nil {
		return nil
	}
	stop()
	<-n.done
	n.mu.Lock()
	p := n.actual
	n.actual = ""
	err := n.err
	n.mu.Unlock()
	if p != "" && err == nil {
		return deleteNode(ctx, n.c, p)
	}
	return err
}

func (n *PersistentNode) run(ctx context.Context) error {
	for {
		if err := n.create(ctx); err != nil {
			return n.stopErr(ctx, err)
		}
		n.mu.Lock()
		p := n.actual
		n.mu.Unlock()
		if err := n.keep(ctx, p); err != nil {
			return n.stopErr(ctx, err)
		}
	}
}

func (n *PersistentNode) stopErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return errors.Join(ErrLost, err)
}

// create makes the node (or takes an existing one of a non-sequential
// mode, setting its data, as Curator's create().orSetData()).
func (n *PersistentNode) create(ctx context.Context) error {
	n.mu.Lock()
	data := n.data
	n.mu.Unlock()
	if err := n.c.CreateParents(ctx, n.path, n.acl); err != nil {
		return err
	}
	var (
		p   string
		err error
	)
	for {
		if n.protected {
			p, err = n.c.CreateProtected(ctx, n.path, data, n.mode, n.acl)
		} else {
			p, _, err = n.c.Create(ctx, n.path, data, n.mode, n.acl)
		}
		if errors.Is(err, zk.ErrNodeExists) && !n.protected && !sequentialMode(n.mode) {
			_, err = n.c.Set(ctx, n.path, data, -1)
			p = n.path
		}
		if (errors.Is(err, zk.ErrConnectionLoss) || errors.Is(err, zk.ErrNoNode)) && ctx.Err() == nil {
			if errors.Is(err, zk.ErrNoNode) { // a parent container was reaped
				if perr := n.c.CreateParents(ctx, n.path, n.acl); perr != nil {
					return perr
				}
			}
			continue
		}
		break
	}
	if err != nil {
		return err
	}
	n.mu.Lock()
	n.actual = p
	select {
	case <-n.created:
	default:
		close(n.created)
	}
	n.mu.Unlock()
	return nil
}

func sequentialMode(m zk.CreateMode) bool {
	return m == zk.PersistentSequential || m == zk.EphemeralSequential || m == zk.PersistentSequentialWithTTL
}

// keep watches the node until it is deleted (nil: make it again) or the
// session ends.
func (n *PersistentNode) keep(ctx context.Context, p string) error {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ch, err := retry(wctx, func() (<-chan zk.Event, error) { return n.c.Watch(wctx, p, zk.WatchPersistent) })
	if err != nil {
		return err
	}
	check := func() (bool, error) {
		ok, _, err := retry2(wctx, func() (bool, zk.Stat, error) { return n.c.Exists(wctx, p) })
		return ok, err
	}
	if ok, err := check(); err != nil || !ok {
		return err
	}
	for ev := range ch {
		switch {
		case ev.Type == zk.EventNotWatching:
			return watchErr(ev)
		case ev.Type == zk.EventNodeDeleted:
			return nil
		case ev.Type == zk.EventSession && ev.State == zk.StateConnected:
			if ok, err := check(); err != nil || !ok {
				return err
			}
		}
	}
	return ctx.Err()
}

// touchNode is the child of a PersistentTtlNode that keeps it alive
// (Curator's PersistentTtlNode.DEFAULT_CHILD_NODE_NAME).
const touchNode = "touch"

// PersistentTtlNode is Curator's PersistentTtlNode: a container node at
// path kept by a PersistentNode, and a child "touch" with a TTL that is
// touched every ttl/2. While the process runs the node stays; once it
// stops (or dies) the touch node expires after ttl and the server then
// removes the empty container. The server must have TTL nodes enabled
// (extendedTypesEnabled=true).
type PersistentTtlNode struct {
	node *PersistentNode
	c    *zk.Client
	ttl  time.Duration

	mu   sync.Mutex
	stop context.CancelFunc
	wg   sync.WaitGroup
}

// NewPersistentTtlNode returns a TTL node at path holding data.
func NewPersistentTtlNode(c *zk.Client, path string, ttl time.Duration, data []byte, acl []zk.ACL) *PersistentTtlNode {
	return &PersistentTtlNode{node: NewPersistentNode(c, path, zk.Container, false, data, acl), c: c, ttl: ttl}
}

// Start creates the node and starts touching it.
func (t *PersistentTtlNode) Start() error {
	if err := t.node.Start(); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.mu.Lock()
	t.stop = cancel
	t.mu.Unlock()
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		t.touchLoop(ctx)
	}()
	return nil
}

// WaitForInitialCreate blocks until the container exists.
func (t *PersistentTtlNode) WaitForInitialCreate(ctx context.Context) error {
	return t.node.WaitForInitialCreate(ctx)
}

func (t *PersistentTtlNode) touchLoop(ctx context.Context) {
	tick := time.NewTicker(max(t.ttl/2, time.Millisecond))
	defer tick.Stop()
	for {
		if t.node.WaitForInitialCreate(ctx) == nil {
			t.touch(ctx)
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return
		case <-t.node.Done():
			return
		}
	}
}

// touch sets the touch node (resetting its TTL) or creates it. Failures
// are retried at the next tick: the TTL allows for one missed touch.
func (t *PersistentTtlNode) touch(ctx context.Context) {
	p := t.node.path + "/" + touchNode
	if _, err := t.c.Set(ctx, p, nil, -1); errors.Is(err, zk.ErrNoNode) {
		_, _, _ = t.c.CreateTTL(ctx, p, nil, zk.PersistentWithTTL, t.node.acl, t.ttl)
	}
}

// Close stops touching and deletes the touch node and the container.
func (t *PersistentTtlNode) Close(ctx context.Context) error {
	t.mu.Lock()
	stop := t.stop
	t.mu.Unlock()
	if stop != nil {
		stop()
		t.wg.Wait()
	}
	if p := t.node.ActualPath(); p != "" {
		_ = deleteNode(ctx, t.c, p+"/"+touchNode)
	}
	return t.node.Close(ctx)
}
