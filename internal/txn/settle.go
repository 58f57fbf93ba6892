package txn

import (
	"strings"

	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/internal/tree"
)

// Settled reports whether req may be prepped now as far as quotas go. A
// write that a hard quota may refuse is checked against the committed
// tree, as Apache checks it, so it must wait until every write prepped
// before it is applied: otherwise one the stats do not count yet lets it
// past the limit. In an ensemble that is no rare window: a follower may
// apply a write, and its client send the next, before the leader, whose
// own log write is still in flight, applies it. So with EnforceQuota, a
// write under a quota, or any write while a quota is being set, waits
// (the replica holds it, and the requests behind it, for a turn or two).
func (p *Prepper) Settled(req Request) bool {
	if !p.cfg.EnforceQuota || len(p.changes) == 0 {
		return true
	}
	var paths []string
	if m, ok := req.Record.(*jute.MultiRequest); ok {
		for _, op := range m.Ops {
			if path, ok := quotaWritePath(op.Record); ok {
				paths = append(paths, path)
			}
		}
	} else if path, ok := quotaWritePath(req.Record); ok {
		paths = append(paths, path)
	}
	if len(paths) == 0 {
		return true
	}
	for _, c := range p.changes {
		if strings.HasPrefix(c.path, tree.QuotaPath) {
			return false
		}
	}
	for _, path := range paths {
		if p.state.Tree.UnderQuota(path) {
			return false
		}
	}
	return true
}

// quotaWritePath returns the path of a write a quota may refuse: a create
// or a setData.
func quotaWritePath(rec jute.Record) (string, bool) {
	switch r := rec.(type) {
	case *jute.CreateRequest:
		return r.Path, true
	case *jute.CreateTTLRequest:
		return r.Path, true
	case *jute.SetDataRequest:
		return r.Path, true
	}
	return "", false
}
