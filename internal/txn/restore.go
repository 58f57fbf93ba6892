package txn

import (
	"fmt"

	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/internal/tree"
)

// OpRestore is Zoo's own txn type (no client sends it): the AdminServer's
// restore command. Its body carries a whole state, every znode and
// session, and applying it replaces the state with that one. Going
// through the log, it replaces it on every member at the same point of
// the log, so the members stay identical, and a restart replays it like
// any txn (applying it twice leaves the same state as once). Apache's
// restore replaces one server's database the same way
// (ZooKeeperServer.restoreFromSnapshot).
const OpRestore jute.Op = -21

// RestoreTxn is the body of restore txns: the nodes, parents first, as a
// snapshot lists them, and the sessions.
type RestoreTxn struct {
	Nodes    []RestoreNode
	Sessions []RestoreSession
}

// RestoreNode is one znode of a restore, with its stat as stored.
type RestoreNode struct {
	Path string
	Data []byte
	ACL  []jute.ACL
	Stat tree.StatPersisted
}

// RestoreSession is one session of a restore.
type RestoreSession struct {
	ID        int64
	TimeoutMs int32
	Password  []byte
}

// Encode writes the nodes and the sessions as two vectors.
func (x *RestoreTxn) Encode(w *jute.Writer) {
	w.Int(int32(len(x.Nodes)))
	for i := range x.Nodes {
		n := &x.Nodes[i]
		w.String(n.Path)
		w.Buffer(n.Data)
		jute.EncodeACLs(w, n.ACL)
		s := &n.Stat
		w.Long(s.Czxid)
		w.Long(s.Mzxid)
		w.Long(s.Ctime)
		w.Long(s.Mtime)
		w.Int(s.Version)
		w.Int(s.Cversion)
		w.Int(s.Aversion)
		w.Long(s.EphemeralOwner)
		w.Long(s.Pzxid)
	}
	w.Int(int32(len(x.Sessions)))
	for _, s := range x.Sessions {
		w.Long(s.ID)
		w.Int(s.TimeoutMs)
		w.Buffer(s.Password)
	}
}

// Decode reads what Encode writes.
func (x *RestoreTxn) Decode(r *jute.Reader) {
	// A node takes at least 4+4+4+64 bytes, a session 8+4+4.
	n := r.VectorLen(76)
	x.Nodes = make([]RestoreNode, 0, max(n, 0))
	for i := 0; i < n && r.Err() == nil; i++ {
		nd := RestoreNode{Path: r.String(), Data: r.OwnedBuffer(), ACL: jute.DecodeACLs(r)}
		nd.Stat = tree.StatPersisted{Czxid: r.Long(), Mzxid: r.Long(), Ctime: r.Long(), Mtime: r.Long(),
			Version: r.Int(), Cversion: r.Int(), Aversion: r.Int(), EphemeralOwner: r.Long(), Pzxid: r.Long()}
		x.Nodes = append(x.Nodes, nd)
	}
	n = r.VectorLen(16)
	x.Sessions = make([]RestoreSession, 0, max(n, 0))
	for i := 0; i < n && r.Err() == nil; i++ {
		x.Sessions = append(x.Sessions, RestoreSession{ID: r.Long(), TimeoutMs: r.Int(), Password: r.OwnedBuffer()})
	}
}

// Build makes the state a restore txn describes. It fails, leaving
// nothing changed, on a node whose path is invalid or whose parent comes
// after it or not at all.
func (x *RestoreTxn) Build() (*State, error) {
	st := NewState(tree.New())
	for i := range x.Nodes {
		n := &x.Nodes[i]
		if err := st.Tree.Restore(n.Path, n.Data, n.ACL, n.Stat); err != nil {
			return nil, fmt.Errorf("txn: restore: node %.200q: %w", n.Path, err)
		}
	}
	if err := st.Tree.Restored(); err != nil {
		return nil, fmt.Errorf("txn: restore: %w", err)
	}
	for _, s := range x.Sessions {
		st.Sessions[s.ID] = SessionInfo{TimeoutMs: s.TimeoutMs, Password: s.Password}
	}
	return st, nil
}

// applyRestore replaces s with the state t carries. A body that does not
// build (which prep never lets through) leaves s alone and fails with
// BadArguments on every member alike.
func applyRestore(s *State, t *Txn, r *Result) {
	x, ok := t.Body.(*RestoreTxn)
	if !ok {
		r.Err = jute.MarshallingError
		return
	}
	st, err := x.Build()
	if err != nil {
		r.Err = jute.BadArguments
		return
	}
	// The membership stays the ensemble's, not the snapshot's, as
	// Apache's /zookeeper/config comes from the running configuration.
	if info, ok := s.Tree.Lookup(tree.ConfigPath); ok {
		_ = st.Tree.Restore(tree.ConfigPath, info.Data, info.ACL, info.Stat)
	}
	// An Apache snapshot keeps no passwords (Apache derives them from the
	// id): a restored session that is live here keeps its password, so
	// its client reconnects into it.
	for id, info := range st.Sessions {
		if live, ok := s.Sessions[id]; ok {
			info.Password = live.Password
			st.Sessions[id] = info
		}
	}
	*s = *st // in place: the prepper and the replica hold this pointer
}

// prepRestore checks that a restore builds before it goes into the log.
func prepRestore(rec jute.Record) (jute.Record, error) {
	x, ok := rec.(*RestoreTxn)
	if !ok {
		return nil, jute.MarshallingError
	}
	if _, err := x.Build(); err != nil {
		return nil, jute.BadArguments
	}
	return x, nil
}
