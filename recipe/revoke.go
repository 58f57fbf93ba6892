package recipe

import (
	"context"
	"errors"

	"github.com/zoohq/zoo/zk"
)

// revokeRequest is what a revoker writes into a lock node (recipes guide,
// "Revocable Shared Locks").
const revokeRequest = "unlock"

// Revoke asks the holder of the lock node p (from Mutex.Node or Holders)
// to release it, by setting the node's data to "unlock" (recipes guide,
// "Revocable Shared Locks"). The holder learns it through its Revoked
// channel and releases when it is ready: revocation needs its consent.
// A node already gone is not an error.
func Revoke(ctx context.Context, c *zk.Client, p string) error {
	_, err := retry(ctx, func() (zk.Stat, error) { return c.Set(ctx, p, []byte(revokeRequest), -1) })
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	return err
}

// Holders returns the paths of the nodes that hold the lock under dir: the
// first node for a Mutex; for a RWMutex the write node if it is first,
// else the read nodes before the first write node.
func Holders(ctx context.Context, c *zk.Client, dir string) ([]string, error) {
	kids, err := children(ctx, c, dir)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil // no one ever held it, or the container is gone
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for i, n := range sortedNodes(kids) {
		if n.kind == "read" {
			out = append(out, dir+"/"+n.name)
			continue
		}
		if i == 0 {
			out = append(out, dir+"/"+n.name)
		}
		break
	}
	return out, nil
}

// Revoked returns a channel closed when someone asked the holder to
// release the lock (Revoke). It is nil (never ready) while not held.
func (m *Mutex) Revoked() <-chan struct{} { return m.l.revokedCh() }

// RRevoked is Revoked for the read lock.
func (m *RWMutex) RRevoked() <-chan struct{} { return m.r.revokedCh() }

// Revoked is Revoked for the write lock.
func (m *RWMutex) Revoked() <-chan struct{} { return m.w.revokedCh() }
