package txn

import (
	"fmt"
	"slices"

	"github.com/zoohq/zoo/internal/acl"
	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/internal/tree"
)

// createMode is what a create's flags ask for (CreateMode).
type createMode struct {
	ephemeral, sequential, container, ttl bool
}

// parseMode decodes create flags; ok is false for a value CreateMode does
// not know (CreateMode.fromFlag throws BadArguments).
func parseMode(flags int32) (m createMode, ok bool) {
	switch flags {
	case jute.FlagPersistent:
	case jute.FlagEphemeral:
		m.ephemeral = true
	case jute.FlagPersistentSequential:
		m.sequential = true
	case jute.FlagEphemeralSequential:
		m.ephemeral, m.sequential = true, true
	case jute.FlagContainer:
		m.container = true
	case jute.FlagPersistentWithTTL:
		m.ttl = true
	case jute.FlagPersistentSequentialWithTTL:
		m.ttl, m.sequential = true, true
	default:
		return m, false
	}
	return m, true
}

// validateCreate makes PrepRequestProcessor.validateCreateRequest's checks:
// TTL nodes need extended types, a TTL must be in (0, MaxTTL] for a TTL
// mode and absent (negative) otherwise, and the session must be live.
// Apache accepts a createTTL whose flags are not a TTL mode if the TTL is
// negative, and then dies applying it; Zoo refuses it with BadArguments.
func (p *Prepper) validateCreate(req *Request, op jute.Op, m createMode, ttl int64) error {
	if m.ttl && !p.cfg.ExtendedTypes {
		return jute.Unimplemented
	}
	switch {
	case m.ttl && (ttl <= 0 || ttl > tree.MaxTTL):
		return jute.BadArguments
	case !m.ttl && (ttl >= 0 || op == jute.OpCreateTTL):
		return jute.BadArguments
	}
	return p.checkSession(req.SessionID)
}

// seqSuffix formats a sequential node's suffix from the parent's stored
// cversion as Java's String.format("%010d") does: ten characters, zero
// padded after the sign ("0000000007", "-000000005", "-2147483648").
func seqSuffix(cversion int32) string { return fmt.Sprintf("%010d", cversion) }

// prepCreate preps create, create2, createContainer and createTTL in
// PrepRequestProcessor.pRequest2TxnCreate's order. The txn type decides
// the kind of node, as in Apache's apply: a create with the container
// flag makes a persistent node, a createContainer always a container.
func (p *Prepper) prepCreate(req *Request, op jute.Op, path string, data []byte, acls []jute.ACL, flags int32, ttl int64) (jute.Record, error) {
	m, ok := parseMode(flags)
	if !ok {
		return nil, jute.BadArguments
	}
	if err := p.validateCreate(req, op, m, ttl); err != nil {
		return nil, err
	}
	parentPath, err := parentForCreate(path)
	if err != nil {
		return nil, err
	}
	fixed, err := acl.Fixup(acls, req.Auth)
	if err != nil {
		return nil, err
	}
	parent, err := p.mustRecord(parentPath)
	if err != nil {
		return nil, err
	}
	if !acl.Check(parent.acl, jute.PermCreate, req.Auth) {
		return nil, jute.NoAuth
	}
	if m.sequential {
		path += seqSuffix(parent.stat.Cversion)
	}
	if err := tree.ValidatePath(path); err != nil {
		return nil, err
	}
	if _, exists := p.record(path); exists {
		return nil, jute.NodeExists
	}
	if tree.KindOf(parent.stat.EphemeralOwner) == tree.Ephemeral {
		return nil, jute.NoChildrenForEphemerals
	}
	if err := p.checkQuota(path, int64(len(data)), 1); err != nil {
		return nil, err
	}
	newCversion := parent.stat.Cversion + 1
	body, owner := createBody(op, m, path, data, fixed, newCversion, ttl, req.SessionID)
	p.found = parent.ref
	parent.stat.Cversion = newCversion
	parent.children++
	p.add(parent)
	p.add(change{path: path, stat: tree.StatPersisted{EphemeralOwner: owner, Mtime: req.Time}, acl: fixed, data: data})
	return body, nil
}

// createBody builds the txn of a create and the owner apply will give the
// node.
func createBody(op jute.Op, m createMode, path string, data []byte, acls []jute.ACL, cv int32, ttl, session int64) (jute.Record, int64) {
	switch op {
	case jute.OpCreateContainer:
		return &CreateContainerTxn{Path: path, Data: data, ACL: acls, ParentCVersion: cv}, tree.ContainerOwner
	case jute.OpCreateTTL:
		return &CreateTTLTxn{Path: path, Data: data, ACL: acls, ParentCVersion: cv, TTL: ttl}, tree.TTLOwner(ttl)
	}
	owner := int64(0)
	if m.ephemeral {
		owner = session
	}
	return &CreateTxn{Path: path, Data: data, ACL: acls, Ephemeral: m.ephemeral, ParentCVersion: cv}, owner
}

// prepDelete follows pRequest2Txn's delete: the DELETE permission is
// checked on the parent, and the version before the children.
func (p *Prepper) prepDelete(req *Request, path string, version int32) (jute.Record, error) {
	if err := p.checkSession(req.SessionID); err != nil {
		return nil, err
	}
	parentPath, err := parentForDelete(path)
	if err != nil {
		return nil, err
	}
	parent, err := p.mustRecord(parentPath)
	if err != nil {
		return nil, err
	}
	if !acl.Check(parent.acl, jute.PermDelete, req.Auth) {
		return nil, jute.NoAuth
	}
	node, err := p.mustRecord(path)
	if err != nil {
		return nil, err
	}
	if _, err := checkVersion(node.stat.Version, version); err != nil {
		return nil, err
	}
	if node.children > 0 {
		return nil, jute.NotEmpty
	}
	p.addDelete(parent, path)
	p.found = node.ref
	return &DeleteTxn{Path: path}, nil
}

// addDelete records that path will be gone.
func (p *Prepper) addDelete(parent change, path string) {
	parent.children--
	p.add(parent)
	p.add(change{path: path, gone: true})
}

// prepDeleteContainer preps the sweeper's delete of an empty container or
// expired TTL node. It refuses (BadVersion) a node that is neither, which
// may have replaced the candidate since the sweep; Apache refuses only
// ephemerals and would delete a persistent node there.
func (p *Prepper) prepDeleteContainer(path string) (jute.Record, error) {
	parentPath, err := parentForDelete(path)
	if err != nil {
		return nil, err
	}
	node, err := p.mustRecord(path)
	if err != nil {
		return nil, err
	}
	if node.children > 0 {
		return nil, jute.NotEmpty
	}
	if k := tree.KindOf(node.stat.EphemeralOwner); k != tree.Container && k != tree.TTL {
		return nil, jute.BadVersion
	}
	parent, err := p.mustRecord(parentPath)
	if err != nil {
		return nil, err
	}
	p.addDelete(parent, path)
	p.found = node.ref
	return &DeleteTxn{Path: path}, nil
}

// prepSetData checks the quota before the version, as Apache does.
func (p *Prepper) prepSetData(req *Request, path string, data []byte, version int32) (jute.Record, error) {
	if err := p.checkSession(req.SessionID); err != nil {
		return nil, err
	}
	if err := tree.ValidatePath(path); err != nil {
		return nil, err
	}
	node, err := p.mustRecord(path)
	if err != nil {
		return nil, err
	}
	if !acl.Check(node.acl, jute.PermWrite, req.Auth) {
		return nil, jute.NoAuth
	}
	if err := p.checkQuota(path, int64(len(data)-len(node.data)), 0); err != nil {
		return nil, err
	}
	next, err := checkVersion(node.stat.Version, version)
	if err != nil {
		return nil, err
	}
	node.stat.Version, node.stat.Mtime, node.data = next, req.Time, data
	p.add(node)
	p.found = node.ref
	return &SetDataTxn{Path: path, Data: data, Version: next}, nil
}

func (p *Prepper) prepSetACL(req *Request, path string, acls []jute.ACL, version int32) (jute.Record, error) {
	if err := p.checkSession(req.SessionID); err != nil {
		return nil, err
	}
	if err := tree.ValidatePath(path); err != nil {
		return nil, err
	}
	fixed, err := acl.Fixup(acls, req.Auth)
	if err != nil {
		return nil, err
	}
	node, err := p.mustRecord(path)
	if err != nil {
		return nil, err
	}
	if !acl.Check(node.acl, jute.PermAdmin, req.Auth) {
		return nil, jute.NoAuth
	}
	next, err := checkVersion(node.stat.Aversion, version)
	if err != nil {
		return nil, err
	}
	node.stat.Aversion, node.acl = next, fixed
	p.add(node)
	return &SetACLTxn{Path: path, ACL: fixed, Version: next}, nil
}

// prepCheck needs READ on the node.
func (p *Prepper) prepCheck(req *Request, path string, version int32) (jute.Record, error) {
	if err := p.checkSession(req.SessionID); err != nil {
		return nil, err
	}
	if err := tree.ValidatePath(path); err != nil {
		return nil, err
	}
	node, err := p.mustRecord(path)
	if err != nil {
		return nil, err
	}
	if !acl.Check(node.acl, jute.PermRead, req.Auth) {
		return nil, jute.NoAuth
	}
	next, err := checkVersion(node.stat.Version, version)
	if err != nil {
		return nil, err
	}
	return &CheckVersionTxn{Path: path, Version: next}, nil
}

// checkQuota asks the committed tree, as Apache does, whether the change
// passes a quota: a hard limit refuses it when quotas are enforced, and
// the rest goes to the warning hook.
func (p *Prepper) checkQuota(path string, bytesDiff, countDiff int64) error {
	if !p.cfg.EnforceQuota && p.cfg.QuotaWarning == nil {
		return nil
	}
	for _, o := range p.state.Tree.CheckQuota(path, bytesDiff, countDiff) {
		if o.Hard && p.cfg.EnforceQuota {
			return jute.QuotaExceeded
		}
		if p.cfg.QuotaWarning != nil {
			p.cfg.QuotaWarning(o)
		}
	}
	return nil
}

func (p *Prepper) prepCreateSession(req *Request, r *CreateSession) jute.Record {
	p.addSession(req.SessionID, false)
	return &CreateSessionTxn{TimeoutMs: r.TimeoutMs, Password: r.Password}
}

func (p *Prepper) addSession(id int64, closing bool) {
	c := &sessionChange{seq: p.seq, id: id, closing: closing}
	p.sessOps = append(p.sessOps, c)
	p.sess[id] = c
}

// prepCloseSession lists the session's ephemerals in the future state: the
// committed ones, minus those outstanding txns delete, plus those they
// create (pRequest2Txn's closeSession). The session is closing from now
// on: its later requests fail with SessionExpired. Apache does not check
// that the session exists: the expirer sends this for sessions it knows.
func (p *Prepper) prepCloseSession(id int64) jute.Record {
	set := make(map[string]bool)
	for _, path := range p.state.Tree.Ephemerals(id) {
		set[path] = true
	}
	for _, c := range p.changes {
		switch {
		case c.gone:
			delete(set, c.path)
		case c.stat.EphemeralOwner == id:
			set[c.path] = true
		}
	}
	paths := make([]string, 0, len(set))
	for path := range set {
		paths = append(paths, path)
	}
	slices.Sort(paths)
	for _, path := range paths {
		parentPath, _, _ := tree.Split(path)
		if parent, ok := p.record(parentPath); ok {
			p.addDelete(parent, path)
		}
	}
	p.addSession(id, true)
	return &CloseSessionTxn{Paths: paths}
}
