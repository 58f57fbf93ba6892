package recipe

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/zoohq/zoo/zk"
)

// Errors of this package.
var (
	// ErrLost means a lock, a leadership or a membership was lost: its
	// ephemeral node disappeared or the session ended.
	ErrLost = errors.New("recipe: lost (node deleted or session ended)")
	// ErrNotHeld is returned by Unlock and Resign when nothing is held.
	ErrNotHeld = errors.New("recipe: not held")
	// ErrHeld is returned by Lock or Campaign on a primitive that is
	// already held: the locks of this package are not reentrant.
	ErrHeld = errors.New("recipe: already held (locks are not reentrant)")
	// ErrUncertain means an operation's reply was lost and the recipe
	// cannot tell whether it took effect (see Queue.Take).
	ErrUncertain = errors.New("recipe: outcome unknown after connection loss")
)

// Test hooks. They are nil outside tests.
var (
	// testHookCreated runs after a sequential create succeeded; if it
	// returns an error, the recipe sees that error instead of the reply,
	// as if the reply had been lost.
	testHookCreated func(path string) error
	// testHookWaiting runs when a waiter is about to block on a watch of
	// the node blocker.
	testHookWaiting func(self, blocker string)
	// testHookWoken runs when a waiter's watch fired.
	testHookWoken func(self string)
)

// cleanupTimeout bounds the calls made after the caller's context ended
// (deleting a node of an abandoned attempt).
const cleanupTimeout = 10 * time.Second

func newGUID() string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return hex.EncodeToString(b[:])
}

// retry runs f until it fails with something other than a connection
// loss. Only idempotent calls go through it.
func retry[T any](ctx context.Context, f func() (T, error)) (T, error) {
	for {
		v, err := f()
		if err == nil || !errors.Is(err, zk.ErrConnectionLoss) || ctx.Err() != nil {
			return v, err
		}
	}
}

// ensurePath creates p and its missing ancestors as persistent nodes.
func ensurePath(ctx context.Context, c *zk.Client, p string, acl []zk.ACL) error {
	ok, err := retry(ctx, func() (bool, error) {
		ok, _, err := c.Exists(ctx, p)
		return ok, err
	})
	if err != nil || ok {
		return err
	}
	if parent := path.Dir(p); parent != "/" {
		if err := ensurePath(ctx, c, parent, acl); err != nil {
			return err
		}
	}
	_, err = retry(ctx, func() (string, error) {
		s, _, err := c.Create(ctx, p, nil, zk.Persistent, acl)
		return s, err
	})
	if errors.Is(err, zk.ErrNodeExists) {
		return nil
	}
	return err
}

// ensureContainer creates dir and its missing ancestors as container
// nodes (zk.Client.CreateParents), or as persistent nodes on a server
// without containers.
func ensureContainer(ctx context.Context, c *zk.Client, dir string, acl []zk.ACL) error {
	return c.CreateParents(ctx, dir+"/child", acl)
}

// node is a child made by createSeq: "<guid>-<kind>-<10-digit seq>".
type node struct {
	name string
	guid string
	kind string
	seq  int64
}

func parseNode(name string) (node, bool) {
	i := strings.IndexByte(name, '-')
	j := strings.LastIndexByte(name, '-')
	if i <= 0 || j <= i || len(name)-j-1 != 10 {
		return node{}, false
	}
	seq, err := strconv.ParseInt(name[j+1:], 10, 64)
	if err != nil {
		return node{}, false
	}
	return node{name: name, guid: name[:i], kind: name[i+1 : j], seq: seq}, true
}

// sortedNodes parses and orders the children made by createSeq, by
// sequence number (the GUID prefix makes the names themselves unordered).
func sortedNodes(children []string) []node {
	ns := make([]node, 0, len(children))
	for _, ch := range children {
		if n, ok := parseNode(ch); ok {
			ns = append(ns, n)
		}
	}
	slices.SortFunc(ns, func(a, b node) int { return int(a.seq - b.seq) })
	return ns
}

func indexOf(ns []node, name string) int {
	return slices.IndexFunc(ns, func(n node) bool { return n.name == name })
}

// createSeq creates dir/<guid>-<kind>-NNNNNNNNNN and returns its name.
// After a lost reply it looks for the GUID among the children: the
// create may have taken effect (recipes guide, "Recoverable Errors and
// the GUID").
func createSeq(ctx context.Context, c *zk.Client, dir, kind string, data []byte, mode zk.CreateMode, acl []zk.ACL) (string, error) {
	guid := newGUID()
	prefix := dir + "/" + guid + "-" + kind + "-"
	for {
		p, _, err := c.Create(ctx, prefix, data, mode, acl)
		if err == nil && testHookCreated != nil {
			err = testHookCreated(p)
		}
		if err == nil {
			return path.Base(p), nil
		}
		if !errors.Is(err, zk.ErrConnectionLoss) {
			return "", err
		}
		kids, err := retry(ctx, func() ([]string, error) {
			k, _, err := c.Children(ctx, dir)
			return k, err
		})
		if err != nil {
			return "", err
		}
		for _, k := range kids {
			if n, ok := parseNode(k); ok && n.guid == guid {
				return k, nil
			}
		}
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
	}
}

// deleteNode deletes p, retrying lost replies; a node already gone is
// not an error. It runs even after ctx ended, bounded by cleanupTimeout.
func deleteNode(ctx context.Context, c *zk.Client, p string) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	_, err := retry(ctx, func() (struct{}, error) {
		return struct{}{}, c.Delete(ctx, p, -1)
	})
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	return err
}

// children lists dir, retrying lost replies.
func children(ctx context.Context, c *zk.Client, dir string) ([]string, error) {
	return retry(ctx, func() ([]string, error) {
		k, _, err := c.Children(ctx, dir)
		return k, err
	})
}

// dropWatch removes a watch the caller no longer waits for, so that it
// does not linger on the server. Best effort: the watch is one-time and
// its channel has room for its event, so failing leaks nothing lasting.
func dropWatch(ctx context.Context, c *zk.Client, ch <-chan zk.Event) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	_ = c.RemoveWatch(ctx, ch)
}

// watchErr turns the last event of a watch that ended without a change
// into an error.
func watchErr(ev zk.Event) error {
	if ev.Type == zk.EventNotWatching {
		return fmt.Errorf("%w: %w", ErrLost, ev.Err)
	}
	return nil
}

// awaitTurn blocks until blocker reports nothing left to wait for. blocker
// gets the sorted nodes and the index of self in them and returns the name
// of the one node whose removal self must wait for, or "" when self may
// proceed. Only that node is watched: no herd effect.
func awaitTurn(ctx context.Context, c *zk.Client, dir, self string, blocker func(ns []node, i int) string) error {
	for {
		kids, err := children(ctx, c, dir)
		if err != nil {
			return err
		}
		ns := sortedNodes(kids)
		i := indexOf(ns, self)
		if i < 0 {
			return ErrLost // our ephemeral node is gone: the session ended
		}
		b := blocker(ns, i)
		if b == "" {
			return nil
		}
		if err := awaitGone(ctx, c, dir+"/"+b, dir+"/"+self); err != nil {
			return err
		}
	}
}

// awaitGone waits until p changes (normally: is deleted). It returns at
// once if p does not exist.
func awaitGone(ctx context.Context, c *zk.Client, p, self string) error {
	ok, ch, err := retry2(ctx, func() (bool, <-chan zk.Event, error) {
		ok, _, ch, err := c.ExistsW(ctx, p)
		return ok, ch, err
	})
	if err != nil {
		return err
	}
	if !ok {
		dropWatch(ctx, c, ch)
		return nil
	}
	if testHookWaiting != nil {
		testHookWaiting(self, p)
	}
	select {
	case ev := <-ch:
		if err := watchErr(ev); err != nil {
			return err
		}
		if testHookWoken != nil {
			testHookWoken(self)
		}
		return nil
	case <-ctx.Done():
		dropWatch(ctx, c, ch)
		return ctx.Err()
	}
}

func retry2[A, B any](ctx context.Context, f func() (A, B, error)) (A, B, error) {
	for {
		a, b, err := f()
		if err == nil || !errors.Is(err, zk.ErrConnectionLoss) || ctx.Err() != nil {
			return a, b, err
		}
	}
}
