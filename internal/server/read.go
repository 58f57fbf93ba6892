package server

import (
	"strings"

	"github.com/zoohq/zoo/internal/acl"
	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/internal/txn"
	"github.com/zoohq/zoo/internal/watch"
)

// serveRead answers a request of ep that needs no txn (a read, ping,
// watch registration, whoAmI) from st at zxid, which the caller holds
// locked, with the Core's watch registry: the Server's connections and
// the simulator's members run this same code. Watches are registered
// inside the same critical section as the read, so no change can fall
// between them, and, as in Apache, only by a read that succeeds (exists
// sets one on a missing node: the watch NodeCreated fires).
func (k *Core) serveRead(ep Endpoint, op jute.Op, rec jute.Record, st *txn.State, zxid int64) (jute.Code, jute.Record) {
	w := watch.Watcher(ep.ID())
	switch op {
	case jute.OpPing:
		return jute.OK, nil
	case jute.OpExists:
		return k.exists(w, rec.(*jute.PathWatch), st)
	case jute.OpGetData:
		return k.getData(ep, w, rec.(*jute.PathWatch), st)
	case jute.OpGetChildren, jute.OpGetChildren2:
		return k.getChildren(ep, w, op, rec.(*jute.PathWatch), st)
	case jute.OpGetACL:
		return getACL(ep, rec.(*jute.PathRequest).Path, st)
	case jute.OpGetAllChildrenNumber:
		return allChildrenNumber(ep, rec.(*jute.PathRequest).Path, st)
	case jute.OpGetEphemerals:
		return ephemerals(ep, rec.(*jute.PathRequest).Path, st)
	case jute.OpMultiRead:
		return k.multiRead(ep, w, rec.(*jute.MultiRequest), st)
	case jute.OpAddWatch:
		return k.addWatch(w, rec.(*jute.AddWatchRequest))
	case jute.OpCheckWatches, jute.OpRemoveWatches:
		return k.removeWatches(w, op, rec.(*jute.WatchTypeRequest))
	case jute.OpSetWatches:
		sw := rec.(*jute.SetWatches)
		return k.setWatches(ep, &jute.SetWatches2{RelativeZxid: sw.RelativeZxid,
			DataWatches: sw.DataWatches, ExistWatches: sw.ExistWatches, ChildWatches: sw.ChildWatches}, st, zxid)
	case jute.OpSetWatches2:
		return k.setWatches(ep, rec.(*jute.SetWatches2), st, zxid)
	case jute.OpWhoAmI:
		// In the order Apache iterates its set of ids.
		return jute.OK, whoAmI(acl.JavaSetOrder(ep.AuthIDs()))
	}
	return jute.Unimplemented, nil
}

// badPath is the only path check Apache makes on reads; anything else that
// is not a node is simply NoNode.
func badPath(p string) bool { return strings.IndexByte(p, 0) >= 0 }

// check returns NoNode or NoAuth for a read of path needing perm.
func check(ep Endpoint, st *txn.State, path string, perm int32) jute.Code {
	acls, _, err := st.Tree.ACL(path)
	if err != nil {
		return codeOf(err)
	}
	if !acl.Check(acls, perm, ep.AuthIDs()) {
		return jute.NoAuth
	}
	return jute.OK
}

func (k *Core) exists(w watch.Watcher, r *jute.PathWatch, st *txn.State) (jute.Code, jute.Record) {
	if badPath(r.Path) {
		return jute.BadArguments, nil
	}
	stat, ok := st.Tree.Stat(r.Path)
	if r.Watch {
		// On a missing node this is the exist watch that NodeCreated fires.
		k.watches.Add(w, r.Path, watch.ModeData)
	}
	if !ok {
		return jute.NoNode, nil
	}
	return jute.OK, &jute.StatResponse{Stat: stat}
}

func (k *Core) getData(ep Endpoint, w watch.Watcher, r *jute.PathWatch, st *txn.State) (jute.Code, jute.Record) {
	if badPath(r.Path) {
		return jute.BadArguments, nil
	}
	if mutated(MutWatchOnMissingNode) && r.Watch {
		k.watches.Add(w, r.Path, watch.ModeData)
	}
	data, stat, acls, err := st.Tree.GetChecked(r.Path)
	if err != nil {
		return codeOf(err), nil
	}
	if !acl.Check(acls, jute.PermRead, ep.AuthIDs()) && !mutated(MutGetDataSkipsACL) {
		return jute.NoAuth, nil
	}
	if r.Watch {
		k.watches.Add(w, r.Path, watch.ModeData)
	}
	return jute.OK, &jute.GetDataResponse{Data: data, Stat: stat}
}

func (k *Core) getChildren(ep Endpoint, w watch.Watcher, op jute.Op, r *jute.PathWatch, st *txn.State) (jute.Code, jute.Record) {
	if badPath(r.Path) {
		return jute.BadArguments, nil
	}
	if code := check(ep, st, r.Path, jute.PermRead); code != jute.OK {
		return code, nil
	}
	children, stat, err := st.Tree.Children(r.Path)
	if err != nil {
		return codeOf(err), nil
	}
	if r.Watch {
		k.watches.Add(w, r.Path, watch.ModeChild)
	}
	if op == jute.OpGetChildren {
		return jute.OK, &jute.GetChildrenResponse{Children: children}
	}
	return jute.OK, &jute.GetChildren2Response{Children: children, Stat: stat}
}

// getACL needs READ or ADMIN; without ADMIN the digests are masked, as
// Apache masks them ("user:x").
func getACL(ep Endpoint, path string, st *txn.State) (jute.Code, jute.Record) {
	acls, stat, err := st.Tree.ACL(path)
	if err != nil {
		return codeOf(err), nil
	}
	ids := ep.AuthIDs()
	if !acl.Check(acls, jute.PermRead|jute.PermAdmin, ids) {
		return jute.NoAuth, nil
	}
	if !acl.Check(acls, jute.PermAdmin, ids) {
		acls = acl.Redact(acls)
	}
	return jute.OK, &jute.GetACLResponse{ACL: acls, Stat: stat}
}

func allChildrenNumber(ep Endpoint, path string, st *txn.State) (jute.Code, jute.Record) {
	if code := check(ep, st, path, jute.PermRead); code != jute.OK {
		return code, nil
	}
	n, err := st.Tree.AllChildrenNumber(path)
	if err != nil {
		return codeOf(err), nil
	}
	return jute.OK, &jute.CountResponse{TotalNumber: int32(n)}
}

// ephemerals lists the session's ephemerals under a prefix (a plain string
// prefix, not a path: Apache matches "/a" against "/ab" too).
func ephemerals(ep Endpoint, prefix string, st *txn.State) (jute.Code, jute.Record) {
	all := st.Tree.Ephemerals(ep.SessionID())
	prefix = strings.TrimSpace(prefix)
	out := make([]string, 0, len(all))
	for _, p := range all {
		if prefix == "" || prefix == "/" || strings.HasPrefix(p, prefix) {
			out = append(out, p)
		}
	}
	return jute.OK, &jute.StringsResponse{Strings: out}
}

func (k *Core) multiRead(ep Endpoint, w watch.Watcher, m *jute.MultiRequest, st *txn.State) (jute.Code, jute.Record) {
	results := make([]jute.MultiResult, len(m.Ops))
	for i, op := range m.Ops {
		var (
			code jute.Code
			resp jute.Record
		)
		switch op.Op {
		case jute.OpGetData:
			code, resp = k.getData(ep, w, op.Record.(*jute.PathWatch), st)
		case jute.OpGetChildren:
			code, resp = k.getChildren(ep, w, op.Op, op.Record.(*jute.PathWatch), st)
		default:
			code = jute.Unimplemented
		}
		if code != jute.OK {
			results[i] = jute.MultiResult{Op: jute.OpError, Err: code}
		} else {
			results[i] = jute.MultiResult{Op: op.Op, Record: resp}
		}
	}
	return jute.OK, &jute.MultiResponse{Results: results}
}

// addWatch registers a persistent watch. Apache replies with an
// ErrorResponse body holding 0.
func (k *Core) addWatch(w watch.Watcher, r *jute.AddWatchRequest) (jute.Code, jute.Record) {
	switch r.Mode {
	case jute.AddWatchPersistent:
		k.watches.Add(w, r.Path, watch.ModePersistent)
	case jute.AddWatchPersistentRecursive:
		k.watches.Add(w, r.Path, watch.ModePersistentRecursive)
	default:
		return jute.BadArguments, nil
	}
	return jute.OK, &jute.ErrorResponse{Err: jute.OK}
}

func (k *Core) removeWatches(w watch.Watcher, op jute.Op, r *jute.WatchTypeRequest) (jute.Code, jute.Record) {
	var found bool
	if op == jute.OpCheckWatches {
		found = k.watches.Check(w, r.Path, r.Type)
	} else {
		found = k.watches.Remove(w, r.Path, r.Type)
	}
	if !found {
		return jute.NoWatcher, nil
	}
	return jute.OK, nil
}

// setWatches re-registers a reconnecting client's watches; those whose
// node changed after the client's last zxid fire at once instead.
// Ref: DESIGN decision 7.
func (k *Core) setWatches(ep Endpoint, r *jute.SetWatches2, st *txn.State, zxid int64) (jute.Code, jute.Record) {
	if mutated(MutSetWatchesForgetsChanges) {
		r.RelativeZxid = zxid
	}
	for _, d := range k.watches.SetWatches(watch.Watcher(ep.ID()), r, zxid, st.Tree) {
		ep.Send(eventFrame(d.Event.Type, d.Event.Path))
	}
	return jute.OK, nil
}

// whoAmI lists the connection's identities as Apache's AuthUtil does: the
// user name of a digest id is the part before the colon.
func whoAmI(ids []jute.Id) *jute.WhoAmIResponse {
	out := make([]jute.ClientInfo, 0, len(ids))
	for _, id := range ids {
		user := id.ID
		if id.Scheme == "digest" {
			user, _, _ = strings.Cut(user, ":")
		}
		out = append(out, jute.ClientInfo{AuthScheme: id.Scheme, User: user})
	}
	return &jute.WhoAmIResponse{ClientInfo: out}
}
