package txn

import (
	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/internal/tree"
)

// SessionInfo is what every server knows of a session. Expiry deadlines
// are not replicated: the leader tracks them (DESIGN decision 8).
type SessionInfo struct {
	TimeoutMs int32
	Password  []byte
	// Owner is the server the session's client is attached to, as far as
	// setOwner txns said; 0 is unknown (no move yet, or recovered from a
	// snapshot, which does not keep it), and then any server may act for
	// the session.
	Owner int64
}

// State is the replicated state that txns change.
type State struct {
	Tree     *tree.Tree
	Sessions map[int64]SessionInfo
}

// NewState returns a state over t with no sessions.
func NewState(t *tree.Tree) *State {
	return &State{Tree: t, Sessions: make(map[int64]SessionInfo)}
}

// Trigger is a watch event a txn fires: Type is jute.EventNodeCreated,
// EventNodeDeleted, EventNodeDataChanged or EventNodeChildrenChanged.
type Trigger struct {
	Path string
	Type int32
	// ACL is the deleted node's ACL for NodeDeleted, which the tree no
	// longer holds when the event is delivered; Apache delivers an event
	// only to watchers with READ on it. Nil for the other types: their
	// node is still in the tree.
	ACL []jute.ACL
}

// Result is what applying a txn did (Apache's ProcessTxnResult).
type Result struct {
	// Err is the txn's error: the code of an ErrorTxn, an error met at
	// apply time (replay), or for a multi the first failing op's code.
	// Apache answers a failed multi with header error 0 and the codes in
	// Multi.
	Err jute.Code
	// Path is the node the txn created or changed.
	Path string
	// Stat is the node's stat after a create (any kind), setData, setACL
	// or check.
	Stat jute.Stat
	// Multi has one result per op of a multi, in Apache's wire form (what
	// FinalRequestProcessor builds): create as OpCreate with a
	// CreateResponse; createContainer and createTTL as OpCreate2 with a
	// Create2Response; delete as OpDelete; setData as OpSetData with a
	// StatResponse; check as OpCheck; a failed op as OpError with its
	// code. In a failed multi the ops before the failing one report OK and
	// those after it RuntimeInconsistency, as Apache 3.8 replies.
	Multi []jute.MultiResult
	// Triggers are the watch events to fire, in the order Apache fires
	// them.
	Triggers []Trigger
	// Session is the session a createSession added or a closeSession
	// removed.
	Session int64
	// Data is /zookeeper/config's new content after a reconfig.
	Data []byte
}

// Apply applies t at zxid to s and reports what it did. It is
// deterministic and total: a txn that no longer fits the state (a replay)
// is applied as Apache's DataTree.processTxn applies it, and a malformed
// txn yields MarshallingError, never a panic.
func Apply(s *State, t *Txn, zxid int64) Result {
	var r Result
	switch t.Type {
	case jute.OpMulti:
		m, ok := t.Body.(*MultiTxn)
		if !ok {
			r.Err = jute.MarshallingError
			return r
		}
		applyMulti(s.Tree, t, m, zxid, &r)
	case jute.OpCreateSession:
		applyCreateSession(s, t, &r)
	case jute.OpCloseSession:
		applyCloseSession(s, t, zxid, &r)
	case OpSetOwner:
		applySetOwner(s, t, &r)
	case jute.OpReconfig:
		applyReconfig(s, t, zxid, &r)
	case OpRestore:
		applyRestore(s, t, &r)
	default:
		o := applyOp(s.Tree, t.ref, t.SessionID, t.Time, t.Type, t.Body, zxid, &r.Triggers)
		r.Err, r.Path, r.Stat = o.err, o.path, o.stat
	}
	return r
}

// opResult is the outcome of one op.
type opResult struct {
	err  jute.Code
	path string
	stat jute.Stat
}

// applyOp applies one op (a whole txn, or an op of a multi), appending its
// triggers. ref is the txn's hint (Txn.ref).
func applyOp(tr *tree.Tree, ref tree.Ref, session, time int64, op jute.Op, body jute.Record, zxid int64, trig *[]Trigger) opResult {
	switch b := body.(type) {
	case *CreateTxn:
		if op != jute.OpCreate && op != jute.OpCreate2 {
			break
		}
		owner := int64(0)
		if b.Ephemeral {
			owner = session
		}
		return applyCreate(tr, ref, b.Path, b.Data, b.ACL, owner, b.ParentCVersion, zxid, time, trig)
	case *CreateContainerTxn:
		if op != jute.OpCreateContainer {
			break
		}
		return applyCreate(tr, ref, b.Path, b.Data, b.ACL, tree.ContainerOwner, b.ParentCVersion, zxid, time, trig)
	case *CreateTTLTxn:
		if op != jute.OpCreateTTL {
			break
		}
		if b.TTL <= 0 || b.TTL > tree.MaxTTL {
			// Apache throws here and stops the server; prep never
			// writes such a txn.
			return opResult{err: jute.BadArguments, path: b.Path}
		}
		return applyCreate(tr, ref, b.Path, b.Data, b.ACL, tree.TTLOwner(b.TTL), b.ParentCVersion, zxid, time, trig)
	case *DeleteTxn:
		if op != jute.OpDelete && op != jute.OpDeleteContainer {
			break
		}
		return applyDelete(tr, ref, b.Path, zxid, trig)
	case *SetDataTxn:
		if op != jute.OpSetData {
			break
		}
		return applySetData(tr, ref, b, zxid, time, trig)
	case *SetACLTxn:
		if op != jute.OpSetACL {
			break
		}
		st, err := tr.SetACL(b.Path, b.ACL, b.Version)
		return opResult{err: code(err), path: b.Path, stat: st}
	case *CheckVersionTxn:
		if op != jute.OpCheck {
			break
		}
		st, _ := tr.Stat(b.Path)
		return opResult{path: b.Path, stat: st}
	case *ErrorTxn:
		if op != jute.OpError {
			break
		}
		return opResult{err: b.Err}
	}
	return opResult{err: jute.MarshallingError}
}

// applyCreate applies a create of any kind. A create that meets an existing
// node (a replay) still raises the parent's cversion and pzxid to the
// txn's, as DataTree.processTxn does for creates that fail with NodeExists,
// so the parent ends as the original run left it. (Apache does this for
// OpCode.create only; Zoo for every kind, since the reason is the same.)
func applyCreate(tr *tree.Tree, parentRef tree.Ref, path string, data []byte, acl []jute.ACL, owner int64, parentCV int32, zxid, time int64, trig *[]Trigger) opResult {
	st, err := tr.CreateNodeAt(parentRef, path, data, acl, owner, parentCV, zxid, time)
	if err != nil {
		if c := code(err); c == jute.NodeExists {
			if parent, _, ok := tree.Split(path); ok {
				_ = tr.SetCversionPzxid(parent, parentCV, zxid)
			}
		}
		return opResult{err: code(err), path: path}
	}
	parent, _, _ := tree.Split(path)
	*trig = append(*trig,
		Trigger{Path: path, Type: jute.EventNodeCreated},
		Trigger{Path: parent, Type: jute.EventNodeChildrenChanged})
	return opResult{path: path, stat: st}
}

// applyDelete applies a delete; DataTree.deleteNode fires NodeDeleted on the
// node (data and child watches) and NodeChildrenChanged on the parent.
func applyDelete(tr *tree.Tree, ref tree.Ref, path string, zxid int64, trig *[]Trigger) opResult {
	acl, err := tr.DeleteNodeAt(ref, path, zxid)
	if err != nil {
		return opResult{err: code(err), path: path}
	}
	parent, _, _ := tree.Split(path)
	*trig = append(*trig,
		Trigger{Path: path, Type: jute.EventNodeDeleted, ACL: acl},
		Trigger{Path: parent, Type: jute.EventNodeChildrenChanged})
	return opResult{path: path}
}

func applySetData(tr *tree.Tree, ref tree.Ref, b *SetDataTxn, zxid, time int64, trig *[]Trigger) opResult {
	st, err := tr.SetDataAt(ref, b.Path, b.Data, b.Version, zxid, time)
	if err != nil {
		return opResult{err: code(err), path: b.Path}
	}
	*trig = append(*trig, Trigger{Path: b.Path, Type: jute.EventNodeDataChanged})
	return opResult{path: b.Path, stat: st}
}

// applyMulti applies the ops of a multi at one zxid. A multi that holds an
// ErrorTxn failed at prep: nothing is applied, and each op reports OK
// before the failing one and RuntimeInconsistency after it
// (DataTree.processTxn). Otherwise every op is applied in order; an op
// that fails at apply time (only on replay) does not undo the others, as
// in Apache.
func applyMulti(tr *tree.Tree, t *Txn, m *MultiTxn, zxid int64, r *Result) {
	r.Multi = make([]jute.MultiResult, 0, len(m.Ops))
	if failedMulti(m) {
		after := false
		for _, op := range m.Ops {
			c := jute.OK
			switch {
			case op.Type == jute.OpError:
				after = true
				c = jute.MarshallingError
				if e, ok := op.Body.(*ErrorTxn); ok {
					c = e.Err
				}
			case after:
				c = jute.RuntimeInconsistency
			}
			r.Multi = append(r.Multi, jute.MultiResult{Op: jute.OpError, Err: c})
			if c != jute.OK && r.Err == jute.OK {
				r.Err = c
			}
		}
		return
	}
	for _, op := range m.Ops {
		o := applyOp(tr, tree.Ref{}, t.SessionID, t.Time, op.Type, op.Body, zxid, &r.Triggers)
		r.Multi = append(r.Multi, multiResult(op.Type, o))
		if o.err != jute.OK && r.Err == jute.OK {
			r.Err = o.err
		}
	}
}

func failedMulti(m *MultiTxn) bool {
	for _, op := range m.Ops {
		if op.Type == jute.OpError {
			return true
		}
	}
	return false
}

// multiResult renders an op's outcome as FinalRequestProcessor and
// MultiResponse do.
func multiResult(op jute.Op, o opResult) jute.MultiResult {
	if o.err != jute.OK {
		return jute.MultiResult{Op: jute.OpError, Err: o.err}
	}
	switch op {
	case jute.OpCreate:
		return jute.MultiResult{Op: jute.OpCreate, Record: &jute.CreateResponse{Path: o.path}}
	case jute.OpCreate2, jute.OpCreateContainer, jute.OpCreateTTL:
		return jute.MultiResult{Op: jute.OpCreate2, Record: &jute.Create2Response{Path: o.path, Stat: o.stat}}
	case jute.OpDelete, jute.OpDeleteContainer:
		return jute.MultiResult{Op: jute.OpDelete}
	case jute.OpSetData:
		return jute.MultiResult{Op: jute.OpSetData, Record: &jute.StatResponse{Stat: o.stat}}
	}
	return jute.MultiResult{Op: jute.OpCheck}
}

func applyCreateSession(s *State, t *Txn, r *Result) {
	b, ok := t.Body.(*CreateSessionTxn)
	if !ok {
		r.Err = jute.MarshallingError
		return
	}
	s.Sessions[t.SessionID] = SessionInfo{TimeoutMs: b.TimeoutMs, Password: b.Password}
	r.Session = t.SessionID
}

// applySetOwner records the server a session moved to; a session that
// ended meanwhile stays ended.
func applySetOwner(s *State, t *Txn, r *Result) {
	b, ok := t.Body.(*SetOwnerTxn)
	if !ok {
		r.Err = jute.MarshallingError
		return
	}
	info, ok := s.Sessions[t.SessionID]
	if !ok {
		r.Err = jute.SessionExpired
		return
	}
	info.Owner = b.Owner
	s.Sessions[t.SessionID] = info
	r.Session = t.SessionID
}

// applyCloseSession deletes the session's ephemerals, the txn's list first
// and then any the tree still holds for the session (DataTree.killSession
// does the same, warning about the extras), and forgets the session.
// Missing nodes are skipped: on replay they may be gone already.
func applyCloseSession(s *State, t *Txn, zxid int64, r *Result) {
	if b, ok := t.Body.(*CloseSessionTxn); ok {
		for _, p := range b.Paths {
			applyDelete(s.Tree, tree.Ref{}, p, zxid, &r.Triggers)
		}
	}
	for _, p := range s.Tree.Ephemerals(t.SessionID) {
		applyDelete(s.Tree, tree.Ref{}, p, zxid, &r.Triggers)
	}
	delete(s.Sessions, t.SessionID)
	r.Session = t.SessionID
}
