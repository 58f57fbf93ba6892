package txn

import (
	"errors"
	"fmt"

	"github.com/zoohq/zoo/internal/acl"
	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/internal/member"
	"github.com/zoohq/zoo/internal/tree"
)

// Reconfigurer is what prep needs of the ensemble to prep a reconfig
// (ZooKeeper 3.5+ dynamic reconfiguration): whether a membership change
// is still being committed, and which participants are in sync with the
// leader. A standalone server has none.
type Reconfigurer interface {
	// InProgress reports a membership change proposed and not yet
	// applied (ReconfigInProgress).
	InProgress() bool
	// Synced returns the participants whose logs keep up with the
	// leader's, the leader among them (for NewConfigNoQuorum).
	Synced() []int64
}

// SetReconfig gives prep the ensemble, once it exists (the replica is built
// over the Prepper). Call it before the first Prep.
func (p *Prepper) SetReconfig(rc Reconfigurer) { p.cfg.Reconfig = rc }

// ReconfigTxn is the body of reconfig txns: the new membership in
// /zookeeper/config's text form, version 0; apply writes it with the txn's
// zxid as the version, as Apache does.
type ReconfigTxn struct {
	Membership string
}

func (x *ReconfigTxn) Encode(w *jute.Writer) { w.String(x.Membership) }
func (x *ReconfigTxn) Decode(r *jute.Reader) { x.Membership = r.String() }

// prepReconfig checks a reconfig in Apache's order (PrepRequestProcessor,
// case OpCode.reconfig): enabled, not standalone, none in progress, the
// expected version, a valid change (BadArguments), a synced quorum of the
// new members (NewConfigNoQuorum), and last WRITE permission on
// /zookeeper/config (the super user passes). So a client without the
// right gets BadArguments for a malformed request (kazoo's
// test_bad_input) and NoAuth for one Apache would take (test_no_super_auth).
// Arguments that only Zoo refuses (member.ErrBeyondApache: a server id
// above 255, say) are answered after the permission check, as Apache
// would have gone on to it.
func (p *Prepper) prepReconfig(req *Request, r *jute.ReconfigRequest) (jute.Record, error) {
	rc := p.cfg.Reconfig
	switch {
	case !p.cfg.ReconfigEnabled:
		return nil, jute.ReconfigDisabled
	case rc == nil:
		return nil, jute.Unimplemented
	case rc.InProgress():
		return nil, jute.ReconfigInProgress
	}
	info, ok := p.state.Tree.Lookup(tree.ConfigPath)
	if !ok {
		return nil, jute.SystemError
	}
	cur, err := member.Parse(string(info.Data))
	if err != nil {
		return nil, jute.SystemError
	}
	if r.CurConfigID != -1 && r.CurConfigID != cur.Version {
		return nil, jute.BadVersion
	}
	next, err := member.Options{StandaloneEnabled: !p.cfg.OneParticipant}.Reconfig(cur, r.JoiningServers, r.LeavingServers, r.NewMembers)
	if err == nil {
		err = member.RequireQuorum(next, rc.Synced())
	}
	if err != nil && !errors.Is(err, member.ErrBeyondApache) {
		return nil, err
	}
	if !acl.Check(info.ACL, jute.PermWrite, req.Auth) {
		return nil, jute.NoAuth
	}
	if err != nil {
		return nil, err // only Zoo refuses it: after the permission check
	}
	next.Version = 0
	return &ReconfigTxn{Membership: next.String()}, nil
}

// applyReconfig writes the new membership to /zookeeper/config with the
// txn's zxid as its version, and reports the node's data and stat for the
// reply (a GetDataResponse, as Apache answers reconfig).
func applyReconfig(s *State, t *Txn, zxid int64, r *Result) {
	b, ok := t.Body.(*ReconfigTxn)
	if !ok {
		r.Err = jute.MarshallingError
		return
	}
	m, err := member.Parse(b.Membership)
	if err != nil {
		r.Err = jute.MarshallingError
		return
	}
	m.Version = zxid
	data := []byte(m.String())
	st, err := s.Tree.SetData(tree.ConfigPath, data, -1, zxid, t.Time)
	if err != nil {
		r.Err = jute.SystemError
		return
	}
	r.Path, r.Stat, r.Data = tree.ConfigPath, st, data
	r.Triggers = append(r.Triggers, Trigger{Path: tree.ConfigPath, Type: jute.EventNodeDataChanged})
}

// String describes a reconfig txn for the log dumps.
func (x *ReconfigTxn) String() string { return fmt.Sprintf("membership=%q", x.Membership) }
