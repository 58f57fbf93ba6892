package replica

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/internal/txn"
)

// Kinds of the messages replicas send each other through a Transport.
const (
	// KindRaft carries one raftpb.Message.
	KindRaft uint8 = 1
	// KindForward carries a client's write from the server that received
	// it to the leader, which preps it (see encodeForward).
	KindForward uint8 = 2
	// KindActivity carries the sessions a server heard from, for the
	// leader's expiry tracking (see encodeActivity).
	KindActivity uint8 = 3
	// KindNack tells a forward's origin that the leader refused it: its
	// request fails at once (see encodeNack).
	KindNack uint8 = 4
	// KindEmpty tells the leader that this server's log is empty although
	// the leader's heartbeat says it holds entries: it was wiped and
	// started again to join (linger.go). No body.
	KindEmpty uint8 = 5
)

// ErrBadMessage means a message from a peer could not be decoded. The
// message is dropped; raft and the origin's leader-change handling cover
// the loss.
var ErrBadMessage = errors.New("replica: malformed peer message")

// A forwarded request:
//
//	seq     long    the origin's sequence number, which the txn's envelope
//	                carries back so the origin can find its waiting request
//	session long
//	cxid    int
//	op      int
//	auth    int n, then n × (scheme ustring, id ustring)
//	record  buffer  the request's record, as the client sent it (or, for
//	                createSession, txn.CreateSession); -1 for none
//
// The origin is the sending peer, which the transport names.
func encodeForward(seq uint64, req *txn.Request) []byte {
	w := &jute.Writer{B: make([]byte, 0, forwardSizeHint(req))}
	w.Long(int64(seq))
	w.Long(req.SessionID)
	w.Int(req.Cxid)
	w.Int(int32(req.Op))
	w.Int(int32(len(req.Auth)))
	for _, id := range req.Auth {
		w.String(id.Scheme)
		w.String(id.ID)
	}
	if req.Record == nil {
		w.Buffer(nil)
		return w.B
	}
	// The record goes in place after its length, not marshalled apart
	// and copied: a forwarded setData's data was copied once more, into
	// buffers regrown on the way (6% of a follower's CPU at 0% reads).
	off := w.BeginFrame()
	req.Record.Encode(w)
	if len(w.B) == off+4 {
		// What Buffer writes for an empty Marshal, which is nil.
		binary.BigEndian.PutUint32(w.B[off:], ^uint32(0))
	} else {
		w.EndFrame(off)
	}
	return w.B
}

// forwardSizeHint is about the length of req's forward, so that its
// buffer is allocated once.
func forwardSizeHint(req *txn.Request) int {
	n := 32 // seq, session, cxid, op, auth count, record length
	for _, id := range req.Auth {
		n += 8 + len(id.Scheme) + len(id.ID)
	}
	switch r := req.Record.(type) {
	case *jute.SetDataRequest:
		n += 12 + len(r.Path) + len(r.Data)
	case *jute.CreateRequest:
		n += 64 + len(r.Path) + len(r.Data) // the ACL's usual few entries in the 64
	default:
		n += 128
	}
	return n
}

func decodeForward(b []byte) (seq uint64, req txn.Request, err error) {
	r := jute.NewReader(b)
	seq = uint64(r.Long())
	req.SessionID = r.Long()
	req.Cxid = r.Int()
	req.Op = jute.Op(r.Int())
	n := r.VectorLen(8)
	for i := 0; i < n && r.Err() == nil; i++ {
		req.Auth = append(req.Auth, jute.Id{Scheme: r.String(), ID: r.String()})
	}
	body := r.Buffer()
	if err := r.Err(); err != nil {
		return 0, req, fmt.Errorf("%w: forward: %w", ErrBadMessage, err)
	}
	if body == nil {
		return seq, req, nil
	}
	switch req.Op {
	case jute.OpCreateSession:
		cs := new(txn.CreateSession)
		err = jute.Unmarshal(body, cs)
		req.Record = cs
	case jute.OpDeleteContainer:
		pr := new(jute.PathRequest)
		err = jute.Unmarshal(body, pr)
		req.Record = pr
	case txn.OpRestore:
		rt := new(txn.RestoreTxn)
		err = jute.Unmarshal(body, rt)
		req.Record = rt
	default:
		req.Record, err = jute.DecodeRequest(req.Op, body)
	}
	if err != nil {
		return 0, req, fmt.Errorf("%w: forward %v: %w", ErrBadMessage, req.Op, err)
	}
	return seq, req, nil
}

// Session activity: int n, then n session ids (long).
func encodeActivity(ids []int64) []byte {
	var w jute.Writer
	w.Int(int32(len(ids)))
	for _, id := range ids {
		w.Long(id)
	}
	return w.B
}

func decodeActivity(b []byte) ([]int64, error) {
	r := jute.NewReader(b)
	n := r.VectorLen(8) // -1, a null vector, is none
	ids := make([]int64, 0, max(n, 0))
	for i := 0; i < n && r.Err() == nil; i++ {
		ids = append(ids, r.Long())
	}
	if err := r.Err(); err != nil {
		return nil, fmt.Errorf("%w: activity: %w", ErrBadMessage, err)
	}
	return ids, nil
}

// A refused forward: long seq, the origin's sequence number.
func encodeNack(seq uint64) []byte {
	var w jute.Writer
	w.Long(int64(seq))
	return w.B
}

func decodeNack(b []byte) (uint64, error) {
	r := jute.NewReader(b)
	seq := uint64(r.Long())
	if err := r.Err(); err != nil {
		return 0, fmt.Errorf("%w: nack: %w", ErrBadMessage, err)
	}
	return seq, nil
}
