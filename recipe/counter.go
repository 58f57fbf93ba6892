package recipe

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/zoohq/zoo/zk"
)

// Counter is a shared integer in one znode, updated by compare-and-set on
// the node's version (paper section 2.4, "Simple Locks" aside: the
// read-modify-write with a conditional setData).
//
// The node holds "<value> <id of the last update>". After a lost reply
// the id and the version let Add tell whether its update took effect:
// the version unchanged means it did not (Add tries again), our id in
// the node means it did. If another update came after a lost one, Add
// cannot tell and returns an error wrapping ErrUncertain rather than
// risk adding twice.
type Counter struct {
	c   *zk.Client
	p   string
	acl []zk.ACL
}

// NewCounter returns the counter at path p (created at 0 on first use).
func NewCounter(c *zk.Client, p string, acl []zk.ACL) *Counter {
	return &Counter{c: c, p: p, acl: orOpen(acl)}
}

// ErrCorrupt means a counter's node does not hold a counter.
var ErrCorrupt = errors.New("recipe: counter node holds no counter")

func parseCounter(data []byte) (int64, string, error) {
	if len(data) == 0 {
		return 0, "", nil
	}
	v, id, _ := bytes.Cut(data, []byte(" "))
	n, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil {
		return 0, "", fmt.Errorf("%w: %q", ErrCorrupt, data)
	}
	return n, string(id), nil
}

// Get returns the current value.
func (k *Counter) Get(ctx context.Context) (int64, error) {
	n, _, _, err := k.read(ctx)
	return n, err
}

func (k *Counter) read(ctx context.Context) (int64, string, int32, error) {
	for {
		data, st, err := retry2(ctx, func() ([]byte, zk.Stat, error) { return k.c.Get(ctx, k.p) })
		if errors.Is(err, zk.ErrNoNode) {
			if err := ensurePath(ctx, k.c, k.p, k.acl); err != nil {
				return 0, "", 0, err
			}
			continue
		}
		if err != nil {
			return 0, "", 0, err
		}
		n, id, err := parseCounter(data)
		return n, id, st.Version, err
	}
}

// Add adds delta and returns the new value.
func (k *Counter) Add(ctx context.Context, delta int64) (int64, error) {
	id := newGUID()
	for {
		n, _, version, err := k.read(ctx)
		if err != nil {
			return 0, err
		}
		next := n + delta
		_, err = k.c.Set(ctx, k.p, fmt.Appendf(nil, "%d %s", next, id), version)
		if errors.Is(err, zk.ErrConnectionLoss) {
			if err = k.settle(ctx, id, version); err == nil {
				return next, nil
			}
		}
		switch {
		case err == nil:
			return next, nil
		case errors.Is(err, zk.ErrBadVersion):
			continue // someone else updated it first: read again
		default:
			return 0, err
		}
	}
}

// settle finds out whether a Set with update id on version took effect:
// nil if it did, zk.ErrBadVersion if it did not (try again), ErrUncertain
// if another update hides the answer.
func (k *Counter) settle(ctx context.Context, id string, version int32) error {
	_, last, now, err := k.read(ctx)
	switch {
	case err != nil:
		return err
	case last == id:
		return nil
	case now == version:
		return zk.ErrBadVersion
	default:
		return fmt.Errorf("recipe: counter %s: %w", k.p, ErrUncertain)
	}
}
