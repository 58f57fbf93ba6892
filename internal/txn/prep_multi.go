package txn

import (
	"github.com/zoohq/zoo/internal/jute"
)

// prepMulti preps the ops of a multi in order, each seeing the changes of
// the ones before it. When an op fails, the changes of the ops before it
// are rolled back (rollbackPendingChanges), the op becomes an ErrorTxn
// with its code and the ops after it ErrorTxn RuntimeInconsistency, which
// apply turns into Apache's replies. A multi holding an op that is not a
// write, or a record that does not fit its op, fails as a whole with
// MarshallingError, as Apache's MultiOperationRecord fails to deserialize.
func (p *Prepper) prepMulti(req *Request) (jute.Record, error) {
	m, ok := req.Record.(*jute.MultiRequest)
	if !ok {
		return nil, jute.MarshallingError
	}
	ops := make([]jute.MultiOp, len(m.Ops))
	for i, op := range m.Ops {
		if ops[i], ok = normalizeMultiOp(op); !ok {
			return nil, jute.MarshallingError
		}
	}
	mark := len(p.changes)
	p.inMulti, p.undo = true, p.undo[:0]
	defer func() { p.inMulti = false }()
	out := &MultiTxn{Ops: make([]SubTxn, 0, len(ops))}
	failed := false
	for _, op := range ops {
		if failed {
			out.Ops = append(out.Ops, SubTxn{Type: jute.OpError, Body: &ErrorTxn{Err: jute.RuntimeInconsistency}})
			continue
		}
		body, err := p.prepOp(req, op.Op, op.Record)
		if err != nil {
			failed = true
			p.rollback(mark)
			out.Ops = append(out.Ops, SubTxn{Type: jute.OpError, Body: &ErrorTxn{Err: code(err)}})
			continue
		}
		out.Ops = append(out.Ops, SubTxn{Type: op.Op, Body: body})
	}
	return out, nil
}

// normalizeMultiOp gives an op of a multi the type Apache's server gives
// it: MultiOperationRecord rebuilds every create with Op.create, whose
// type follows the flags (container flag: createContainer; TTL flags:
// createTTL; else create), so a create2 in a multi is a create and a
// createTTL without TTL flags is a create that ignores its TTL. ok is
// false for an op a write multi cannot hold.
func normalizeMultiOp(op jute.MultiOp) (jute.MultiOp, bool) {
	switch op.Op {
	case jute.OpCreate, jute.OpCreate2, jute.OpCreateContainer:
		r, ok := op.Record.(*jute.CreateRequest)
		if !ok {
			return op, false
		}
		typ := multiCreateType(r.Flags)
		if typ == jute.OpCreateTTL {
			// A TTL mode with no TTL: Apache's MultiOperationRecord
			// fails to build the op, so the whole multi is a
			// MarshallingError (checked against Apache 3.8).
			return op, false
		}
		return jute.MultiOp{Op: typ, Record: r}, true
	case jute.OpCreateTTL:
		r, ok := op.Record.(*jute.CreateTTLRequest)
		if !ok {
			return op, false
		}
		if typ := multiCreateType(r.Flags); typ != jute.OpCreateTTL {
			return jute.MultiOp{Op: typ, Record: &jute.CreateRequest{Path: r.Path, Data: r.Data, ACL: r.ACL, Flags: r.Flags}}, true
		}
		return op, true
	case jute.OpDelete, jute.OpCheck:
		_, ok := op.Record.(*jute.PathVersion)
		return op, ok
	case jute.OpSetData:
		_, ok := op.Record.(*jute.SetDataRequest)
		return op, ok
	}
	return op, false
}

// multiCreateType is Op.getOpcode(CreateMode.fromFlag(flags, PERSISTENT)).
func multiCreateType(flags int32) jute.Op {
	switch flags {
	case jute.FlagContainer:
		return jute.OpCreateContainer
	case jute.FlagPersistentWithTTL, jute.FlagPersistentSequentialWithTTL:
		return jute.OpCreateTTL
	}
	return jute.OpCreate
}

// rollback undoes the changes a failing multi made, newest first, so every
// path it touched shows its state from before the multi again.
func (p *Prepper) rollback(mark int) {
	for i := len(p.undo) - 1; i >= 0; i-- {
		u := p.undo[i]
		if u.prev == nil {
			delete(p.byPath, u.path)
		} else {
			p.byPath[u.path] = u.prev
		}
	}
	clear(p.changes[mark:])
	p.changes = p.changes[:mark]
	clear(p.undo)
	p.undo = p.undo[:0]
}
