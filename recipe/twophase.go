package recipe

import (
	"context"
	"errors"
	"fmt"

	"github.com/zoohq/zoo/zk"
)

// Two-phase commit (recipes guide, "Two-phased Commit"): the coordinator
// creates a transaction node with one child per site; each site votes by
// writing "commit" or "abort" into its child and waits until all sites
// voted, or until any site voted abort.

// Votes written into a site's node.
const (
	voteCommit = "commit"
	voteAbort  = "abort"
)

// ErrNotParticipant means a site is not part of the transaction.
var ErrNotParticipant = errors.New("recipe: site is not part of the transaction")

// BeginTxn creates the transaction node tx with one empty child per site.
// It is atomic (one multi), so sites never see a partial transaction.
func BeginTxn(ctx context.Context, c *zk.Client, tx string, sites []string, acl []zk.ACL) error {
	acl = orOpen(acl)
	if err := ensurePath(ctx, c, parentOf(tx), acl); err != nil {
		return err
	}
	ops := []zk.Op{zk.CreateOp(tx, nil, zk.Persistent, acl)}
	for _, s := range sites {
		ops = append(ops, zk.CreateOp(tx+"/"+s, nil, zk.Persistent, acl))
	}
	_, err := c.Multi(ctx, ops...)
	if errors.Is(err, zk.ErrConnectionLoss) {
		// Did it take effect? The multi is atomic: the node tells.
		ok, _, eerr := retry2(ctx, func() (bool, zk.Stat, error) { return c.Exists(ctx, tx) })
		if eerr != nil {
			return eerr
		}
		if ok {
			return nil
		}
		_, err = c.Multi(ctx, ops...)
	}
	return err
}

func parentOf(p string) string {
	for i := len(p) - 1; i > 0; i-- {
		if p[i] == '/' {
			return p[:i]
		}
	}
	return "/"
}

// Vote records site's vote in transaction tx and waits for the outcome:
// true (commit) once every site voted commit, false (abort) as soon as
// one voted abort. Every site reaches the same outcome.
func Vote(ctx context.Context, c *zk.Client, tx, site string, commit bool) (bool, error) {
	v := voteAbort
	if commit {
		v = voteCommit
	}
	// Watch every site's node (one persistent recursive watch, not one per
	// site), set before our own vote so that no vote is missed.
	events, err := c.AddWatch(ctx, tx, zk.WatchPersistentRecursive)
	if err != nil {
		return false, err
	}
	defer func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
		defer cancel()
		_ = c.RemoveWatch(rctx, events)
	}()
	_, err = retry(ctx, func() (zk.Stat, error) { return c.Set(ctx, tx+"/"+site, []byte(v), -1) })
	if errors.Is(err, zk.ErrNoNode) {
		return false, fmt.Errorf("recipe: vote %s in %s: %w", site, tx, ErrNotParticipant)
	}
	if err != nil {
		return false, err
	}
	for {
		decided, outcome, err := tally(ctx, c, tx)
		if err != nil || decided {
			return outcome, err
		}
		select {
		case ev, ok := <-events:
			if !ok {
				return false, ErrLost
			}
			if errors.Is(ev.Err, zk.ErrWatchOverflow) {
				// We fell behind; watch again and re-read everything.
				if events, err = c.AddWatch(ctx, tx, zk.WatchPersistentRecursive); err != nil {
					return false, err
				}
				continue
			}
			if err := watchErr(ev); err != nil {
				return false, err
			}
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
}

// tally reads the votes of tx.
func tally(ctx context.Context, c *zk.Client, tx string) (decided, commit bool, err error) {
	sites, err := children(ctx, c, tx)
	if err != nil {
		return false, false, err
	}
	all := true
	for _, s := range sites {
		d, err := retry(ctx, func() ([]byte, error) {
			d, _, err := c.Get(ctx, tx+"/"+s)
			return d, err
		})
		if err != nil {
			return false, false, err
		}
		switch string(d) {
		case voteAbort:
			return true, false, nil
		case voteCommit:
		default:
			all = false
		}
	}
	return all, all, nil
}
