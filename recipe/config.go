package recipe

import (
	"context"
	"errors"
	"maps"
	"sync"

	"github.com/zoohq/zoo/zk"
)

// The "ready" znode pattern (paper section 2.3): a configuration is the
// set of children of dir other than "ready". A writer deletes dir/ready,
// changes the children, then creates dir/ready again; a reader reads only
// while dir/ready exists, and the ordering guarantee of watches makes sure
// that a reader whose reads overlapped a change sees ready's deletion
// before it sees any of the change.

// PublishConfig replaces the configuration under dir with cfg (key: child
// name, value: its data), following the ready protocol. Children not in
// cfg are removed. Concurrent publishers must be serialized (by a Mutex,
// say, or by being the one leader).
func PublishConfig(ctx context.Context, c *zk.Client, dir string, cfg map[string][]byte, acl []zk.ACL) error {
	acl = orOpen(acl)
	if err := ensurePath(ctx, c, dir, acl); err != nil {
		return err
	}
	ready := dir + "/" + readyNode
	if err := deleteNode(ctx, c, ready); err != nil {
		return err
	}
	kids, err := children(ctx, c, dir)
	if err != nil {
		return err
	}
	for _, k := range kids {
		if _, keep := cfg[k]; !keep {
			if err := deleteNode(ctx, c, dir+"/"+k); err != nil {
				return err
			}
		}
	}
	for k, v := range cfg {
		if err := put(ctx, c, dir+"/"+k, v, acl); err != nil {
			return err
		}
	}
	_, err = retry(ctx, func() (string, error) {
		p, _, err := c.Create(ctx, ready, nil, zk.Persistent, acl)
		return p, err
	})
	if errors.Is(err, zk.ErrNodeExists) {
		return nil
	}
	return err
}

// put sets p to v, creating it if missing. Both steps are idempotent.
func put(ctx context.Context, c *zk.Client, p string, v []byte, acl []zk.ACL) error {
	for {
		_, err := retry(ctx, func() (zk.Stat, error) { return c.Set(ctx, p, v, -1) })
		if !errors.Is(err, zk.ErrNoNode) {
			return err
		}
		_, err = retry(ctx, func() (string, error) {
			s, _, err := c.Create(ctx, p, v, zk.Persistent, acl)
			return s, err
		})
		if !errors.Is(err, zk.ErrNodeExists) {
			return err
		}
	}
}

// ConfigWatcher always holds the latest complete configuration published
// under a directory with PublishConfig. It never exposes a configuration
// read while a writer was changing it.
type ConfigWatcher struct {
	mu      sync.Mutex
	cfg     map[string][]byte
	gen     int
	changed chan struct{}
	err     error
	done    chan struct{}
	stop    context.CancelFunc
}

// WatchConfig reads the configuration under dir, waiting for the first
// one to be published, and keeps it up to date until Close or the end of
// the session.
func WatchConfig(ctx context.Context, c *zk.Client, dir string) (*ConfigWatcher, error) {
	wctx, stop := context.WithCancel(context.Background())
	w := &ConfigWatcher{changed: make(chan struct{}), done: make(chan struct{}), stop: stop}
	first := make(chan struct{})
	go w.run(wctx, c, dir, first)
	select {
	case <-first:
		return w, nil
	case <-w.done:
		return nil, w.Err()
	case <-ctx.Done():
		w.Close()
		return nil, ctx.Err()
	}
}

func (w *ConfigWatcher) run(ctx context.Context, c *zk.Client, dir string, first chan struct{}) {
	defer close(w.done)
	ready := dir + "/" + readyNode
	for {
		ok, ch, err := retry2(ctx, func() (bool, <-chan zk.Event, error) {
			ok, _, ch, err := c.ExistsW(ctx, ready)
			return ok, ch, err
		})
		if err != nil {
			w.fail(err)
			return
		}
		if ok {
			cfg, err := readConfig(ctx, c, dir)
			select {
			case <-ch: // ready went away while we read: the read may be torn
				continue
			default:
			}
			if err != nil && !errors.Is(err, zk.ErrNoNode) {
				w.fail(err)
				return
			}
			if err == nil {
				w.publish(cfg)
				if first != nil {
					close(first)
					first = nil
				}
			}
		}
		select {
		case ev := <-ch:
			if err := watchErr(ev); err != nil {
				w.fail(err)
				return
			}
		case <-ctx.Done():
			dropWatch(ctx, c, ch)
			w.fail(ctx.Err())
			return
		}
	}
}

func readConfig(ctx context.Context, c *zk.Client, dir string) (map[string][]byte, error) {
	kids, err := children(ctx, c, dir)
	if err != nil {
		return nil, err
	}
	cfg := make(map[string][]byte, len(kids))
	for _, k := range kids {
		if k == readyNode {
			continue
		}
		v, err := retry(ctx, func() ([]byte, error) {
			d, _, err := c.Get(ctx, dir+"/"+k)
			return d, err
		})
		if err != nil {
			return nil, err
		}
		cfg[k] = v
	}
	return cfg, nil
}

func (w *ConfigWatcher) publish(cfg map[string][]byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.cfg = cfg
	w.gen++
	close(w.changed)
	w.changed = make(chan struct{})
}

func (w *ConfigWatcher) fail(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.err = err
}

// Get returns a copy of the latest configuration and its generation (1
// for the first one read, incremented on each change seen).
func (w *ConfigWatcher) Get() (map[string][]byte, int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return maps.Clone(w.cfg), w.gen
}

// Changed returns a channel closed when a configuration newer than the
// one Get returns now is available.
func (w *ConfigWatcher) Changed() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.changed
}

// Done is closed when the watcher stops (Close, or the session ended;
// then Err says why).
func (w *ConfigWatcher) Done() <-chan struct{} { return w.done }

// Err returns why the watcher stopped, nil while it runs.
func (w *ConfigWatcher) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Close stops the watcher.
func (w *ConfigWatcher) Close() {
	w.stop()
	<-w.done
}
