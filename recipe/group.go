package recipe

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/zoohq/zoo/zk"
)

// Group is group membership (recipes guide, "Out of the Box
// Applications"): each member is an ephemeral node dir/name, removed by
// the server when its session ends.
type Group struct {
	c   *zk.Client
	dir string
	acl []zk.ACL
}

// NewGroup returns the group under dir.
func NewGroup(c *zk.Client, dir string, acl []zk.ACL) *Group {
	return &Group{c: c, dir: dir, acl: orOpen(acl)}
}

// Member is this session's membership in a group.
type Member struct {
	c *zk.Client
	p string
	h *hold
}

// Join adds a member named name with the given data. A name already
// taken by another session fails with zk.ErrNodeExists.
func (g *Group) Join(ctx context.Context, name string, data []byte) (*Member, error) {
	if err := ensurePath(ctx, g.c, g.dir, g.acl); err != nil {
		return nil, err
	}
	p := g.dir + "/" + name
	_, err := retry(ctx, func() (string, error) {
		s, _, err := g.c.Create(ctx, p, data, zk.Ephemeral, g.acl)
		return s, err
	})
	if errors.Is(err, zk.ErrNodeExists) {
		// After a lost reply our own create may be what exists.
		_, st, serr := g.c.Exists(ctx, p)
		if serr == nil && st.EphemeralOwner == g.c.SessionID() {
			err = nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("recipe: join %s: %w", p, err)
	}
	return &Member{c: g.c, p: p, h: watchHold(g.c, p)}, nil
}

// Leave removes the membership.
func (m *Member) Leave(ctx context.Context) error {
	lost := m.h.release()
	if err := deleteNode(ctx, m.c, m.p); err != nil {
		return err
	}
	return lost
}

// Done is closed when the membership ends: Leave, node deleted, or the
// session ended (then Err returns ErrLost).
func (m *Member) Done() <-chan struct{} { return m.h.done }

// Err returns ErrLost once the membership was lost, nil otherwise.
func (m *Member) Err() error { return m.h.err() }

// Members returns the names of the current members, sorted.
func (g *Group) Members(ctx context.Context) ([]string, error) {
	kids, err := children(ctx, g.c, g.dir)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil
	}
	slices.Sort(kids)
	return kids, err
}

// Watch sends the sorted member list now and after every change, until
// ctx ends or the session does; then it closes the channel. A slow
// consumer misses intermediate lists but always gets the latest: the list
// is read again after each change, when the previous one was taken.
func (g *Group) Watch(ctx context.Context) (<-chan []string, error) {
	if err := ensurePath(ctx, g.c, g.dir, g.acl); err != nil {
		return nil, err
	}
	out := make(chan []string)
	go func() {
		defer close(out)
		for {
			kids, ch, err := retry2(ctx, func() ([]string, <-chan zk.Event, error) {
				k, _, ch, err := g.c.ChildrenW(ctx, g.dir)
				return k, ch, err
			})
			if err != nil {
				return
			}
			slices.Sort(kids)
			select {
			case out <- kids:
			case <-ctx.Done():
				dropWatch(ctx, g.c, ch)
				return
			}
			select {
			case ev := <-ch:
				if ev.Type == zk.EventNotWatching || ev.Type == zk.EventNodeDeleted {
					return
				}
			case <-ctx.Done():
				dropWatch(ctx, g.c, ch)
				return
			}
		}
	}()
	return out, nil
}
