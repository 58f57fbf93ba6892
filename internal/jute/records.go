package jute

// The records of zookeeper.jute (module org.apache.zookeeper.proto) that the
// client protocol uses. Field order is wire order. Encode and Decode methods
// are in records_codec.go.

// ConnectRequest opens or reattaches a session. ReadOnly is a trailing byte
// that clients before 3.4 do not send; HasReadOnly records whether it was
// there, so the reply can answer in kind.
type ConnectRequest struct {
	ProtocolVersion int32
	LastZxidSeen    int64
	TimeOut         int32
	SessionID       int64
	Passwd          []byte
	ReadOnly        bool
	HasReadOnly     bool
}

// ConnectResponse answers a ConnectRequest; ReadOnly is sent only when the
// request carried it (HasReadOnly).
type ConnectResponse struct {
	ProtocolVersion int32
	TimeOut         int32
	SessionID       int64
	Passwd          []byte
	ReadOnly        bool
	HasReadOnly     bool
}

// RequestHeader precedes every request after the handshake.
type RequestHeader struct {
	Xid  int32
	Type Op
}

// ReplyHeader precedes every reply and notification.
type ReplyHeader struct {
	Xid  int32
	Zxid int64
	Err  Code
}

// MultiHeader precedes each op of a multi request or result.
type MultiHeader struct {
	Type Op
	Done bool
	Err  Code
}

// AuthPacket is the body of an auth request (xid -4).
type AuthPacket struct {
	Type   int32
	Scheme string
	Auth   []byte
}

type SetWatches struct {
	RelativeZxid int64
	DataWatches  []string
	ExistWatches []string
	ChildWatches []string
}

type SetWatches2 struct {
	RelativeZxid               int64
	DataWatches                []string
	ExistWatches               []string
	ChildWatches               []string
	PersistentWatches          []string
	PersistentRecursiveWatches []string
}

// PathWatch is the body of exists, getData, getChildren and getChildren2
// requests, which share one wire form.
type PathWatch struct {
	Path  string
	Watch bool
}

// PathRequest is the body of requests that carry only a path: getACL, sync,
// getAllChildrenNumber, getEphemerals (prefixPath), and the sync reply.
type PathRequest struct {
	Path string
}

type CreateRequest struct {
	Path  string
	Data  []byte
	ACL   []ACL
	Flags int32
}

// CreateTTLRequest is CreateRequest with a TTL in ms (op createTTL).
type CreateTTLRequest struct {
	Path  string
	Data  []byte
	ACL   []ACL
	Flags int32
	TTL   int64
}

// PathVersion is the body of delete and check requests.
type PathVersion struct {
	Path    string
	Version int32
}

type SetDataRequest struct {
	Path    string
	Data    []byte
	Version int32
}

type SetACLRequest struct {
	Path    string
	ACL     []ACL
	Version int32
}

// ReconfigRequest is the body of reconfig. Apache tells an omitted server
// list (null) from a given one, so Encode writes "" as null.
type ReconfigRequest struct {
	JoiningServers string
	LeavingServers string
	NewMembers     string
	CurConfigID    int64
}

type AddWatchRequest struct {
	Path string
	Mode int32
}

// WatchTypeRequest is the body of checkWatches and removeWatches.
type WatchTypeRequest struct {
	Path string
	Type int32
}

// SASLRequest is the body of a sasl request (GetSASLRequest).
type SASLRequest struct {
	Token []byte
}

// SASLResponse is the reply to a sasl request (SetSASLResponse).
type SASLResponse struct {
	Token []byte
}

// MultiOp is one op of a multi or multiRead request. Record is one of
// *CreateRequest (create, create2, createContainer), *CreateTTLRequest
// (createTTL), *PathVersion (delete, check), *SetDataRequest (setData),
// *PathWatch (getChildren, getData in multiRead).
type MultiOp struct {
	Op     Op
	Record Record
}

// MultiRequest is the body of multi and multiRead.
type MultiRequest struct {
	Ops []MultiOp
}

// Replies.

type CreateResponse struct{ Path string }

type Create2Response struct {
	Path string
	Stat Stat
}

// StatResponse is the reply of exists, setData and setACL.
type StatResponse struct{ Stat Stat }

type GetDataResponse struct {
	Data []byte
	Stat Stat
}

type GetChildrenResponse struct{ Children []string }

type GetChildren2Response struct {
	Children []string
	Stat     Stat
}

type GetACLResponse struct {
	ACL  []ACL
	Stat Stat
}

// CountResponse is the reply of getAllChildrenNumber.
type CountResponse struct{ TotalNumber int32 }

// StringsResponse is the reply of getEphemerals.
type StringsResponse struct{ Strings []string }

type ClientInfo struct {
	AuthScheme string
	User       string
}

type WhoAmIResponse struct{ ClientInfo []ClientInfo }

// ErrorResponse is an op's result in a multi reply when the op failed.
type ErrorResponse struct{ Err Code }

// MultiResult is one op's result in a multi or multiRead reply. Record is
// nil for ops whose result has no body (delete, check), else one of the
// reply records above (see MultiResponse.Validate).
//
// An error result has Op OpError (or a non-OK Err) and a nil Record, and is
// encoded as header type OpError plus an ErrorResponse. Its Err may be OK:
// when a multi fails, Apache answers every op with an error result, the ops
// before the failing one with OK and those after it with
// RuntimeInconsistency. Decoding always yields Op OpError for these.
type MultiResult struct {
	Op     Op
	Err    Code
	Record Record
}

type MultiResponse struct {
	Results []MultiResult
}

// WatcherEvent is the body of a notification (xid -1).
type WatcherEvent struct {
	Type  int32
	State int32
	Path  string
}
