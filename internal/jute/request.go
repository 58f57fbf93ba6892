package jute

import (
	"errors"
	"fmt"
)

// ErrUnknownOp means a request carried an opcode that DecodeRequest does
// not decode. Apache 3.8 answers an opcode it does not know with a reply
// {xid, zxid -1, Unimplemented} and then closes the connection.
var ErrUnknownOp = errors.New("jute: unknown opcode")

// RequestHeaderSize is the encoded size of a RequestHeader.
const RequestHeaderSize = 4 + 4

// DecodeRequest decodes the body of a client request with opcode op:
//
//	exists, getData, getChildren, getChildren2      *PathWatch
//	getACL, sync, getAllChildrenNumber, getEphemerals *PathRequest
//	create, create2, createContainer                *CreateRequest
//	createTTL                                       *CreateTTLRequest
//	delete, check                                   *PathVersion
//	setData                                         *SetDataRequest
//	setACL                                          *SetACLRequest
//	multi, multiRead                                *MultiRequest
//	reconfig                                        *ReconfigRequest
//	addWatch                                        *AddWatchRequest
//	checkWatches, removeWatches                     *WatchTypeRequest
//	setWatches                                      *SetWatches
//	setWatches2                                     *SetWatches2
//	auth                                            *AuthPacket
//	sasl                                            *SASLRequest
//	ping, closeSession, whoAmI                      nil (body ignored)
//
// Any other opcode, including those only servers send (notification,
// createSession, deleteContainer, error), fails with ErrUnknownOp.
//
// Bytes after the record are ignored, as Apache ignores them: its request
// processors deserialize the record from the front of the request buffer
// and drop the rest. A short or malformed body fails with an error wrapping
// ErrShort, ErrBadLength or ErrBadMulti; Apache answers those with a
// MarshallingError reply to the request's xid and keeps the connection.
//
// The result never aliases body, so body's storage may be reused at once.
func DecodeRequest(op Op, body []byte) (Record, error) {
	r := Reader{b: body}
	var rec Record
	// Each case calls Decode on the concrete type so that r stays on the
	// stack: a request costs only its record and its strings.
	switch op {
	case OpPing, OpCloseSession, OpWhoAmI:
		return nil, nil
	case OpExists, OpGetData, OpGetChildren, OpGetChildren2:
		x := new(PathWatch)
		x.Decode(&r)
		rec = x
	case OpGetACL, OpSync, OpGetAllChildrenNumber, OpGetEphemerals:
		x := new(PathRequest)
		x.Decode(&r)
		rec = x
	case OpCreate, OpCreate2, OpCreateContainer:
		x := new(CreateRequest)
		x.Decode(&r)
		rec = x
	case OpCreateTTL:
		x := new(CreateTTLRequest)
		x.Decode(&r)
		rec = x
	case OpDelete, OpCheck:
		x := new(PathVersion)
		x.Decode(&r)
		rec = x
	case OpSetData:
		x := new(SetDataRequest)
		x.Decode(&r)
		rec = x
	case OpSetACL:
		x := new(SetACLRequest)
		x.Decode(&r)
		rec = x
	case OpMulti, OpMultiRead:
		x := new(MultiRequest)
		x.Decode(&r)
		rec = x
	case OpReconfig:
		x := new(ReconfigRequest)
		x.Decode(&r)
		rec = x
	case OpAddWatch:
		x := new(AddWatchRequest)
		x.Decode(&r)
		rec = x
	case OpCheckWatches, OpRemoveWatches:
		x := new(WatchTypeRequest)
		x.Decode(&r)
		rec = x
	case OpSetWatches:
		x := new(SetWatches)
		x.Decode(&r)
		rec = x
	case OpSetWatches2:
		x := new(SetWatches2)
		x.Decode(&r)
		rec = x
	case OpAuth:
		x := new(AuthPacket)
		x.Decode(&r)
		rec = x
	case OpSASL:
		x := new(SASLRequest)
		x.Decode(&r)
		rec = x
	default:
		return nil, fmt.Errorf("%w: %d", ErrUnknownOp, int32(op))
	}
	if r.err != nil {
		return nil, fmt.Errorf("jute: decode %v request: %w", op, r.err)
	}
	return rec, nil
}

// DecodeRequestFrame decodes a whole request frame (its body, without the
// length prefix): a RequestHeader and then DecodeRequest of the rest. If the
// header decodes but the body does not, it returns the header with the
// error, so that the server can answer the xid as Apache does; only a frame
// shorter than a header returns a zero header. Apache closes the connection
// in that case.
func DecodeRequestFrame(frame []byte) (RequestHeader, Record, error) {
	var h RequestHeader
	if len(frame) < RequestHeaderSize {
		return h, nil, fmt.Errorf("jute: request header: %w", ErrShort)
	}
	r := Reader{b: frame}
	h.Decode(&r)
	rec, err := DecodeRequest(h.Type, frame[RequestHeaderSize:])
	return h, rec, err
}
