package zk

import (
	"errors"
	"strconv"
)

// Code is a ZooKeeper error code (KeeperException.Code) as it travels on
// the wire. Every Code other than 0 is an error, and every Err* variable
// below that names a server code is a Code, so
//
//	errors.Is(err, zk.ErrNoNode)
//
// matches any error carrying code -101, and
//
//	var code zk.Code
//	errors.As(err, &code)
//
// recovers the number.
type Code int32

// Error returns the code's description, prefixed with "zk: ".
func (c Code) Error() string { return "zk: " + c.message() }

// String returns the code's name as Apache spells it ("NoNode").
func (c Code) String() string {
	if d, ok := codes[c]; ok {
		return d.name
	}
	return "Code(" + strconv.Itoa(int(c)) + ")"
}

func (c Code) message() string {
	if d, ok := codes[c]; ok {
		return d.text
	}
	return "unknown error code " + strconv.Itoa(int(c))
}

// The ZooKeeper error codes. The comments say when a server answers with
// them; a client sees them as errors from calls.
var (
	ErrSystemError                  error = Code(-1)   // a server-side failure with no better code
	ErrRuntimeInconsistency         error = Code(-2)   // multi: an op after the one that failed was not attempted
	ErrDataInconsistency            error = Code(-3)   // the server found its data inconsistent
	ErrConnectionLoss               error = Code(-4)   // the connection broke before the reply came; the request may or may not have been applied
	ErrMarshallingError             error = Code(-5)   // a request or reply could not be decoded
	ErrUnimplemented                error = Code(-6)   // the server does not implement the operation
	ErrOperationTimeout             error = Code(-7)   // the operation timed out
	ErrBadArguments                 error = Code(-8)   // invalid arguments (for example a TTL out of range)
	ErrUnknownSession               error = Code(-12)  // the session is not known to the server
	ErrNewConfigNoQuorum            error = Code(-13)  // reconfig: the new configuration has no quorum
	ErrReconfigInProgress           error = Code(-14)  // reconfig: another reconfiguration is in progress
	ErrAPIError                     error = Code(-100) // a generic API error
	ErrNoNode                       error = Code(-101) // the node does not exist
	ErrNoAuth                       error = Code(-102) // the ACL does not grant the session this permission
	ErrBadVersion                   error = Code(-103) // the version given does not match the node's
	ErrNoChildrenForEphemerals      error = Code(-108) // ephemeral nodes may not have children
	ErrNodeExists                   error = Code(-110) // the node already exists
	ErrNotEmpty                     error = Code(-111) // the node has children
	ErrSessionExpired               error = Code(-112) // the session has expired; the Client is dead
	ErrInvalidCallback              error = Code(-113) // an invalid callback was given
	ErrInvalidACL                   error = Code(-114) // the ACL is invalid
	ErrAuthFailed                   error = Code(-115) // authentication failed; the Client is dead
	ErrSessionMoved                 error = Code(-118) // the session moved to another server
	ErrNotReadOnly                  error = Code(-119) // a write was sent to a read-only server
	ErrEphemeralOnLocalSession      error = Code(-120) // an ephemeral create on a local session
	ErrNoWatcher                    error = Code(-121) // no such watch to remove
	ErrRequestTimeout               error = Code(-122) // the request timed out
	ErrReconfigDisabled             error = Code(-123) // reconfig is disabled on the server
	ErrSessionClosedRequireSASLAuth error = Code(-124) // the server requires SASL authentication
	ErrQuotaExceeded                error = Code(-125) // a hard quota would be exceeded
	ErrThrottled                    error = Code(-127) // the server throttled the request
)

type codeDesc struct{ name, text string }

var codes = map[Code]codeDesc{
	0:    {"OK", "ok"},
	-1:   {"SystemError", "system error"},
	-2:   {"RuntimeInconsistency", "runtime inconsistency"},
	-3:   {"DataInconsistency", "data inconsistency"},
	-4:   {"ConnectionLoss", "connection loss"},
	-5:   {"MarshallingError", "marshalling error"},
	-6:   {"Unimplemented", "unimplemented"},
	-7:   {"OperationTimeout", "operation timeout"},
	-8:   {"BadArguments", "bad arguments"},
	-12:  {"UnknownSession", "unknown session"},
	-13:  {"NewConfigNoQuorum", "no quorum for the new config"},
	-14:  {"ReconfigInProgress", "reconfig in progress"},
	-100: {"APIError", "api error"},
	-101: {"NoNode", "node does not exist"},
	-102: {"NoAuth", "not authorized"},
	-103: {"BadVersion", "bad version"},
	-108: {"NoChildrenForEphemerals", "ephemeral nodes may not have children"},
	-110: {"NodeExists", "node already exists"},
	-111: {"NotEmpty", "node has children"},
	-112: {"SessionExpired", "session expired"},
	-113: {"InvalidCallback", "invalid callback"},
	-114: {"InvalidACL", "invalid ACL"},
	-115: {"AuthFailed", "authentication failed"},
	-118: {"SessionMoved", "session moved to another server"},
	-119: {"NotReadOnly", "not a read-only call"},
	-120: {"EphemeralOnLocalSession", "ephemeral node on a local session"},
	-121: {"NoWatcher", "no such watcher"},
	-122: {"RequestTimeout", "request timeout"},
	-123: {"ReconfigDisabled", "reconfig is disabled"},
	-124: {"SessionClosedRequireSaslAuth", "session closed: SASL authentication required"},
	-125: {"QuotaExceeded", "quota exceeded"},
	-127: {"Throttled", "request throttled"},
}

// Errors that do not come from a server.
var (
	// ErrClosed is returned by every call on a Client after Close, and
	// ends every watch that was open at Close.
	ErrClosed = errors.New("zk: client is closed")
	// ErrInvalidPath means a path is not a valid znode path: it must be
	// absolute, have no empty, "." or ".." component, no trailing slash
	// (except "/" itself, or a sequential create) and no control characters.
	ErrInvalidPath = errors.New("zk: invalid path")
	// ErrInvalidConnectString means Connect could not parse its server list.
	ErrInvalidConnectString = errors.New("zk: invalid connect string")
	// ErrRequestTooLarge means a request would exceed the frame limit
	// (WithMaxFrameSize); a server closes the connection on such a frame,
	// so the client refuses to send it.
	ErrRequestTooLarge = errors.New("zk: request exceeds the frame size limit")
	// ErrWatchOverflow ends a persistent watch whose channel the consumer
	// did not drain: the channel filled up (see WithWatchBuffer), the
	// watch was removed, and this error arrives as its last event.
	ErrWatchOverflow = errors.New("zk: watch channel overflowed; events after this one were not delivered")
	// ErrProtocol means the server sent something the client cannot
	// understand (a reply out of order, a malformed frame). The connection
	// is dropped; calls in flight fail with ErrConnectionLoss.
	ErrProtocol = errors.New("zk: protocol error")
)

// Error is the error of one call: the operation, its path as the caller
// gave it, and the cause (a Code, or one of the errors above, or a
// context error). It unwraps to the cause, so errors.Is works on it.
type Error struct {
	Op   string // the operation: "create", "getData", "multi", ...
	Path string // the path as the caller gave it; empty for calls without one
	Err  error  // the cause
}

func (e *Error) Error() string {
	msg := causeText(e.Err)
	if e.Path == "" {
		return "zk: " + e.Op + ": " + msg
	}
	return "zk: " + e.Op + " " + e.Path + ": " + msg
}

func (e *Error) Unwrap() error { return e.Err }

// causeText is err's text without a leading "zk: ", so wrapping does not
// repeat the prefix.
func causeText(err error) string {
	if c, ok := err.(Code); ok {
		return c.message()
	}
	s := err.Error()
	if len(s) > 4 && s[:4] == "zk: " {
		return s[4:]
	}
	return s
}

// codeErr maps a reply's code to an error: nil for OK, else the Code.
func codeErr(c int32) error {
	if c == 0 {
		return nil
	}
	return Code(c)
}
