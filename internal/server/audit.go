package server

import (
	"github.com/zoohq/zoo/internal/audit"
	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/internal/replica"
	"github.com/zoohq/zoo/internal/txn"
)

// auditWrite records an answered write as Apache's AuditHelper does: one
// record per create, delete, setData and setACL; a successful multi as
// one record per changing op, a failed one as a single multiOperation
// failure; reconfig. Reads, check and sync are not audited.
func (s *Server) auditWrite(p *request, r *txn.Result) {
	if s.cfg.Audit == nil || p.rec == nil {
		return
	}
	c := p.conn
	base := audit.Event{Time: s.cfg.Now(), Session: audit.Session(c.SessionID()), User: audit.Users(c.AuthIDs())}
	if rc, ok := c.(*conn); ok && rc.ip.IsValid() {
		base.IP = rc.ip.String()
	}
	result := audit.Success
	if r.Err != jute.OK {
		result = audit.Failure
	}
	if p.op == jute.OpMulti {
		m, ok := p.rec.(*jute.MultiRequest)
		if !ok {
			return
		}
		if r.Err != jute.OK {
			e := base
			e.Operation, e.Result = audit.OpMulti, audit.Failure
			s.cfg.Audit.Log(e)
			return
		}
		for i, op := range m.Ops {
			created := ""
			if i < len(r.Multi) {
				created = createdPath(r.Multi[i].Record)
			}
			if e, ok := auditFields(base, op.Op, op.Record, created); ok {
				e.Result = audit.Success
				s.cfg.Audit.Log(e)
			}
		}
		return
	}
	created := ""
	if r.Err == jute.OK {
		created = r.Path
	}
	if e, ok := auditFields(base, p.op, p.rec, created); ok {
		e.Result = result
		s.cfg.Audit.Log(e)
	}
}

// createdPath is the name a create in a multi got.
func createdPath(rec jute.Record) string {
	switch r := rec.(type) {
	case *jute.CreateResponse:
		return r.Path
	case *jute.Create2Response:
		return r.Path
	}
	return ""
}

// auditFields fills the operation, znode, type and ACL of a write; ok is
// false for requests Apache does not audit. created is the name a
// successful create got (Apache logs the request's path when it failed).
func auditFields(e audit.Event, op jute.Op, rec jute.Record, created string) (audit.Event, bool) {
	switch r := rec.(type) {
	case *jute.CreateRequest:
		e.Operation, e.Znode, e.ZnodeType = audit.OpCreate, r.Path, audit.CreateMode(r.Flags)
	case *jute.CreateTTLRequest:
		e.Operation, e.Znode, e.ZnodeType = audit.OpCreate, r.Path, audit.CreateMode(r.Flags)
	case *jute.PathVersion:
		if op != jute.OpDelete {
			return e, false // check
		}
		e.Operation, e.Znode = audit.OpDelete, r.Path
	case *jute.SetDataRequest:
		e.Operation, e.Znode = audit.OpSetData, r.Path
	case *jute.SetACLRequest:
		e.Operation, e.Znode, e.ACL = audit.OpSetACL, r.Path, audit.ACLString(r.ACL)
	default:
		if op != jute.OpReconfig {
			return e, false
		}
		e.Operation = audit.OpReconfig
	}
	if created != "" && e.Operation == audit.OpCreate {
		e.Znode = created
	}
	return e, true
}

// auditEphemerals records the ephemeral nodes a closeSession removed, as
// Apache's DataTree.killSession does: as the server's user, with no ip.
func (s *Server) auditEphemerals(ev replica.Event) {
	if s.cfg.Audit == nil || ev.Txn == nil || ev.Txn.Type != jute.OpCloseSession || ev.Result == nil {
		return
	}
	base := audit.Event{Time: s.cfg.Now(), Session: audit.Session(ev.Txn.SessionID), User: s.cfg.Audit.ServerUser(),
		Operation: audit.OpEphemeralDelete, Result: audit.Success}
	for _, t := range ev.Result.Triggers {
		if t.Type == jute.EventNodeDeleted {
			e := base
			e.Znode = t.Path
			s.cfg.Audit.Log(e)
		}
	}
}
