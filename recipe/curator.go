package recipe

import (
	"context"
	"errors"
	"path"
	"slices"
	"strings"

	"github.com/zoohq/zoo/zk"
)

// The recipes named after Curator's (InterProcessMutex, LeaderLatch,
// LeaderSelector, InterProcessSemaphoreV2, SharedCount, CuratorCache,
// NodeCache, PersistentNode, PersistentTtlNode, ServiceDiscovery,
// DistributedDelayQueue) use Curator 5's node layout and naming, so that a
// Go process and a Java process using Curator on the same path work
// together:
//
//   - contenders create protected ephemeral sequential nodes,
//     "_c_<uuid>-lock-0000000007" (zk.CreateProtected), and find them again
//     after a lost reply;
//   - a line is ordered as Curator orders it: by the part of the name after
//     the last occurrence of the lock name ("lock-", "latch-", "lease-"),
//     that is by sequence number;
//   - the directories are created as container nodes (zk.CreateParents),
//     which the server removes once empty, or as persistent nodes on
//     servers without containers.

// FencingToken is a number that grows with each new holder of a lock or
// leadership: the zxid of the create of the holder's node. A store that
// records the highest token it has seen and refuses writes carrying a
// lower one cannot be corrupted by a holder that lost its lock without
// knowing it (a long GC pause: Curator's Tech Note 10, and paper section
// 2.4). Holders are ordered by their nodes' sequence numbers, which the
// server assigns in zxid order, so a later holder always has a larger
// token.
type FencingToken int64

// sortKey is Curator's StandardLockInternalsDriver.fixForSorting: the
// part of name after the last occurrence of lockName, or name itself.
func sortKey(name, lockName string) string {
	if i := strings.LastIndex(name, lockName); i >= 0 {
		return name[i+len(lockName):]
	}
	return name
}

// sortCurator orders children as Curator's LockInternals.getSortedChildren.
func sortCurator(children []string, lockName string) []string {
	s := slices.Clone(children)
	slices.SortStableFunc(s, func(a, b string) int {
		return strings.Compare(sortKey(a, lockName), sortKey(b, lockName))
	})
	return s
}

// createInLine makes our protected ephemeral sequential node
// dir/_c_<uuid>-<lockName>NNNNNNNNNN, creating dir's missing ancestors and
// dir itself as containers.
func createInLine(ctx context.Context, c *zk.Client, dir, lockName string, data []byte, acl []zk.ACL) (string, error) {
	p := dir + "/" + lockName
	for {
		if err := c.CreateParents(ctx, p, acl); err != nil {
			return "", err
		}
		created, err := c.CreateProtected(ctx, p, data, zk.EphemeralSequential, acl)
		if errors.Is(err, zk.ErrNoNode) && ctx.Err() == nil {
			continue // the container was reaped between the two calls
		}
		return created, err
	}
}

// lineState reads dir's children in Curator's order and finds ours.
func lineState(ctx context.Context, c *zk.Client, dir, lockName, ours string) (sorted []string, idx int, err error) {
	kids, err := children(ctx, c, dir)
	if err != nil {
		return nil, -1, err
	}
	sorted = sortCurator(kids, lockName)
	return sorted, slices.Index(sorted, path.Base(ours)), nil
}

// waitDeleted waits until p is deleted (or does not exist), ctx ends or
// the session ends. It uses a one-time data watch, as Curator does.
func waitDeleted(ctx context.Context, c *zk.Client, p string) error {
	_, _, ch, err := retry3(ctx, func() ([]byte, zk.Stat, <-chan zk.Event, error) { return c.GetW(ctx, p) })
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	if err != nil {
		return err
	}
	for {
		select {
		case ev := <-ch:
			if err := watchErr(ev); err != nil {
				return err
			}
			if ev.Type == zk.EventNodeDeleted {
				return nil
			}
			// A data change: watch again.
			return waitDeleted(ctx, c, p)
		case <-ctx.Done():
			dropWatch(ctx, c, ch)
			return ctx.Err()
		}
	}
}

// czxid returns the creation zxid of p.
func czxid(ctx context.Context, c *zk.Client, p string) (int64, error) {
	_, st, err := retry2(ctx, func() (bool, zk.Stat, error) { return c.Exists(ctx, p) })
	if err != nil {
		return 0, err
	}
	return st.Czxid, nil
}

// Participant is one contender of a LeaderLatch or LeaderSelector, as
// Curator's Participant: its id (the data of its node) and whether it
// leads.
type Participant struct {
	ID     string
	Leader bool
}

// participants reads the ids of the contenders under dir in line order.
func participants(ctx context.Context, c *zk.Client, dir, lockName string) ([]Participant, error) {
	kids, err := children(ctx, c, dir)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Participant
	for _, k := range sortCurator(kids, lockName) {
		data, err := retry(ctx, func() ([]byte, error) {
			d, _, err := c.Get(ctx, dir+"/"+k)
			return d, err
		})
		if errors.Is(err, zk.ErrNoNode) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, Participant{ID: string(data), Leader: len(out) == 0})
	}
	return out, nil
}
