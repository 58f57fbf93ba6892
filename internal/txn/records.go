package txn

import (
	"github.com/zoohq/zoo/internal/jute"
)

// The txn bodies of zookeeper.jute's org.apache.zookeeper.txn module, with
// their fields in wire order.

// CreateTxn is the body of create and create2 txns. Ephemeral makes the
// txn's session the node's owner.
type CreateTxn struct {
	Path           string
	Data           []byte
	ACL            []jute.ACL
	Ephemeral      bool
	ParentCVersion int32 // the parent's stored cversion after the create
}

// CreateContainerTxn is the body of createContainer txns.
type CreateContainerTxn struct {
	Path           string
	Data           []byte
	ACL            []jute.ACL
	ParentCVersion int32
}

// CreateTTLTxn is the body of createTTL txns; TTL is in ms.
type CreateTTLTxn struct {
	Path           string
	Data           []byte
	ACL            []jute.ACL
	ParentCVersion int32
	TTL            int64
}

// DeleteTxn is the body of delete and deleteContainer txns.
type DeleteTxn struct {
	Path string
}

// SetDataTxn is the body of setData txns. Version is the node's new
// version, not the one the request expected.
type SetDataTxn struct {
	Path    string
	Data    []byte
	Version int32
}

// CheckVersionTxn is the body of check txns (an op of a multi). Version is
// the checked version plus one, as Apache's prep writes it; apply ignores
// it.
type CheckVersionTxn struct {
	Path    string
	Version int32
}

// SetACLTxn is the body of setACL txns. Version is the node's new aversion.
type SetACLTxn struct {
	Path    string
	ACL     []jute.ACL
	Version int32
}

// ErrorTxn is the body of a failed request's txn, and of the failed and
// skipped ops of a failed multi.
type ErrorTxn struct {
	Err jute.Code
}

// CreateSessionTxn is the body of createSession txns. Apache's has only
// the timeout; Zoo replicates the password too, so that any server can
// accept the session when its client moves (DESIGN decision 8).
type CreateSessionTxn struct {
	TimeoutMs int32
	Password  []byte
}

// CreateSession is the request record of an OpCreateSession request, which
// the server builds from a ConnectRequest after choosing the session id.
type CreateSession = CreateSessionTxn

// OpSetOwner is Zoo's own txn type (no client sends it): a session's client
// reattached to another server of the ensemble, which now owns it. It
// takes no request record; prep fills the owner from Request.Server.
const OpSetOwner jute.Op = -20

// SetOwnerTxn is the body of setOwner txns: the id of the server the
// session is attached to.
type SetOwnerTxn struct {
	Owner int64
}

// CloseSessionTxn is the body of closeSession txns: the ephemeral nodes to
// delete, sorted, including those that txns prepped before it create.
type CloseSessionTxn struct {
	Paths []string
}

// MultiTxn is the body of multi txns. Its ops share the multi's zxid.
type MultiTxn struct {
	Ops []SubTxn
}

// SubTxn is one op of a MultiTxn (Apache's Txn record). Type is create,
// createContainer, createTTL, delete, setData, check or error; Body is the
// matching txn body. On the wire the body is a length-prefixed buffer.
type SubTxn struct {
	Type jute.Op
	Body jute.Record
}

func (x *CreateTxn) Encode(w *jute.Writer) {
	w.String(x.Path)
	w.Buffer(x.Data)
	jute.EncodeACLs(w, x.ACL)
	w.Bool(x.Ephemeral)
	w.Int(x.ParentCVersion)
}

func (x *CreateTxn) Decode(r *jute.Reader) {
	x.Path = r.String()
	x.Data = r.Buffer() // aliases r's input if r aliases (UnmarshalShared)
	x.ACL = jute.DecodeACLs(r)
	x.Ephemeral = r.Bool()
	x.ParentCVersion = r.Int()
}

func (x *CreateContainerTxn) Encode(w *jute.Writer) {
	w.String(x.Path)
	w.Buffer(x.Data)
	jute.EncodeACLs(w, x.ACL)
	w.Int(x.ParentCVersion)
}

func (x *CreateContainerTxn) Decode(r *jute.Reader) {
	x.Path = r.String()
	x.Data = r.Buffer() // aliases r's input if r aliases (UnmarshalShared)
	x.ACL = jute.DecodeACLs(r)
	x.ParentCVersion = r.Int()
}

func (x *CreateTTLTxn) Encode(w *jute.Writer) {
	w.String(x.Path)
	w.Buffer(x.Data)
	jute.EncodeACLs(w, x.ACL)
	w.Int(x.ParentCVersion)
	w.Long(x.TTL)
}

func (x *CreateTTLTxn) Decode(r *jute.Reader) {
	x.Path = r.String()
	x.Data = r.Buffer() // aliases r's input if r aliases (UnmarshalShared)
	x.ACL = jute.DecodeACLs(r)
	x.ParentCVersion = r.Int()
	x.TTL = r.Long()
}

func (x *DeleteTxn) Encode(w *jute.Writer) { w.String(x.Path) }
func (x *DeleteTxn) Decode(r *jute.Reader) { x.Path = r.String() }

func (x *SetDataTxn) Encode(w *jute.Writer) {
	w.String(x.Path)
	w.Buffer(x.Data)
	w.Int(x.Version)
}

func (x *SetDataTxn) Decode(r *jute.Reader) {
	x.Path = r.String()
	x.Data = r.Buffer() // aliases r's input if r aliases (UnmarshalShared)
	x.Version = r.Int()
}

func (x *CheckVersionTxn) Encode(w *jute.Writer) { w.String(x.Path); w.Int(x.Version) }
func (x *CheckVersionTxn) Decode(r *jute.Reader) { x.Path = r.String(); x.Version = r.Int() }

func (x *SetACLTxn) Encode(w *jute.Writer) {
	w.String(x.Path)
	jute.EncodeACLs(w, x.ACL)
	w.Int(x.Version)
}

func (x *SetACLTxn) Decode(r *jute.Reader) {
	x.Path = r.String()
	x.ACL = jute.DecodeACLs(r)
	x.Version = r.Int()
}

func (x *ErrorTxn) Encode(w *jute.Writer) { w.Int(int32(x.Err)) }
func (x *ErrorTxn) Decode(r *jute.Reader) { x.Err = jute.Code(r.Int()) }

func (x *CreateSessionTxn) Encode(w *jute.Writer) { w.Int(x.TimeoutMs); w.Buffer(x.Password) }
func (x *CreateSessionTxn) Decode(r *jute.Reader) {
	x.TimeoutMs = r.Int()
	x.Password = r.OwnedBuffer()
}

func (x *SetOwnerTxn) Encode(w *jute.Writer) { w.Long(x.Owner) }
func (x *SetOwnerTxn) Decode(r *jute.Reader) { x.Owner = r.Long() }

func (x *CloseSessionTxn) Encode(w *jute.Writer) { w.Strings(x.Paths) }
func (x *CloseSessionTxn) Decode(r *jute.Reader) { x.Paths = r.Strings() }

// Encode writes the ops as vector<Txn{int type; buffer data}>, each body
// encoded in place behind a length patched in afterwards.
func (x *MultiTxn) Encode(w *jute.Writer) {
	if x.Ops == nil {
		w.Int(-1) // a nil vector, as jute writes one
		return
	}
	w.Int(int32(len(x.Ops)))
	for _, op := range x.Ops {
		w.Int(int32(op.Type))
		at := len(w.B)
		w.Int(0)
		if op.Body != nil {
			op.Body.Encode(w)
		}
		n := uint32(len(w.B) - at - 4)
		w.B[at], w.B[at+1], w.B[at+2], w.B[at+3] = byte(n>>24), byte(n>>16), byte(n>>8), byte(n)
	}
}

// Decode reads the ops; an op of a type a multi cannot hold, or a body
// that does not fill its buffer exactly, fails the reader.
func (x *MultiTxn) Decode(r *jute.Reader) {
	n := r.VectorLen(8) // type + buffer length
	if n < 0 || r.Err() != nil {
		x.Ops = nil
		return
	}
	x.Ops = make([]SubTxn, 0, n)
	for i := 0; i < n && r.Err() == nil; i++ {
		typ := jute.Op(r.Int())
		buf := r.Buffer()
		if r.Err() != nil {
			return
		}
		body := newSubBody(typ)
		if body == nil {
			r.Fail(errBadSubType(typ))
			return
		}
		if err := jute.Unmarshal(buf, body); err != nil {
			r.Fail(err)
			return
		}
		x.Ops = append(x.Ops, SubTxn{Type: typ, Body: body})
	}
}
