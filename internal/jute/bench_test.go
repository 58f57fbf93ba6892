package jute

import (
	"testing"
)

// BenchmarkEncodeGetDataReply encodes a reply header and a 1 KiB getData
// response into one reused frame buffer, as the server does per reply.
func BenchmarkEncodeGetDataReply(b *testing.B) {
	h := &ReplyHeader{Xid: 1, Zxid: 0x100000001}
	body := &GetDataResponse{Data: make([]byte, 1024), Stat: testStat}
	var w Writer
	b.ReportAllocs()
	for b.Loop() {
		w.Reset()
		off := w.BeginFrame()
		h.Encode(&w)
		body.Encode(&w)
		w.EndFrame(off)
	}
	b.SetBytes(int64(len(w.B)))
}

// BenchmarkAppendFrameGetDataReply is the same through AppendFrame.
func BenchmarkAppendFrameGetDataReply(b *testing.B) {
	h := &ReplyHeader{Xid: 1, Zxid: 0x100000001}
	body := &GetDataResponse{Data: make([]byte, 1024), Stat: testStat}
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendFrame(buf[:0], h, body)
	}
	b.SetBytes(int64(len(buf)))
}

// BenchmarkDecodeGetDataRequest decodes a whole getData request frame: the
// header and the body. The allocations are the *PathWatch and its path.
func BenchmarkDecodeGetDataRequest(b *testing.B) {
	frame := AppendFrame(nil, &RequestHeader{Xid: 9, Type: OpGetData}, &PathWatch{Path: "/app/config/service-a", Watch: true})[4:]
	b.ReportAllocs()
	b.SetBytes(int64(len(frame)))
	for b.Loop() {
		_, rec, err := DecodeRequestFrame(frame)
		if err != nil || rec == nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeSetDataRequest decodes a setData with 1 KiB of data, which
// is copied out of the frame buffer.
func BenchmarkDecodeSetDataRequest(b *testing.B) {
	body := Marshal(&SetDataRequest{Path: "/app/config/service-a", Data: make([]byte, 1024), Version: -1})
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := DecodeRequest(OpSetData, body); err != nil {
			b.Fatal(err)
		}
	}
}
