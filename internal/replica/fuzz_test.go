package replica

import (
	"testing"

	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/internal/txn"
)

// FuzzPeerMessages throws arbitrary bytes at the decoders of what other
// members send: forwards, refusals and session activity. None may panic;
// a forward that decodes encodes back to a forward that decodes the same.
func FuzzPeerMessages(f *testing.F) {
	f.Add(encodeForward(7, &txn.Request{SessionID: 1, Cxid: 2, Op: jute.OpCreate,
		Auth: []jute.Id{{Scheme: "digest", ID: "a:b"}}, Record: &jute.CreateRequest{Path: "/a", ACL: open}}))
	f.Add(encodeForward(1, &txn.Request{Op: jute.OpCreateSession, Record: &txn.CreateSession{TimeoutMs: 3000}}))
	f.Add(encodeNack(42))
	f.Add(encodeActivity([]int64{1, 2, 3}))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = decodeNack(b)
		_, _ = decodeActivity(b)
		seq, req, err := decodeForward(b)
		if err != nil {
			return
		}
		seq2, req2, err := decodeForward(encodeForward(seq, &req))
		if err != nil || seq2 != seq || req2.Op != req.Op || req2.SessionID != req.SessionID || req2.Cxid != req.Cxid {
			t.Fatalf("round trip: %d %+v -> %d %+v, %v", seq, req, seq2, req2, err)
		}
	})
}
