package server

import (
	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/internal/replica"
	"github.com/zoohq/zoo/internal/tree"
	"github.com/zoohq/zoo/internal/txn"
)

// onApply is the replica's callback, on its loop goroutine. The request
// path (Core.Apply) fires the watches and completes the request of the
// event; the rest (digests, audit of ephemerals, the expiry tracker,
// membership) is the Server's, after the reply, so a closeSession is
// answered before its connection is told to finish.
func (s *Server) onApply(ev replica.Event) {
	switch ev.Kind {
	case replica.Applied:
		s.digests.applied(ev.State, ev.Zxid)
		if s.cfg.Ensemble.enabled() {
			s.metrics.commitCount.Inc() // Apache counts quorum commits only
		}
		s.core.Apply(ev)
		if ev.Txn.Type == txn.OpRestore && ev.Result.Err == jute.OK {
			s.restored(ev.State)
		}
		s.auditEphemerals(ev)
		s.sessionChanged(ev)
		if ev.Txn.Type == jute.OpReconfig && ev.Result.Err == jute.OK {
			s.reconfigured(ev.Result.Data)
		}
	case replica.ConfChanged:
		if membership, _, err := ev.State.Tree.Get(tree.ConfigPath); err == nil {
			s.reconfigured(membership)
		}
	case replica.Synced, replica.Dropped:
		s.core.Apply(ev)
	case replica.Restored:
		s.snapshotInstalled(ev)
	}
}

// eventFrame encodes a notification. Its header carries zxid -1, as
// Apache's does; clients take the zxid from replies only.
func eventFrame(typ int32, path string) []byte {
	hdr := jute.ReplyHeader{Xid: jute.XidNotification, Zxid: -1}
	return encodeFrame(&hdr, &jute.WatcherEvent{Type: typ, State: jute.StateSyncConnected, Path: path})
}

// writeReply builds the reply of a write from its txn's result. A multi
// succeeds at the header even when an op fails (the results say which);
// only a multi that could not be read at all (MarshallingError) fails
// whole.
func writeReply(op jute.Op, r *txn.Result) (jute.Code, jute.Record) {
	if op == jute.OpMulti && (r.Err == jute.OK || len(r.Multi) > 0) {
		return jute.OK, &jute.MultiResponse{Results: r.Multi}
	}
	if r.Err != jute.OK {
		return r.Err, nil
	}
	switch op {
	case jute.OpCreate:
		return jute.OK, &jute.CreateResponse{Path: r.Path}
	case jute.OpCreate2, jute.OpCreateContainer, jute.OpCreateTTL:
		return jute.OK, &jute.Create2Response{Path: r.Path, Stat: r.Stat}
	case jute.OpSetData, jute.OpSetACL:
		// A StatResponse is encoded as its Stat alone: the result's own
		// Stat serves as the body, where boxing a copy allocated once per
		// write (issue 14).
		return jute.OK, &r.Stat
	case jute.OpReconfig:
		// Apache answers with the new /zookeeper/config.
		return jute.OK, &jute.GetDataResponse{Data: r.Data, Stat: r.Stat}
	}
	return jute.OK, nil // delete, check, closeSession
}

// isWrite reports whether op goes through prep and the log. sync does too:
// its reply must wait for everything committed before it.
func isWrite(op jute.Op) bool {
	switch op {
	case jute.OpCreate, jute.OpCreate2, jute.OpCreateContainer, jute.OpCreateTTL,
		jute.OpDelete, jute.OpSetData, jute.OpSetACL, jute.OpCheck, jute.OpMulti,
		jute.OpReconfig, jute.OpCloseSession, jute.OpSync:
		return true
	}
	return false
}

func syncPath(rec jute.Record) string {
	if r, ok := rec.(*jute.PathRequest); ok {
		return r.Path
	}
	return ""
}

// encodeFrame encodes a length-prefixed frame of hdr (if any) and body (if
// any) into one new buffer, which the connection's queue then owns.
// AppendFrame skips a nil body; a nil hdr must stay out of the call, as a
// nil *ReplyHeader in a Record is not a nil Record.
func encodeFrame(hdr *jute.ReplyHeader, body jute.Record) []byte {
	if hdr == nil {
		return jute.AppendFrame(nil, body)
	}
	return jute.AppendFrame(nil, hdr, body)
}
