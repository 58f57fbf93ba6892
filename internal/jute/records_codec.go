package jute

import (
	"errors"
	"fmt"
)

// Encode and Decode for the records of records.go, field for field in the
// order of zookeeper.jute (module org.apache.zookeeper.proto).
//
// Two rules go beyond the jute spec, both to match what Apache actually puts
// on the wire:
//   - A nil vector is written as an empty one (Writer.StringList, writeACLs):
//     Apache never sends a null list, its server throws on a null list in
//     setWatches, and go-zookeeper cannot read a -1 count. Decoding still
//     reads -1 as nil.
//   - A Decode stops after its last field. Apache ignores whatever follows a
//     record in a frame; use UnmarshalPrefix or DecodeRequest for that, and
//     Unmarshal where trailing bytes should be an error.

// ErrBadMulti means a multi request or response held an op type that has no
// place there, mixed read and write ops, or paired an op with the wrong
// record.
var ErrBadMulti = errors.New("jute: invalid multi op")

// writeACLs writes a vector of ACLs, nil as an empty vector (see above).
func writeACLs(w *Writer, v []ACL) {
	w.Int(int32(len(v)))
	for i := range v {
		v[i].Encode(w)
	}
}

// Encode writes the request; the trailing readOnly byte only if HasReadOnly.
func (x *ConnectRequest) Encode(w *Writer) {
	w.Int(x.ProtocolVersion)
	w.Long(x.LastZxidSeen)
	w.Int(x.TimeOut)
	w.Long(x.SessionID)
	w.Buffer(x.Passwd)
	if x.HasReadOnly {
		w.Bool(x.ReadOnly)
	}
}

// Decode reads the request. Like Apache's ProtocolManager it reads readOnly
// only if a byte is left (clients before 3.4 do not send it) and leaves any
// bytes after it unread.
func (x *ConnectRequest) Decode(r *Reader) {
	x.ProtocolVersion = r.Int()
	x.LastZxidSeen = r.Long()
	x.TimeOut = r.Int()
	x.SessionID = r.Long()
	x.Passwd = r.Buffer()
	x.ReadOnly, x.HasReadOnly = false, false
	if r.Err() == nil && r.Len() > 0 {
		x.ReadOnly = r.Bool()
		x.HasReadOnly = true
	}
}

// Encode writes the response; the trailing readOnly byte only if
// HasReadOnly. Apache 3.8 sends it exactly when the request had it.
func (x *ConnectResponse) Encode(w *Writer) {
	w.Int(x.ProtocolVersion)
	w.Int(x.TimeOut)
	w.Long(x.SessionID)
	w.Buffer(x.Passwd)
	if x.HasReadOnly {
		w.Bool(x.ReadOnly)
	}
}

// Decode reads the response; readOnly only if a byte is left, as for
// ConnectRequest.
func (x *ConnectResponse) Decode(r *Reader) {
	x.ProtocolVersion = r.Int()
	x.TimeOut = r.Int()
	x.SessionID = r.Long()
	x.Passwd = r.Buffer()
	x.ReadOnly, x.HasReadOnly = false, false
	if r.Err() == nil && r.Len() > 0 {
		x.ReadOnly = r.Bool()
		x.HasReadOnly = true
	}
}

func (x *RequestHeader) Encode(w *Writer) { w.Int(x.Xid); w.Int(int32(x.Type)) }
func (x *RequestHeader) Decode(r *Reader) { x.Xid = r.Int(); x.Type = Op(r.Int()) }

// ReplyHeaderSize is the encoded size of a ReplyHeader.
const ReplyHeaderSize = 4 + 8 + 4

func (x *ReplyHeader) Encode(w *Writer) { w.Int(x.Xid); w.Long(x.Zxid); w.Int(int32(x.Err)) }
func (x *ReplyHeader) Decode(r *Reader) { x.Xid = r.Int(); x.Zxid = r.Long(); x.Err = Code(r.Int()) }

func (x *MultiHeader) Encode(w *Writer) { w.Int(int32(x.Type)); w.Bool(x.Done); w.Int(int32(x.Err)) }
func (x *MultiHeader) Decode(r *Reader) {
	x.Type = Op(r.Int())
	x.Done = r.Bool()
	x.Err = Code(r.Int())
}

func (x *AuthPacket) Encode(w *Writer) { w.Int(x.Type); w.String(x.Scheme); w.Buffer(x.Auth) }
func (x *AuthPacket) Decode(r *Reader) { x.Type = r.Int(); x.Scheme = r.String(); x.Auth = r.Buffer() }

func (x *SetWatches) Encode(w *Writer) {
	w.Long(x.RelativeZxid)
	w.StringList(x.DataWatches)
	w.StringList(x.ExistWatches)
	w.StringList(x.ChildWatches)
}

func (x *SetWatches) Decode(r *Reader) {
	x.RelativeZxid = r.Long()
	x.DataWatches = r.Strings()
	x.ExistWatches = r.Strings()
	x.ChildWatches = r.Strings()
}

func (x *SetWatches2) Encode(w *Writer) {
	w.Long(x.RelativeZxid)
	w.StringList(x.DataWatches)
	w.StringList(x.ExistWatches)
	w.StringList(x.ChildWatches)
	w.StringList(x.PersistentWatches)
	w.StringList(x.PersistentRecursiveWatches)
}

func (x *SetWatches2) Decode(r *Reader) {
	x.RelativeZxid = r.Long()
	x.DataWatches = r.Strings()
	x.ExistWatches = r.Strings()
	x.ChildWatches = r.Strings()
	x.PersistentWatches = r.Strings()
	x.PersistentRecursiveWatches = r.Strings()
}

func (x *PathWatch) Encode(w *Writer) { w.String(x.Path); w.Bool(x.Watch) }
func (x *PathWatch) Decode(r *Reader) { x.Path = r.String(); x.Watch = r.Bool() }

func (x *PathRequest) Encode(w *Writer) { w.String(x.Path) }
func (x *PathRequest) Decode(r *Reader) { x.Path = r.String() }

func (x *CreateRequest) Encode(w *Writer) {
	w.String(x.Path)
	w.Buffer(x.Data)
	writeACLs(w, x.ACL)
	w.Int(x.Flags)
}

func (x *CreateRequest) Decode(r *Reader) {
	x.Path = r.String()
	x.Data = r.Buffer()
	x.ACL = DecodeACLs(r)
	x.Flags = r.Int()
}

func (x *CreateTTLRequest) Encode(w *Writer) {
	w.String(x.Path)
	w.Buffer(x.Data)
	writeACLs(w, x.ACL)
	w.Int(x.Flags)
	w.Long(x.TTL)
}

func (x *CreateTTLRequest) Decode(r *Reader) {
	x.Path = r.String()
	x.Data = r.Buffer()
	x.ACL = DecodeACLs(r)
	x.Flags = r.Int()
	x.TTL = r.Long()
}

func (x *PathVersion) Encode(w *Writer) { w.String(x.Path); w.Int(x.Version) }
func (x *PathVersion) Decode(r *Reader) { x.Path = r.String(); x.Version = r.Int() }

func (x *SetDataRequest) Encode(w *Writer) { w.String(x.Path); w.Buffer(x.Data); w.Int(x.Version) }
func (x *SetDataRequest) Decode(r *Reader) {
	x.Path = r.String()
	x.Data = r.Buffer()
	x.Version = r.Int()
}

func (x *SetACLRequest) Encode(w *Writer) { w.String(x.Path); writeACLs(w, x.ACL); w.Int(x.Version) }
func (x *SetACLRequest) Decode(r *Reader) {
	x.Path = r.String()
	x.ACL = DecodeACLs(r)
	x.Version = r.Int()
}

// writeNullString writes "" as a null ustring (-1).
func writeNullString(w *Writer, s string) {
	if s == "" {
		w.Int(-1)
		return
	}
	w.String(s)
}

// Encode writes an empty string field as null (-1), as the Java client
// sends an omitted argument. Apache tests these fields against null, not
// empty: an empty newMembers would ask for a non-incremental reconfig.
func (x *ReconfigRequest) Encode(w *Writer) {
	writeNullString(w, x.JoiningServers)
	writeNullString(w, x.LeavingServers)
	writeNullString(w, x.NewMembers)
	w.Long(x.CurConfigID)
}

// Decode reads null and empty strings alike as "".
func (x *ReconfigRequest) Decode(r *Reader) {
	x.JoiningServers = r.String()
	x.LeavingServers = r.String()
	x.NewMembers = r.String()
	x.CurConfigID = r.Long()
}

func (x *AddWatchRequest) Encode(w *Writer) { w.String(x.Path); w.Int(x.Mode) }
func (x *AddWatchRequest) Decode(r *Reader) { x.Path = r.String(); x.Mode = r.Int() }

func (x *WatchTypeRequest) Encode(w *Writer) { w.String(x.Path); w.Int(x.Type) }
func (x *WatchTypeRequest) Decode(r *Reader) { x.Path = r.String(); x.Type = r.Int() }

func (x *SASLRequest) Encode(w *Writer)  { w.Buffer(x.Token) }
func (x *SASLRequest) Decode(r *Reader)  { x.Token = r.Buffer() }
func (x *SASLResponse) Encode(w *Writer) { w.Buffer(x.Token) }
func (x *SASLResponse) Decode(r *Reader) { x.Token = r.Buffer() }

// Multi requests (MultiOperationRecord.java).

// isReadOp reports whether a multi op is of Apache's OpKind.READ; all other
// valid ops are OpKind.TRANSACTION, and one multi may not mix the two.
func isReadOp(op Op) bool { return op == OpGetChildren || op == OpGetData }

// decodeMultiOp reads the record that follows a multi header of type op, or
// returns nil for a type that cannot appear in a multi. Concrete calls keep
// r from escaping to the heap.
func decodeMultiOp(r *Reader, op Op) Record {
	switch op {
	case OpCreate, OpCreate2, OpCreateContainer:
		x := new(CreateRequest)
		x.Decode(r)
		return x
	case OpCreateTTL:
		x := new(CreateTTLRequest)
		x.Decode(r)
		return x
	case OpDelete, OpCheck:
		x := new(PathVersion)
		x.Decode(r)
		return x
	case OpSetData:
		x := new(SetDataRequest)
		x.Decode(r)
		return x
	case OpGetChildren, OpGetData:
		x := new(PathWatch)
		x.Decode(r)
		return x
	}
	return nil
}

// multiOpRecordOK reports whether rec is the record type Apache pairs with op
// in a multi request.
func multiOpRecordOK(op Op, rec Record) bool {
	switch rec.(type) {
	case *CreateRequest:
		return op == OpCreate || op == OpCreate2 || op == OpCreateContainer
	case *CreateTTLRequest:
		return op == OpCreateTTL
	case *PathVersion:
		return op == OpDelete || op == OpCheck
	case *SetDataRequest:
		return op == OpSetData
	case *PathWatch:
		return isReadOp(op)
	}
	return false
}

// Encode writes each op as MultiHeader{op, false, -1} and its record, then
// the terminator MultiHeader{-1, true, -1}. Ops must pass Validate.
func (x *MultiRequest) Encode(w *Writer) {
	for _, op := range x.Ops {
		h := MultiHeader{Type: op.Op, Err: -1}
		h.Encode(w)
		if op.Record != nil {
			op.Record.Encode(w)
		}
	}
	end := MultiHeader{Type: -1, Done: true, Err: -1}
	end.Encode(w)
}

// Decode reads ops until a header with done set, as Apache does (the type
// of that header is not checked). An op type with no record in a multi, or
// a mix of read and write ops, fails with ErrBadMulti. Every op consumes at
// least a 9-byte header, so the op count is bounded by the input.
func (x *MultiRequest) Decode(r *Reader) {
	x.Ops = nil
	var h MultiHeader
	for {
		h.Decode(r)
		if r.Err() != nil || h.Done {
			return
		}
		if len(x.Ops) > 0 && isReadOp(h.Type) != isReadOp(x.Ops[0].Op) {
			r.Fail(fmt.Errorf("%w: %v mixes read and write ops", ErrBadMulti, h.Type))
			return
		}
		rec := decodeMultiOp(r, h.Type)
		if rec == nil {
			r.Fail(fmt.Errorf("%w: op type %d in a multi request", ErrBadMulti, int32(h.Type)))
			return
		}
		x.Ops = append(x.Ops, MultiOp{Op: h.Type, Record: rec})
	}
}

// Validate checks what Encode cannot report: every op carries the record
// type Apache pairs with it, and read and write ops are not mixed.
func (x *MultiRequest) Validate() error {
	for i, op := range x.Ops {
		if !multiOpRecordOK(op.Op, op.Record) {
			return fmt.Errorf("%w: op %d is %v with %T", ErrBadMulti, i, op.Op, op.Record)
		}
		if isReadOp(op.Op) != isReadOp(x.Ops[0].Op) {
			return fmt.Errorf("%w: op %d (%v) mixes read and write ops", ErrBadMulti, i, op.Op)
		}
	}
	return nil
}

// Replies.

func (x *CreateResponse) Encode(w *Writer) { w.String(x.Path) }
func (x *CreateResponse) Decode(r *Reader) { x.Path = r.String() }

func (x *Create2Response) Encode(w *Writer) { w.String(x.Path); x.Stat.Encode(w) }
func (x *Create2Response) Decode(r *Reader) { x.Path = r.String(); x.Stat.Decode(r) }

func (x *StatResponse) Encode(w *Writer) { x.Stat.Encode(w) }
func (x *StatResponse) Decode(r *Reader) { x.Stat.Decode(r) }

func (x *GetDataResponse) Encode(w *Writer) { w.Buffer(x.Data); x.Stat.Encode(w) }
func (x *GetDataResponse) Decode(r *Reader) { x.Data = r.Buffer(); x.Stat.Decode(r) }

func (x *GetChildrenResponse) Encode(w *Writer) { w.StringList(x.Children) }
func (x *GetChildrenResponse) Decode(r *Reader) { x.Children = r.Strings() }

func (x *GetChildren2Response) Encode(w *Writer) { w.StringList(x.Children); x.Stat.Encode(w) }
func (x *GetChildren2Response) Decode(r *Reader) { x.Children = r.Strings(); x.Stat.Decode(r) }

func (x *GetACLResponse) Encode(w *Writer) { writeACLs(w, x.ACL); x.Stat.Encode(w) }
func (x *GetACLResponse) Decode(r *Reader) { x.ACL = DecodeACLs(r); x.Stat.Decode(r) }

func (x *CountResponse) Encode(w *Writer) { w.Int(x.TotalNumber) }
func (x *CountResponse) Decode(r *Reader) { x.TotalNumber = r.Int() }

func (x *StringsResponse) Encode(w *Writer) { w.StringList(x.Strings) }
func (x *StringsResponse) Decode(r *Reader) { x.Strings = r.Strings() }

func (x *ClientInfo) Encode(w *Writer) { w.String(x.AuthScheme); w.String(x.User) }
func (x *ClientInfo) Decode(r *Reader) { x.AuthScheme = r.String(); x.User = r.String() }

func (x *WhoAmIResponse) Encode(w *Writer) {
	w.Int(int32(len(x.ClientInfo)))
	for i := range x.ClientInfo {
		x.ClientInfo[i].Encode(w)
	}
}

func (x *WhoAmIResponse) Decode(r *Reader) {
	n := r.VectorLen(8) // two empty strings
	if n < 0 || r.Err() != nil {
		x.ClientInfo = nil
		return
	}
	x.ClientInfo = make([]ClientInfo, n)
	for i := range x.ClientInfo {
		x.ClientInfo[i].Decode(r)
	}
}

func (x *ErrorResponse) Encode(w *Writer) { w.Int(int32(x.Err)) }
func (x *ErrorResponse) Decode(r *Reader) { x.Err = Code(r.Int()) }

func (x *WatcherEvent) Encode(w *Writer) { w.Int(x.Type); w.Int(x.State); w.String(x.Path) }
func (x *WatcherEvent) Decode(r *Reader) { x.Type = r.Int(); x.State = r.Int(); x.Path = r.String() }

// Multi responses (MultiResponse.java).

// IsError reports whether the result is an error result: header type
// OpError, which Apache also uses, with code OK, for the ops of a failed
// multi before the one that failed.
func (x *MultiResult) IsError() bool { return x.Op == OpError || x.Err != OK }

// decodeMultiResult reads the body that follows a result header of type op,
// or returns ok false for a type Apache's MultiResponse does not know.
func decodeMultiResult(r *Reader, op Op) (rec Record, ok bool) {
	switch op {
	case OpCreate:
		x := new(CreateResponse)
		x.Decode(r)
		return x, true
	case OpCreate2:
		x := new(Create2Response)
		x.Decode(r)
		return x, true
	case OpSetData:
		x := new(StatResponse)
		x.Decode(r)
		return x, true
	case OpGetData:
		x := new(GetDataResponse)
		x.Decode(r)
		return x, true
	case OpGetChildren:
		x := new(GetChildrenResponse)
		x.Decode(r)
		return x, true
	case OpDelete, OpCheck:
		return nil, true
	}
	return nil, false
}

// multiResultRecordOK reports whether rec is the body Apache writes for a
// successful result of type op.
func multiResultRecordOK(op Op, rec Record) bool {
	switch rec.(type) {
	case nil:
		return op == OpDelete || op == OpCheck
	case *CreateResponse:
		return op == OpCreate
	case *Create2Response:
		return op == OpCreate2
	case *StatResponse:
		return op == OpSetData
	case *GetDataResponse:
		return op == OpGetData
	case *GetChildrenResponse:
		return op == OpGetChildren
	}
	return false
}

// Encode writes each result as MultiHeader{type, false, err} and its body,
// then the terminator MultiHeader{-1, true, -1}. An error result (IsError)
// is written as MultiHeader{OpError, false, Err} and ErrorResponse{Err};
// any other result as MultiHeader{Op, false, 0} and its Record, if any.
// Results must pass Validate.
func (x *MultiResponse) Encode(w *Writer) {
	for i := range x.Results {
		res := &x.Results[i]
		if res.IsError() {
			h := MultiHeader{Type: OpError, Err: res.Err}
			h.Encode(w)
			e := ErrorResponse{Err: res.Err}
			e.Encode(w)
			continue
		}
		h := MultiHeader{Type: res.Op}
		h.Encode(w)
		if res.Record != nil {
			res.Record.Encode(w)
		}
	}
	end := MultiHeader{Type: -1, Done: true, Err: -1}
	end.Encode(w)
}

// Decode reads results until a header with done set. An error result comes
// back as Op OpError with Err taken from its ErrorResponse body (the header's
// err is ignored, as in Apache) and a nil Record. A result type Apache's
// client cannot read fails with ErrBadMulti.
func (x *MultiResponse) Decode(r *Reader) {
	x.Results = nil
	var h MultiHeader
	for {
		h.Decode(r)
		if r.Err() != nil || h.Done {
			return
		}
		if h.Type == OpError {
			var e ErrorResponse
			e.Decode(r)
			x.Results = append(x.Results, MultiResult{Op: OpError, Err: e.Err})
			continue
		}
		rec, ok := decodeMultiResult(r, h.Type)
		if !ok {
			r.Fail(fmt.Errorf("%w: result type %d in a multi response", ErrBadMulti, int32(h.Type)))
			return
		}
		x.Results = append(x.Results, MultiResult{Op: h.Type, Record: rec})
	}
}

// Validate checks what Encode cannot report: each successful result carries
// the body Apache writes for its type (create: *CreateResponse; create2:
// *Create2Response; setData: *StatResponse; getData: *GetDataResponse;
// getChildren: *GetChildrenResponse; delete and check: nil). Apache answers
// a createContainer or createTTL op with a create2 result.
func (x *MultiResponse) Validate() error {
	for i := range x.Results {
		res := &x.Results[i]
		if res.IsError() {
			continue
		}
		if !multiResultRecordOK(res.Op, res.Record) {
			return fmt.Errorf("%w: result %d is %v with %T", ErrBadMulti, i, res.Op, res.Record)
		}
	}
	return nil
}
