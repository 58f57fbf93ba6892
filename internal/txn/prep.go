package txn

import (
	"errors"
	"strings"

	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/internal/tree"
)

// Request is a write request to prep.
//
// Record by Op: create, create2, createContainer *jute.CreateRequest;
// createTTL *jute.CreateTTLRequest; delete, check *jute.PathVersion;
// setData *jute.SetDataRequest; setACL *jute.SetACLRequest; multi
// *jute.MultiRequest; reconfig *jute.ReconfigRequest (refused). Internal
// ops: createSession *CreateSession (SessionID is the new session);
// closeSession nil; deleteContainer *jute.PathRequest (from the container
// and TTL sweeper, with no session).
type Request struct {
	SessionID int64
	Cxid      int32
	Op        jute.Op
	Record    jute.Record
	Auth      []jute.Id // the session's ids, for ACL checks
	Time      int64     // ms since the epoch; becomes the txn's time
	// Server is the id of the server the request's client is attached
	// to; 0 (standalone, internal requests) skips the owner check.
	Server uint64
}

// PrepConfig holds the server settings prep depends on.
type PrepConfig struct {
	// ExtendedTypes allows TTL nodes (zoo.cfg extendedTypesEnabled);
	// without it createTTL fails with Unimplemented.
	ExtendedTypes bool
	// ReconfigEnabled is zoo.cfg's reconfigEnabled: without it reconfig
	// fails with ReconfigDisabled, as in Apache.
	ReconfigEnabled bool
	// OneParticipant is zoo.cfg's standaloneEnabled=false: a reconfig may
	// then leave a single participant, as Apache's does; otherwise it
	// must leave two (BadArguments).
	OneParticipant bool
	// Reconfig is the ensemble, for reconfig; nil (standalone) answers
	// Unimplemented, as Apache's standalone server does.
	Reconfig Reconfigurer
	// EnforceQuota refuses a create or setData that would pass a hard
	// quota limit with QuotaExceeded (Apache's zookeeper.enforceQuota,
	// false by default; Apache 3.8 then does not even check).
	EnforceQuota bool
	// QuotaWarning, if set, is told of every quota limit a change passes
	// and that is not refused, for the caller to log (Apache logs them,
	// rate limited). Quotas are checked when EnforceQuota is set or
	// QuotaWarning is not nil.
	QuotaWarning func(tree.QuotaOverrun)
}

// Prepper turns requests into txns against the future state: the committed
// state plus the changes of the txns it prepped that are not applied yet.
// It is not safe for concurrent use, and it reads the State that Apply
// writes: run both on one goroutine or under one lock.
type Prepper struct {
	cfg   PrepConfig
	state *State
	seq   uint64

	changes []*change          // outstanding, in prep order
	byPath  map[string]*change // the latest change of each path
	// spare holds applied changes, zeroed, for add to reuse: a write
	// records one to four, and with them reused prep allocates little
	// more than the txn (issue 17: every byte allocated per write costs
	// the collector a share of a mark of the whole tree).
	spare   []*change
	sessOps []*sessionChange // outstanding createSession/closeSession
	sess    map[int64]*sessionChange

	// During a multi: how to undo its changes if an op fails.
	inMulti bool
	undo    []undoEntry

	// found is what the op being prepped found in the tree for Apply to
	// reuse (Txn.ref).
	found tree.Ref
}

// change is Apache's ChangeRecord: the future state of one node. Prep
// reads only what its checks need: versions, cversion, owner, children,
// ACL and data (for quotas).
type change struct {
	seq      uint64
	path     string
	gone     bool // deleted
	stat     tree.StatPersisted
	children int32
	acl      []jute.ACL
	data     []byte
	ref      tree.Ref // the node in the tree when the change was first read from it
}

type sessionChange struct {
	seq     uint64
	id      int64
	closing bool
	owner   int64 // for a setOwner: the server the session moved to
}

type undoEntry struct {
	path string
	prev *change
}

// NewPrepper returns a Prepper over s.
func NewPrepper(s *State, cfg PrepConfig) *Prepper {
	return &Prepper{
		cfg:    cfg,
		state:  s,
		byPath: make(map[string]*change),
		sess:   make(map[int64]*sessionChange),
	}
}

// Prep turns req into a txn. It never fails: a request that cannot be
// done becomes an ErrorTxn with Apache's error code, found by Apache's
// checks in Apache's order; a multi with a failing op becomes a MultiTxn
// whose ops up to the failing one keep their txns, the failing one is an
// ErrorTxn with its code and those after it ErrorTxn RuntimeInconsistency
// (PrepRequestProcessor.pRequestHelper). The txn's changes stay visible to
// later Preps until Applied is called with it (or a later txn) or Reset.
func (p *Prepper) Prep(req Request) *Txn {
	p.seq++
	t := &Txn{SessionID: req.SessionID, Cxid: req.Cxid, Time: req.Time, Type: req.Op, seq: p.seq}
	p.found = tree.Ref{}
	var err error
	switch {
	case p.moved(&req):
		// Ref: Apache's PrepRequestProcessor checkSession: the session's
		// client now talks to another server; this request came through
		// a connection it left.
		err = jute.SessionMoved
	case req.Op == jute.OpMulti:
		t.Body, err = p.prepMulti(&req)
	default:
		t.Body, err = p.prepOp(&req, req.Op, req.Record)
		t.ref = p.found
	}
	if err != nil {
		t.Type, t.Body = jute.OpError, &ErrorTxn{Err: code(err)}
	}
	return t
}

// moved reports whether req comes through a server other than the one
// that owns its session. Session lifecycle requests are exempt: closing
// is allowed from anywhere (expiry comes from the leader).
func (p *Prepper) moved(req *Request) bool {
	switch req.Op {
	case jute.OpCreateSession, jute.OpCloseSession, OpSetOwner:
		return false
	}
	if req.Server == 0 || p.checkSession(req.SessionID) != nil {
		return false // prep reports an expired session as such
	}
	owner := p.state.Sessions[req.SessionID].Owner
	if c, ok := p.sess[req.SessionID]; ok && c.owner != 0 {
		owner = c.owner // a move prepped, not yet applied
	}
	return owner != 0 && uint64(owner) != req.Server
}

// Applied tells the Prepper that t, and every txn it prepped before t, has
// been applied to the state, so their changes are in the tree and need not
// be kept. t must come from this Prepper's Prep; a decoded txn is
// ignored.
func (p *Prepper) Applied(t *Txn) {
	if t == nil || t.seq == 0 {
		return
	}
	i := 0
	for ; i < len(p.changes) && p.changes[i].seq <= t.seq; i++ {
		c := p.changes[i]
		if p.byPath[c.path] == c {
			delete(p.byPath, c.path)
		}
		p.changes[i] = nil
		if len(p.spare) < maxSpareChanges {
			*c = change{}
			p.spare = append(p.spare, c)
		}
	}
	if i == len(p.changes) {
		// All applied: start the slice over where it is, rather than
		// moving it along and reallocating when it runs out.
		p.changes = p.changes[:0]
	} else {
		p.changes = p.changes[i:]
	}
	i = 0
	for ; i < len(p.sessOps) && p.sessOps[i].seq <= t.seq; i++ {
		c := p.sessOps[i]
		if p.sess[c.id] == c {
			delete(p.sess, c.id)
		}
		p.sessOps[i] = nil
	}
	p.sessOps = p.sessOps[i:]
}

// Reset forgets every outstanding change, for when proposals were dropped
// and the txns will never be applied (DESIGN decision 5). Preps after it
// see the committed state only.
func (p *Prepper) Reset() {
	clear(p.changes)
	p.changes = p.changes[:0]
	clear(p.byPath)
	clear(p.sessOps)
	p.sessOps = p.sessOps[:0]
	clear(p.sess)
}

// Outstanding returns the number of node changes prepped and not yet
// applied.
func (p *Prepper) Outstanding() int { return len(p.changes) }

// prepOp preps one op of any kind but multi. It returns the txn body, or
// the error for an ErrorTxn. It records changes only if it succeeds.
func (p *Prepper) prepOp(req *Request, op jute.Op, rec jute.Record) (jute.Record, error) {
	switch op {
	case jute.OpCreate, jute.OpCreate2, jute.OpCreateContainer:
		if r, ok := rec.(*jute.CreateRequest); ok {
			return p.prepCreate(req, op, r.Path, r.Data, r.ACL, r.Flags, -1)
		}
	case jute.OpCreateTTL:
		if r, ok := rec.(*jute.CreateTTLRequest); ok {
			return p.prepCreate(req, op, r.Path, r.Data, r.ACL, r.Flags, r.TTL)
		}
	case jute.OpDelete:
		if r, ok := rec.(*jute.PathVersion); ok {
			return p.prepDelete(req, r.Path, r.Version)
		}
	case jute.OpDeleteContainer:
		if r, ok := rec.(*jute.PathRequest); ok {
			return p.prepDeleteContainer(r.Path)
		}
	case jute.OpSetData:
		if r, ok := rec.(*jute.SetDataRequest); ok {
			return p.prepSetData(req, r.Path, r.Data, r.Version)
		}
	case jute.OpSetACL:
		if r, ok := rec.(*jute.SetACLRequest); ok {
			return p.prepSetACL(req, r.Path, r.ACL, r.Version)
		}
	case jute.OpCheck:
		if r, ok := rec.(*jute.PathVersion); ok {
			return p.prepCheck(req, r.Path, r.Version)
		}
	case jute.OpCreateSession:
		if r, ok := rec.(*CreateSession); ok {
			return p.prepCreateSession(req, r), nil
		}
	case jute.OpCloseSession:
		return p.prepCloseSession(req.SessionID), nil
	case OpSetOwner:
		if err := p.checkSession(req.SessionID); err != nil {
			return nil, err
		}
		c := &sessionChange{seq: p.seq, id: req.SessionID, owner: int64(req.Server)}
		p.sessOps = append(p.sessOps, c)
		p.sess[req.SessionID] = c
		return &SetOwnerTxn{Owner: int64(req.Server)}, nil
	case jute.OpReconfig:
		if r, ok := rec.(*jute.ReconfigRequest); ok {
			return p.prepReconfig(req, r)
		}
	case OpRestore:
		if req.SessionID != 0 {
			return nil, jute.BadArguments // only the server itself restores
		}
		return prepRestore(rec)
	default:
		return nil, jute.Unimplemented
	}
	// The record does not fit the opcode: Apache fails to deserialize it.
	return nil, jute.MarshallingError
}

// code returns the ZooKeeper code an error carries, or SystemError.
func code(err error) jute.Code {
	if err == nil {
		return jute.OK
	}
	var c jute.Code
	if errors.As(err, &c) {
		return c
	}
	return jute.SystemError
}

// record returns the future state of path: the latest outstanding change,
// else the committed node (PrepRequestProcessor.getRecordForPath). ok is
// false if the node does not exist (or will have been deleted).
func (p *Prepper) record(path string) (change, bool) {
	if c, ok := p.byPath[path]; ok {
		return *c, !c.gone
	}
	info, ok := p.state.Tree.Lookup(path)
	if !ok {
		return change{}, false
	}
	return change{path: path, stat: info.Stat, children: info.NumChildren, acl: info.ACL, data: info.Data, ref: info.Ref}, true
}

// mustRecord is record failing with NoNode.
func (p *Prepper) mustRecord(path string) (change, error) {
	c, ok := p.record(path)
	if !ok {
		return change{}, jute.NoNode
	}
	return c, nil
}

// maxSpareChanges bounds Prepper.spare, so that a burst of outstanding
// changes is not kept for good.
const maxSpareChanges = 1024

// add records a change as the latest state of its path.
func (p *Prepper) add(c change) {
	c.seq = p.seq
	var cp *change
	if n := len(p.spare); n > 0 {
		cp = p.spare[n-1]
		p.spare = p.spare[:n-1]
	} else {
		cp = new(change) // not &c, which would move c to the heap on every call
	}
	*cp = c
	if p.inMulti {
		p.undo = append(p.undo, undoEntry{path: c.path, prev: p.byPath[c.path]})
	}
	p.changes = append(p.changes, cp)
	p.byPath[c.path] = cp
}

// checkSession fails with SessionExpired unless the session exists, or is
// being created, and is not closing (SessionTracker.checkSession).
func (p *Prepper) checkSession(id int64) error {
	if c, ok := p.sess[id]; ok {
		if c.closing {
			return jute.SessionExpired
		}
		return nil
	}
	if _, ok := p.state.Sessions[id]; !ok {
		return jute.SessionExpired
	}
	return nil
}

// checkVersion checks an expected version (-1 matches any) and returns the
// next one (PrepRequestProcessor.checkAndIncVersion).
func checkVersion(current, expected int32) (int32, error) {
	if expected != -1 && expected != current {
		return 0, jute.BadVersion
	}
	return current + 1, nil
}

// parentForCreate returns the parent of a path to create, failing with
// BadArguments if there is no slash or a null character
// (validatePathForCreate). The rest of the path is validated after the
// parent lookup, so "/a//b" under a missing "/a/" is NoNode, as in Apache.
func parentForCreate(path string) (string, error) {
	if strings.IndexByte(path, 0) >= 0 {
		return "", jute.BadArguments
	}
	parent, _, ok := tree.Split(path)
	if !ok {
		return "", jute.BadArguments
	}
	return parent, nil
}

// parentForDelete is parentForCreate that also refuses the system nodes
// (getParentPathAndValidate).
func parentForDelete(path string) (string, error) {
	if tree.IsSpecialPath(path) {
		return "", jute.BadArguments
	}
	return parentForCreate(path)
}
