package recipe

import (
	"context"
	"errors"
	pathpkg "path"

	"github.com/zoohq/zoo/zk"
)

// Rendezvous is the paper's rendezvous (section 2.4): a client that starts
// a master and workers without knowing the master's address creates a
// rendezvous node and hands its path to all of them; the master fills it in
// once it knows what to say (Fill), and each worker waits for that
// (Await). Ending the node with its creator's session (ephemeral mode)
// lets the workers notice a master that failed before filling it in.
type Rendezvous struct {
	c    *zk.Client
	path string
}

// NewRendezvous creates the rendezvous node at path, empty (nil data:
// "not filled in yet"), with mode zk.Persistent or zk.Ephemeral, and any
// missing parents. A node already there is taken over as it is.
func NewRendezvous(ctx context.Context, c *zk.Client, path string, mode zk.CreateMode, acl []zk.ACL) (*Rendezvous, error) {
	if err := ensurePath(ctx, c, pathpkg.Dir(path), orOpen(acl)); err != nil {
		return nil, err
	}
	_, err := retry(ctx, func() (struct{}, error) {
		_, _, err := c.Create(ctx, path, nil, mode, orOpen(acl))
		return struct{}{}, err
	})
	if err != nil && !errors.Is(err, zk.ErrNodeExists) {
		return nil, err
	}
	return &Rendezvous{c: c, path: path}, nil
}

// Fill publishes the master's information. Filling an already filled
// node replaces what it holds. A nil or empty info is refused: Await
// could not tell it from "not filled in yet".
func Fill(ctx context.Context, c *zk.Client, path string, info []byte) error {
	if len(info) == 0 {
		return errors.New("recipe: rendezvous info must not be empty")
	}
	_, err := retry(ctx, func() (zk.Stat, error) { return c.Set(ctx, path, info, -1) })
	return err
}

// Await blocks until the rendezvous node at path is filled in and returns
// what it holds. It returns zk.ErrNoNode if the node is gone (its creator
// ended it, or its session did), so a worker does not wait forever for a
// master that failed. It watches; it does not poll.
func Await(ctx context.Context, c *zk.Client, path string) ([]byte, error) {
	for {
		data, _, ch, err := c.GetW(ctx, path)
		if errors.Is(err, zk.ErrConnectionLoss) {
			continue
		}
		if err != nil || len(data) > 0 {
			return data, err
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Path returns the node's path, to hand to the master and the workers.
func (r *Rendezvous) Path() string { return r.path }

// Close deletes the rendezvous node.
func (r *Rendezvous) Close(ctx context.Context) error { return deleteNode(ctx, r.c, r.path) }
