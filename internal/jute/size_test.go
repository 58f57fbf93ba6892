package jute

import (
	"bytes"
	"testing"
)

// TestEncodedSize checks every sizer against what Encode writes: a size
// that is short or long costs a reply a second allocation or wasted
// bytes.
func TestEncodedSize(t *testing.T) {
	stat := Stat{Czxid: 1, Mzxid: 2, Version: 3, DataLength: 5, Pzxid: 9}
	for _, rec := range []interface {
		Record
		sizer
	}{
		&ReplyHeader{Xid: 7, Zxid: 1 << 40, Err: NoNode},
		&StatResponse{Stat: stat},
		&GetDataResponse{Data: bytes.Repeat([]byte("d"), 1024), Stat: stat},
		&GetDataResponse{Data: nil, Stat: stat},
		&GetDataResponse{Data: []byte{}, Stat: stat},
		&CreateResponse{Path: "/a/b-0000000001"},
		&Create2Response{Path: "/a", Stat: stat},
		&WatcherEvent{Type: 3, State: 3, Path: "/watched"},
		&GetChildrenResponse{Children: []string{"a", "bb", "ccc"}},
		&GetChildrenResponse{},
		&GetChildren2Response{Children: []string{"x"}, Stat: stat},
	} {
		var w Writer
		rec.Encode(&w)
		if got, want := rec.encodedSize(), len(w.B); got != want {
			t.Errorf("%T.encodedSize() = %d, Encode wrote %d bytes", rec, got, want)
		}
	}
}

// TestAppendFrameAllocatesOnce checks that a getData reply, the reply a
// server sends most, is encoded with one allocation.
func TestAppendFrameAllocatesOnce(t *testing.T) {
	hdr := &ReplyHeader{Xid: 1, Zxid: 2}
	resp := &GetDataResponse{Data: bytes.Repeat([]byte("d"), 1024)}
	allocs := testing.AllocsPerRun(100, func() {
		f := AppendFrame(nil, hdr, resp)
		if len(f) != 4+replyHeaderSize+resp.encodedSize() {
			t.Fatalf("frame is %d bytes", len(f))
		}
	})
	if allocs != 1 {
		t.Errorf("AppendFrame of a getData reply: %v allocations, want 1", allocs)
	}
}

// TestAppendFrameKeepsPrefix checks that a frame appended to a buffer
// that must grow keeps what the buffer held.
func TestAppendFrameKeepsPrefix(t *testing.T) {
	dst := []byte("prefix")
	f := AppendFrame(dst[:len(dst):len(dst)], &ReplyHeader{Xid: 1})
	if !bytes.HasPrefix(f, []byte("prefix")) || len(f) != len("prefix")+4+replyHeaderSize {
		t.Errorf("AppendFrame(%q, hdr) = %q", dst, f)
	}
}
