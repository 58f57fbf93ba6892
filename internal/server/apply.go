package server

import (
	"bytes"

	"github.com/zoohq/zoo/internal/acl"
	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/internal/replica"
	"github.com/zoohq/zoo/internal/txn"
	"github.com/zoohq/zoo/internal/watch"
)

// onApply is the replica's callback, on its loop goroutine. For an applied
// txn the state is write-locked, so the events and the reply queued here
// reach every connection before any reply to a read computed after the
// change (DESIGN decision 7).
func (s *Server) onApply(ev replica.Event) {
	switch ev.Kind {
	case replica.Applied:
		s.digests.applied(ev.State, ev.Zxid)
		if s.cfg.Ensemble.enabled() {
			s.metrics.commitCount.Inc() // Apache counts quorum commits only
		}
		s.fire(ev.State, ev.Result.Triggers)
		// The reply goes before a closed session's connection is told to
		// finish, so a closeSession is answered before the close.
		if req := s.reqs.take(ev.Tag); req != nil && req.done != nil {
			req.deliver(ev)
		} else if req != nil {
			s.applied(req, ev)
		}
		if ev.Txn.Type == txn.OpRestore && ev.Result.Err == jute.OK {
			s.restored(ev.State)
		}
		s.auditEphemerals(ev)
		s.sessionChanged(ev.Txn)
		if ev.Txn.Type == jute.OpReconfig && ev.Result.Err == jute.OK {
			s.reconfigured(ev.Result.Data)
		}
	case replica.Synced:
		if req := s.reqs.take(ev.Tag); req != nil {
			req.complete(ev.Zxid, jute.OK, &jute.PathRequest{Path: syncPath(req.rec)})
			req.conn.writeDone()
		}
	case replica.Dropped:
		if req := s.reqs.take(ev.Tag); req != nil && req.done != nil {
			req.deliver(ev)
		} else if req != nil {
			s.metrics.dropped.Inc()
			// The client sees ConnectionLoss and retries elsewhere. The
			// request was not applied here and may never be; in an
			// ensemble whose leader changed it may still apply later,
			// which is what ConnectionLoss allows. The reads behind it
			// fail with its connection.
			req.fail(errDropped)
		}
	case replica.Restored:
		s.snapshotInstalled(ev)
	}
}

// fire delivers the watch events of a change. As in Apache, a watcher
// without READ on the node gets no event, though its one-time watch is
// used up. One encoded frame serves every watcher of the same event.
func (s *Server) fire(st *txn.State, triggers []txn.Trigger) {
	var conns []*conn
	for _, t := range triggers {
		ds := s.watches.Trigger(t.Path, t.Type, 0)
		if len(ds) == 0 {
			continue
		}
		acls := t.ACL
		if t.Type != jute.EventNodeDeleted {
			acls, _, _ = st.Tree.ACL(t.Path)
		}
		conns = s.watchers(conns[:0], ds)
		frame := eventFrame(t.Type, t.Path)
		for _, c := range conns {
			if acl.Check(acls, jute.PermRead, c.authIDs()) {
				// Outside s.mu: a slow consumer's send closes its
				// connection, which takes s.mu.
				c.send(frame)
			}
		}
	}
}

// watchers appends the live connections of the deliveries to dst.
func (s *Server) watchers(dst []*conn, ds []watch.Delivery) []*conn {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, d := range ds {
		if c := s.conns[uint64(d.Watcher)]; c != nil {
			dst = append(dst, c)
		}
	}
	return dst
}

// eventFrame encodes a notification. Its header carries zxid -1, as
// Apache's does; clients take the zxid from replies only.
func eventFrame(typ int32, path string) []byte {
	hdr := jute.ReplyHeader{Xid: jute.XidNotification, Zxid: -1}
	return encodeFrame(&hdr, &jute.WatcherEvent{Type: typ, State: jute.StateSyncConnected, Path: path})
}

// applied answers a write whose txn was applied.
func (s *Server) applied(req *request, ev replica.Event) {
	c := req.conn
	defer c.writeDoneIn(ev.State, ev.Zxid)
	if req.op == txn.OpSetOwner && !s.movedHere(ev, req.connect) {
		// The session is gone (or never was, or the password is
		// wrong): a zero timeout and password say so.
		s.log.Info("refusing to reattach session: unknown, expired or wrong password",
			"session", sessionHex(req.connect.SessionID), "err", ev.Result.Err)
		req.completeFrame(connectFrame(&jute.ConnectResponse{Passwd: make([]byte, 16), HasReadOnly: req.connect.HasReadOnly}), ev.Zxid, true)
		return
	}
	if req.connect != nil {
		c.st.lastOp.Store(int32(jute.OpCreateSession))
		req.completeFrame(connectFrame(req.connect), ev.Zxid, false)
		return
	}
	code, resp := writeReply(req.op, ev.Result)
	req.complete(ev.Zxid, code, resp)
	s.metrics.updateLatency.Observe(sinceMs(req.start))
	s.auditWrite(req, ev.Result)
}

// movedHere reports whether a session's move here (its setOwner, just
// applied: ev.State is the write-locked state) succeeded for a client with
// this password.
func (s *Server) movedHere(ev replica.Event, resp *jute.ConnectResponse) bool {
	if ev.Result.Err != jute.OK {
		return false
	}
	info, ok := ev.State.Sessions[resp.SessionID]
	return ok && bytes.Equal(info.Password, resp.Passwd) && s.touch(resp.SessionID)
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
		return jute.OK, &jute.StatResponse{Stat: r.Stat}
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
