package txn

import (
	"errors"
	"fmt"
	"sync"

	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/internal/tree"
)

// FormatVersion is the first byte of an encoded Txn. A change to the
// encoding takes a new version, so that a server never misreads a log
// written by another release.
const FormatVersion = 1

// Errors of Unmarshal. Decoding errors of the jute layer (jute.ErrShort,
// jute.ErrBadLength) come wrapped.
var (
	// ErrVersion means the txn was written in a format this build does not
	// know.
	ErrVersion = errors.New("txn: unknown format version")
	// ErrType means the txn's type (or the type of an op of its multi) has
	// no body this build knows.
	ErrType = errors.New("txn: unknown txn type")
)

// Txn is one log entry: a header and a body. It is what prep produces and
// apply consumes.
type Txn struct {
	SessionID int64 // the session the request came from (clientId)
	Cxid      int32 // the request's xid
	Time      int64 // ms since the epoch, fixed by prep
	Type      jute.Op
	Body      jute.Record // the *...Txn type that Type calls for

	seq uint64 // the Prepper's number for this txn; 0 if decoded
	// ref is the node prep found in the tree for Apply to reuse (see
	// tree.Ref): the node a setData or delete changes, the parent of a
	// create's node. It is a hint of this process, never encoded: a
	// decoded txn, as a follower applies it, has none and Apply looks
	// the path up. A multi's ops have none.
	ref tree.Ref
}

// Marshal encodes t in the log format described in the package doc.
func (t *Txn) Marshal() []byte {
	return t.AppendMarshal(make([]byte, 0, 64))
}

// AppendMarshal appends the encoding of t to b.
func (t *Txn) AppendMarshal(b []byte) []byte {
	w := jute.Writer{B: b}
	t.MarshalTo(&w)
	return w.B
}

// MarshalTo appends the encoding of t to w.B. A caller that keeps w
// encodes without allocating: AppendMarshal's writer escapes to the heap
// through the body's Encode, once per txn.
func (t *Txn) MarshalTo(w *jute.Writer) {
	w.B = append(w.B, FormatVersion)
	w.Long(t.SessionID)
	w.Int(t.Cxid)
	w.Long(t.Time)
	w.Int(int32(t.Type))
	if t.Body != nil {
		t.Body.Encode(w)
	}
}

// Unmarshal decodes a txn. It fails on an unknown format version or type,
// a short or malformed body, or bytes left over. The result never aliases
// b.
func Unmarshal(b []byte) (*Txn, error) { return unmarshal(b, &readers) }

// UnmarshalShared is Unmarshal for a caller that leaves b unchanged for as
// long as it uses the txn: the data of a create or a setData aliases b
// instead of being copied. The replica applies committed entries, which
// nothing changes, this way: applying copies the data into the tree, so
// a copy made in decoding was a second one (10% of a follower's CPU at 0%
// reads went to decoding txns).
func UnmarshalShared(b []byte) (*Txn, error) { return unmarshal(b, &aliasReaders) }

// The Readers unmarshal decodes with, one pool per mode (Reset keeps a
// Reader's). A body's Decode takes its Reader through an interface, so a
// Reader made per txn escaped to the heap: 3% of a follower's CPU at 0%
// reads, where every txn applied is decoded (issue 14).
var (
	readers      = sync.Pool{New: func() any { return jute.NewReader(nil) }}
	aliasReaders = sync.Pool{New: func() any { return jute.NewAliasReader(nil) }}
)

func unmarshal(b []byte, pool *sync.Pool) (*Txn, error) {
	if len(b) == 0 {
		return nil, fmt.Errorf("txn: empty entry: %w", jute.ErrShort)
	}
	if b[0] != FormatVersion {
		return nil, fmt.Errorf("%w %d", ErrVersion, b[0])
	}
	r := pool.Get().(*jute.Reader)
	r.Reset(b[1:])
	t, err := decode(r)
	r.Reset(nil) // the pool keeps no entry alive
	pool.Put(r)
	return t, err
}

// decode reads a txn after its format version.
func decode(r *jute.Reader) (*Txn, error) {
	sid, cxid, tm, op := r.Long(), r.Int(), r.Long(), jute.Op(r.Int())
	if err := r.Err(); err != nil {
		return nil, fmt.Errorf("txn: header: %w", err)
	}
	t := newTxn(op)
	if t == nil {
		return nil, fmt.Errorf("%w %v", ErrType, op)
	}
	t.SessionID, t.Cxid, t.Time, t.Type = sid, cxid, tm, op
	t.Body.Decode(r)
	if err := r.Err(); err != nil {
		return nil, fmt.Errorf("txn: %v body: %w", t.Type, err)
	}
	if r.Len() != 0 {
		return nil, fmt.Errorf("txn: %d bytes after the %v body: %w", r.Len(), t.Type, jute.ErrBadLength)
	}
	return t, nil
}

// newTxn returns a txn of type op with an empty body, or nil for an
// unknown op. The writes a follower applies most get the txn and its body
// in one allocation: it decodes every txn it applies, and they live and
// die together.
func newTxn(op jute.Op) *Txn {
	switch op {
	case jute.OpSetData:
		return withBody[SetDataTxn]()
	case jute.OpCreate, jute.OpCreate2:
		return withBody[CreateTxn]()
	case jute.OpDelete:
		return withBody[DeleteTxn]()
	}
	if b := newBody(op); b != nil {
		return &Txn{Body: b}
	}
	return nil
}

// withBody allocates a txn and an empty body of type B as one.
func withBody[B any, PB interface {
	*B
	jute.Record
}]() *Txn {
	x := new(struct {
		t Txn
		b B
	})
	x.t.Body = PB(&x.b)
	return &x.t
}

// newBody returns an empty body for a txn of type op, or nil.
func newBody(op jute.Op) jute.Record {
	switch op {
	case jute.OpMulti:
		return new(MultiTxn)
	case jute.OpSetACL:
		return new(SetACLTxn)
	case jute.OpCreateSession:
		return new(CreateSessionTxn)
	case jute.OpCloseSession:
		return new(CloseSessionTxn)
	case OpSetOwner:
		return new(SetOwnerTxn)
	case jute.OpReconfig:
		return new(ReconfigTxn)
	case OpRestore:
		return new(RestoreTxn)
	}
	return newSubBody(op)
}

// newSubBody returns an empty body for an op of a multi of type op, or
// nil.
func newSubBody(op jute.Op) jute.Record {
	switch op {
	case jute.OpCreate, jute.OpCreate2:
		return new(CreateTxn)
	case jute.OpCreateContainer:
		return new(CreateContainerTxn)
	case jute.OpCreateTTL:
		return new(CreateTTLTxn)
	case jute.OpDelete, jute.OpDeleteContainer:
		return new(DeleteTxn)
	case jute.OpSetData:
		return new(SetDataTxn)
	case jute.OpCheck:
		return new(CheckVersionTxn)
	case jute.OpError:
		return new(ErrorTxn)
	}
	return nil
}

func errBadSubType(op jute.Op) error {
	return fmt.Errorf("%w %v in a multi", ErrType, op)
}

// String describes t for logs and tests: "create2 session=0x5 cxid=3
// time=100 path=/a".
func (t *Txn) String() string {
	s := fmt.Sprintf("%v session=%#x cxid=%d time=%d", t.Type, t.SessionID, t.Cxid, t.Time)
	return s + " " + describeBody(t.Body)
}

func describeBody(b jute.Record) string {
	switch x := b.(type) {
	case *CreateTxn:
		return fmt.Sprintf("path=%s data=%q ephemeral=%v parentCVersion=%d", x.Path, x.Data, x.Ephemeral, x.ParentCVersion)
	case *CreateContainerTxn:
		return fmt.Sprintf("path=%s data=%q parentCVersion=%d", x.Path, x.Data, x.ParentCVersion)
	case *CreateTTLTxn:
		return fmt.Sprintf("path=%s data=%q parentCVersion=%d ttl=%d", x.Path, x.Data, x.ParentCVersion, x.TTL)
	case *DeleteTxn:
		return "path=" + x.Path
	case *SetDataTxn:
		return fmt.Sprintf("path=%s data=%q version=%d", x.Path, x.Data, x.Version)
	case *CheckVersionTxn:
		return fmt.Sprintf("path=%s version=%d", x.Path, x.Version)
	case *SetACLTxn:
		return fmt.Sprintf("path=%s acl=%v version=%d", x.Path, x.ACL, x.Version)
	case *ErrorTxn:
		return "err=" + x.Err.String()
	case *CreateSessionTxn:
		return fmt.Sprintf("timeout=%d", x.TimeoutMs)
	case *CloseSessionTxn:
		return fmt.Sprintf("paths=%v", x.Paths)
	case *SetOwnerTxn:
		return fmt.Sprintf("owner=%d", x.Owner)
	case *ReconfigTxn:
		return x.String()
	case *RestoreTxn:
		return fmt.Sprintf("nodes=%d sessions=%d", len(x.Nodes), len(x.Sessions))
	case *MultiTxn:
		s := "["
		for i, op := range x.Ops {
			if i > 0 {
				s += "; "
			}
			s += op.Type.String() + " " + describeBody(op.Body)
		}
		return s + "]"
	}
	return fmt.Sprintf("%T", b)
}
