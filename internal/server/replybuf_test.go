package server

import (
	"bytes"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/internal/txn"
)

func TestReplyClass(t *testing.T) {
	for _, tc := range []struct{ size, class int }{
		{0, -1}, {1, 0}, {88, 0}, {128, 0}, {129, 1}, {1116, 4}, {2048, 4}, {4096, 5}, {4097, -1},
	} {
		if got := replyClass(tc.size); got != tc.class {
			t.Errorf("replyClass(%d) = %d, want %d", tc.size, got, tc.class)
		}
	}
}

// A reply encoded into a pooled buffer is the frame encodeFrame makes,
// and a reply too large for the pools is allocated as before.
func TestEncodeReplyMatchesEncodeFrame(t *testing.T) {
	for _, tc := range []struct {
		resp   jute.Record
		pooled bool
	}{
		{&jute.StatResponse{Stat: jute.Stat{Version: 3}}, true},
		{&jute.GetDataResponse{Data: bytes.Repeat([]byte("d"), 1024)}, true},
		{&jute.GetDataResponse{Data: bytes.Repeat([]byte("d"), 8192)}, false},
		{&jute.GetChildrenResponse{Children: []string{"a", "b"}}, true},
		{nil, true},
	} {
		hdr := jute.ReplyHeader{Xid: 9, Zxid: 42}
		want := encodeFrame(&hdr, tc.resp)
		got, owner := encodeReply(hdr, tc.resp)
		if !bytes.Equal(got, want) {
			t.Errorf("%T: encodeReply differs from encodeFrame", tc.resp)
		}
		if (owner != nil) != tc.pooled {
			t.Errorf("%T: pooled %v, want %v", tc.resp, owner != nil, tc.pooled)
		}
		if owner != nil && &(*owner)[:1][0] != &got[0] {
			t.Errorf("%T: the frame is not in its owner's buffer", tc.resp)
		}
	}
}

// Pooled frames count their whole buffer against the queue's bounds, and
// the count goes back to zero once they are written.
func TestOutqCountsPooledBuffers(t *testing.T) {
	var total atomic.Int64
	q := newOutq(1<<20, &total, func() {})
	frame, owner := encodeReply(jute.ReplyHeader{Xid: 1}, &jute.StatResponse{})
	if owner == nil {
		t.Fatal("a setData-sized reply was not pooled")
	}
	q.pushOwned(frame, owner)
	if got, want := q.queued(), cap(frame); got != want {
		t.Fatalf("queued %d, want the buffer's %d", got, want)
	}
	frames, owners, _, _, _ := q.take(nil, nil)
	if len(frames) != 1 || owners[0] != owner {
		t.Fatalf("take: %d frames, owners %v", len(frames), owners)
	}
	recycleReplies(owners)
	if owners[0] != nil {
		t.Error("recycleReplies kept a reference to the buffer it gave back")
	}
	q.written(cap(frame))
	if q.queued() != 0 || total.Load() != 0 {
		t.Fatalf("after the write: queued %d, total %d", q.queued(), total.Load())
	}
}

// Replies written from pooled buffers reach the client intact and in
// order while their buffers are reused for later replies: each of many
// pipelined getData replies carries its own xid and the node's data.
func TestPooledRepliesArriveIntact(t *testing.T) {
	ts := newTestServer(t, baseConfig())
	t.Cleanup(func() {
		if err := ts.shutdown(10 * time.Second); err != nil {
			t.Error(err)
		}
	})
	c := newSession(t, ts.addr)
	small := bytes.Repeat([]byte("s"), 100)
	large := bytes.Repeat([]byte("L"), 1500)
	c.create("/small", small, 0)
	c.create("/large", large, 0)

	const n = 2000
	var batch []byte
	for i := 1; i <= n; i++ {
		path := "/small"
		if i%3 == 0 {
			path = "/large"
		}
		batch = appendRequest(batch, int32(i), jute.OpGetData, &jute.PathWatch{Path: path})
	}
	c.writeRaw(batch)
	for i := 1; i <= n; i++ {
		frame, err := c.readFrame()
		if err != nil {
			t.Fatalf("reply %d: %v", i, err)
		}
		r := jute.NewReader(frame)
		var hdr jute.ReplyHeader
		hdr.Decode(r)
		var resp jute.GetDataResponse
		resp.Decode(r)
		want := small
		if i%3 == 0 {
			want = large
		}
		if r.Err() != nil || hdr.Xid != int32(i) || hdr.Err != jute.OK || !bytes.Equal(resp.Data, want) {
			t.Fatalf("reply %d: xid %d, err %v, %d bytes of data (decode: %v)", i, hdr.Xid, hdr.Err, len(resp.Data), r.Err())
		}
	}
}

// A setData or setACL reply carries the result's Stat as its body, which
// must be the bytes of the StatResponse clients decode, and must not
// allocate beyond the pooled frame.
func TestWriteReplyStatIsStatResponse(t *testing.T) {
	st := jute.Stat{Czxid: 1, Mzxid: 2, Ctime: 3, Mtime: 4, Version: 5, Cversion: 6, Aversion: 7,
		EphemeralOwner: 8, DataLength: 9, NumChildren: 10, Pzxid: 11}
	for _, op := range []jute.Op{jute.OpSetData, jute.OpSetACL} {
		res := &txn.Result{Stat: st}
		code, body := writeReply(op, res)
		if code != jute.OK {
			t.Fatalf("op %d: code %v", op, code)
		}
		hdr := jute.ReplyHeader{Xid: 7, Zxid: 99}
		got, owner := encodeReply(hdr, body)
		want := encodeFrame(&hdr, &jute.StatResponse{Stat: st})
		if !bytes.Equal(got, want) {
			t.Errorf("op %d: reply %x, want StatResponse's %x", op, got, want)
		}
		if owner == nil {
			t.Errorf("op %d: the reply was not pooled", op)
		}
		recycleReplies([]*[]byte{owner})
	}
	if raceEnabled {
		return // sync.Pool drops what it is given at random under the race detector
	}
	res := &txn.Result{Stat: st}
	buf := make([]byte, 0, 256)
	allocs := testing.AllocsPerRun(100, func() {
		_, body := writeReply(jute.OpSetData, res)
		buf = jute.AppendReply(buf[:0], jute.ReplyHeader{Xid: 7}, body)
	})
	if allocs != 0 {
		t.Errorf("encoding a setData reply allocated %v times, want 0", allocs)
	}
}
