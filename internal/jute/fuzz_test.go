package jute

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"testing"
)

// Fuzz targets for every decoder that reads bytes from a peer. Each checks
// that decoding never panics and that whatever decodes is a fixed point of
// encode/decode: encode(decode(x)) decodes to a value that encodes to the
// same bytes. (Exact equality after one trip does not hold: a null vector
// decodes to nil and goes out as an empty one, as Apache's server writes it.)

// FuzzDecodeRequest covers every opcode: the op is fuzzed along with the body.
func FuzzDecodeRequest(f *testing.F) {
	for _, tc := range requestSamples() {
		var body []byte
		if tc.rec != nil {
			body = Marshal(tc.rec)
		}
		f.Add(int32(tc.op), body)
	}
	for _, op := range notClientOps {
		f.Add(int32(op), []byte{0, 0, 0, 1, '/'})
	}
	g := readGolden(f)
	f.Add(int32(OpMulti), g["MultiContainerTTL"])
	f.Add(int32(OpMultiRead), g["MultiRead"])
	f.Add(int32(OpMulti), g["MultiEmpty"])
	f.Add(int32(OpReconfig), g["ReconfigRequest"])
	f.Add(int32(OpSetWatches2), g["SetWatches2"])
	f.Fuzz(func(t *testing.T, op int32, body []byte) {
		rec, err := DecodeRequest(Op(op), body)
		if err != nil {
			if rec != nil {
				t.Fatalf("record %+v with error %v", rec, err)
			}
			return
		}
		if rec == nil {
			return
		}
		b1 := Marshal(rec)
		// Every normalization keeps the size, so the encoding is exactly
		// as long as what was consumed.
		if len(b1) > len(body) {
			t.Fatalf("encoding (%d bytes) longer than the body (%d)", len(b1), len(body))
		}
		rec2, err := DecodeRequest(Op(op), b1)
		if err != nil {
			t.Fatalf("re-decode of %x: %v", b1, err)
		}
		checkFixedPoint(t, rec2, b1)
	})
}

// checkFixedPoint checks that rec, decoded from b, encodes to b and decodes
// from it to an equal value.
func checkFixedPoint(t *testing.T, rec Record, b []byte) {
	t.Helper()
	b2 := Marshal(rec)
	if !bytes.Equal(b2, b) {
		t.Fatalf("not a fixed point:\n%x\n%x", b, b2)
	}
	rec3 := newLike(rec)
	if err := Unmarshal(b2, rec3); err != nil {
		t.Fatalf("Unmarshal of own encoding: %v", err)
	}
	if !reflect.DeepEqual(rec3, rec) {
		t.Fatalf("round trip:\n%+v\n%+v", rec, rec3)
	}
}

// FuzzConnectRequest covers the first frame of every connection, and the
// reply the client reads.
func FuzzConnectRequest(f *testing.F) {
	g := readGolden(f)
	for _, name := range []string{"ConnectRequest", "ConnectRequestRO", "ConnectResponse", "ConnectResponseRO"} {
		f.Add(g[name])
	}
	f.Add(append(append([]byte{}, g["ConnectRequestRO"]...), 0xff, 0xff))
	f.Fuzz(func(t *testing.T, body []byte) {
		var req ConnectRequest
		if UnmarshalPrefix(body, &req) == nil {
			b := Marshal(&req)
			if !bytes.HasPrefix(body, b[:len(b)-boolSize(req.HasReadOnly)]) {
				t.Fatalf("encoding %x is not what was read from %x", b, body)
			}
			var again ConnectRequest
			if err := Unmarshal(b, &again); err != nil || !reflect.DeepEqual(again, req) {
				t.Fatalf("round trip: %+v, %+v, %v", req, again, err)
			}
		}
		var rsp ConnectResponse
		if UnmarshalPrefix(body, &rsp) == nil {
			var again ConnectResponse
			if err := Unmarshal(Marshal(&rsp), &again); err != nil || !reflect.DeepEqual(again, rsp) {
				t.Fatalf("round trip: %+v, %+v, %v", rsp, again, err)
			}
		}
	})
}

func boolSize(has bool) int {
	if has {
		return 1
	}
	return 0
}

// FuzzMultiResponse covers what the Go client reads after a multi.
func FuzzMultiResponse(f *testing.F) {
	g := readGolden(f)
	for _, name := range []string{"MultiResponse", "MultiResponseFailed", "MultiResponseRead", "MultiResponseEmpty"} {
		f.Add(g[name])
	}
	for _, s := range samples() {
		if m, ok := s.rec.(*MultiResponse); ok {
			f.Add(Marshal(m))
		}
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var m MultiResponse
		if UnmarshalPrefix(body, &m) != nil {
			return
		}
		if err := m.Validate(); err != nil {
			t.Fatalf("decoded a response that does not validate: %v", err)
		}
		b1 := Marshal(&m)
		var m2 MultiResponse
		if err := Unmarshal(b1, &m2); err != nil {
			t.Fatalf("re-decode: %v", err)
		}
		checkFixedPoint(t, &m2, b1)
	})
}

// FuzzReadFrame reads frames from an arbitrary stream with a small limit.
func FuzzReadFrame(f *testing.F) {
	f.Add([]byte{0, 0, 0, 3, 'a', 'b', 'c', 0, 0, 0, 0}, uint16(16))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff}, uint16(16))
	f.Add([]byte{0x7f, 0, 0, 0, 1}, uint16(0xffff))
	f.Add([]byte{0, 0, 0, 17}, uint16(16))
	f.Fuzz(func(t *testing.T, stream []byte, limit uint16) {
		r := bytes.NewReader(stream)
		var buf, consumed []byte
		for {
			body, err := ReadFrame(r, buf, int(limit))
			if err != nil {
				if len(body) != 0 {
					t.Fatalf("%d bytes with error %v", len(body), err)
				}
				if err == io.EOF && len(consumed) != len(stream) {
					t.Fatalf("io.EOF after %d of %d bytes", len(consumed), len(stream))
				}
				if err != io.EOF && !errors.Is(err, io.ErrUnexpectedEOF) &&
					!errors.Is(err, ErrFrameTooLarge) && !errors.Is(err, ErrBadLength) {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			if len(body) > int(limit) {
				t.Fatalf("frame of %d bytes over limit %d", len(body), limit)
			}
			consumed = append(consumed, frameOf(body)...)
			if !bytes.HasPrefix(stream, consumed) {
				t.Fatal("frames read are not the stream's prefix")
			}
			buf = body
		}
	})
}
