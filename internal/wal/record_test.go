package wal

import (
	"bytes"
	"encoding/hex"
	"errors"
	"math/rand/v2"
	"testing"

	"go.etcd.io/raft/v3/raftpb"
)

// TestRecordGolden pins the byte layout drawn in the package doc:
// CRC32C(len,type,payload) LE | len LE | type | payload.
func TestRecordGolden(t *testing.T) {
	got := appendRecord(nil, typeEntry, []byte("abc"))
	want, _ := hex.DecodeString("960306dc" + "03000000" + "01" + "616263")
	if !bytes.Equal(got, want) {
		t.Fatalf("record = %x, want %x", got, want)
	}
}

func TestRecordRoundTrip(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789"), 10_000)
	recs := []struct {
		typ     recordType
		payload []byte
	}{
		{typeEntry, nil},
		{typeHardState, []byte{1}},
		{typeSnapshotMark, []byte("marker")},
		{typeEntry, big},
		{typeEntry, []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
	}
	var data []byte
	for _, r := range recs {
		data = appendRecord(data, r.typ, r.payload)
	}
	data = append(data, make([]byte, 100)...) // preallocated tail
	r := scan(data)
	if r.bad != nil || r.corrupt {
		t.Fatalf("scan: bad=%v corrupt=%v", r.bad, r.corrupt)
	}
	if len(r.records) != len(recs) {
		t.Fatalf("scan found %d records, want %d", len(r.records), len(recs))
	}
	for i, got := range r.records {
		if got.typ != recs[i].typ || !bytes.Equal(got.payload, recs[i].payload) {
			t.Fatalf("record %d = %v %q, want %v %q", i, got.typ, got.payload, recs[i].typ, recs[i].payload)
		}
	}
	if r.end != int64(len(data)-100) {
		t.Fatalf("end = %d, want %d", r.end, len(data)-100)
	}
}

func TestDecodeRecordErrors(t *testing.T) {
	good := appendRecord(nil, typeEntry, []byte("payload"))
	mod := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), good...)) }
	tests := []struct {
		name string
		data []byte
		want error
	}{
		{"empty", nil, errShortHeader},
		{"partial header", good[:5], errShortHeader},
		{"zero header", make([]byte, 20), errZeroHeader},
		{"length past end", good[:len(good)-1], errTooLong},
		{"flipped payload", mod(func(b []byte) []byte { b[len(b)-1] ^= 1; return b }), errChecksum},
		{"flipped length", mod(func(b []byte) []byte { b[4] ^= 1; return b }), errChecksum},
		{"flipped type", mod(func(b []byte) []byte { b[8] = 9; return b }), errChecksum},
		{"bad type with good crc", appendRecord(nil, 7, nil), errBadType},
		{"zero type with good crc", appendRecord(nil, typeInvalid, []byte("x")), errBadType},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, _, _, err := decodeRecord(tc.data); !errors.Is(err, tc.want) {
				t.Fatalf("decodeRecord = %v, want %v", err, tc.want)
			}
		})
	}
}

// TestScanClassify checks pebble's rule: a bad record followed by a valid
// one is corruption; a bad record with nothing valid after it is a tail.
func TestScanClassify(t *testing.T) {
	a := appendRecord(nil, typeEntry, []byte("first record"))
	b := appendRecord(nil, typeEntry, []byte("second record"))
	ab := append(append([]byte(nil), a...), b...)
	flip := func(data []byte, i int) []byte {
		c := append([]byte(nil), data...)
		c[i] ^= 0x40
		return c
	}
	zeros := make([]byte, 64)
	flipBits := func(data []byte, i int, mask byte) []byte {
		c := append([]byte(nil), data...)
		c[i] ^= mask
		return c
	}
	tests := []struct {
		name    string
		data    []byte
		records int
		bad     bool
		corrupt bool
	}{
		{"clean", ab, 2, false, false},
		{"clean with zero tail", append(ab, zeros...), 2, false, false},
		{"torn second record", ab[:len(ab)-3], 1, true, false},
		{"torn second record, zero tail", append(ab[:len(ab)-3:len(ab)-3], zeros...), 1, true, false},
		{"torn header", ab[:len(a)+4], 1, true, false},
		// Written whole, then damaged: not a torn write, though nothing
		// valid follows (cutting it could drop an acknowledged write).
		{"flipped last record", flip(ab, len(ab)-2), 1, true, true},
		{"flipped last record's CRC", flip(ab, len(a)+1), 1, true, true},
		{"flipped last record's type", flip(ab, len(a)+8), 1, true, true},
		{"flipped last record, zero tail", append(flip(ab, len(ab)-2), zeros...), 1, true, true},
		{"last record's length shortened", flip(ab, len(a)+4), 1, true, true},
		{"last record's length grown, zero tail", append(flipBits(ab, len(a)+4, 0x20), zeros...), 1, true, true},
		{"last record's length grown", flipBits(ab, len(a)+5, 0x01), 1, true, true},
		// Rot in the unused zeros after the records damages nothing written.
		{"bit rot in a zeroed type after the records", append(ab, flipBits(zeros, 8, 0x01)...), 2, true, false},
		{"bit rot in a zeroed CRC after the records", append(ab, flipBits(zeros, 2, 0x10)...), 2, true, false},
		{"bit rot far into the zeros", append(ab, flipBits(zeros, 40, 0x10)...), 2, true, false},
		{"flipped first record", flip(ab, 12), 0, true, true},
		{"zeroed first header", append(make([]byte, headerSize), ab[headerSize:]...), 0, true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := scan(tc.data)
			if len(r.records) != tc.records || (r.bad != nil) != tc.bad || r.corrupt != tc.corrupt {
				t.Fatalf("scan: %d records, bad=%v, corrupt=%v; want %d, %v, %v",
					len(r.records), r.bad, r.corrupt, tc.records, tc.bad, tc.corrupt)
			}
		})
	}
}

// FuzzScan checks that the decoder never panics, that what it accepts
// re-encodes to exactly the bytes it consumed, and that a clean end is
// followed by zeros only.
func FuzzScan(f *testing.F) {
	f.Add(appendRecord(nil, typeEntry, []byte("abc")))
	f.Add(appendRecord(appendRecord(nil, typeHardState, []byte{8, 1}), typeSnapshotMark, nil))
	f.Add(make([]byte, 30))
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := scan(data)
		var re []byte
		for _, rec := range r.records {
			if rec.off != int64(len(re)) {
				t.Fatalf("record at %d, want %d", rec.off, len(re))
			}
			re = appendRecord(re, rec.typ, rec.payload)
		}
		if !bytes.Equal(re, data[:r.end]) {
			t.Fatalf("re-encoded %x, consumed %x", re, data[:r.end])
		}
		if r.bad == nil && !allZero(data[r.end:]) {
			t.Fatalf("clean end at %d but non-zero bytes follow", r.end)
		}
		if r.corrupt && r.bad == nil {
			t.Fatal("corrupt without a bad record")
		}
	})
}

// TestCorruptionFollowedByTornRecord: records after the corrupt one count
// as valid even when the last of them is torn.
func TestCorruptionFollowedByTornRecord(t *testing.T) {
	var data []byte
	for _, p := range []string{"aaaa", "bbbb", "cccc"} {
		data = appendRecord(data, typeEntry, []byte(p))
	}
	data[headerSize] ^= 1     // corrupt the first record
	data = data[:len(data)-2] // tear the last
	if r := scan(data); !r.corrupt || r.end != 0 {
		t.Fatalf("scan: end %d corrupt %v; want corruption at 0", r.end, r.corrupt)
	}
}

// BenchmarkScanGarbage bounds the cost of looking for valid records after a
// bad one in a segment full of random bytes.
func BenchmarkScanGarbage(b *testing.B) {
	data := make([]byte, 4<<20)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if r := scan(data); r.bad == nil {
			b.Fatal("garbage scanned clean")
		}
	}
}

// TestProtoRecordMatches: marshalling in place frames the same bytes as
// marshalling first.
func TestProtoRecordMatches(t *testing.T) {
	e := raftpb.Entry{Index: 7, Term: 3, Type: raftpb.EntryConfChangeV2, Data: []byte("data")}
	payload, err := e.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	prefix := []byte("prefix")
	got := appendProtoRecord(append([]byte(nil), prefix...), typeEntry, &e)
	want := appendRecord(append([]byte(nil), prefix...), typeEntry, payload)
	if !bytes.Equal(got, want) {
		t.Fatalf("in place %x, want %x", got, want)
	}
}
