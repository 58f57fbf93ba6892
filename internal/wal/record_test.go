package wal

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"go.etcd.io/raft/v3/raftpb"
)

// TestRecordGolden pins the byte layout drawn in the package doc:
// hdrCRC LE | len LE | type | dataCRC LE | payload | end mark. The
// expected bytes were computed apart from this code (CRC32C by hand).
func TestRecordGolden(t *testing.T) {
	got := appendRecord(nil, typeEntry, []byte("abc"))
	want, _ := hex.DecodeString("2b005b72" + "03000000" + "01" + "b73f4b36" + "616263" + "a5")
	if !bytes.Equal(got, want) {
		t.Fatalf("record = %x, want %x", got, want)
	}
	if len(got)-3 != recordOverhead {
		t.Fatalf("overhead %d, recordOverhead %d", len(got)-3, recordOverhead)
	}
}

// TestMagicNeverStartsV1: a v1 segment starts with a snapshot marker
// (type 3 at byte 8), which the magic's byte 8 is not, so a v1 segment is
// never taken for v2; and the v1 rule (a Zoo before v2 reading a v2
// segment) refuses a v2 segment as corruption instead of cutting it as a
// torn tail.
func TestMagicNeverStartsV1(t *testing.T) {
	if segmentMagic[8] == byte(typeSnapshotMark) {
		t.Fatal("the magic's byte 8 is a snapshot marker's type")
	}
	v1 := appendRecordV1(nil, typeSnapshotMark, []byte("marker"))
	if f, start := frameOf(v1); start != 0 || f != (v1Frame{}) {
		t.Fatalf("v1 segment read as %T at %d", f, start)
	}
	v2 := segV2(appendRecord(nil, typeSnapshotMark, []byte("marker")), appendRecord(nil, typeHardState, []byte{8, 1}))
	for _, tail := range [][]byte{nil, make([]byte, 4096)} {
		data := concat(v2, tail)
		if _, _, _, err := decode(v1Frame{}, data); err == nil {
			t.Fatal("the v1 decoder reads the magic as a record")
		}
		if !badIsCorrupt(v1Frame{}, data) {
			t.Fatal("the v1 rule takes a v2 segment for a torn tail")
		}
	}
}

func TestRecordRoundTrip(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789"), 10_000)
	recs := []struct {
		typ     recordType
		payload []byte
	}{
		{typeSnapshotMark, []byte("marker")},
		{typeEntry, nil},
		{typeHardState, []byte{1}},
		{typeEntry, big},
		{typeEntry, []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
	}
	for _, v1 := range []bool{false, true} {
		t.Run(fmt.Sprintf("v1=%v", v1), func(t *testing.T) {
			var data []byte
			if !v1 {
				data = segV2()
			}
			for _, r := range recs {
				if v1 {
					data = appendRecordV1(data, r.typ, r.payload)
				} else {
					data = appendRecord(data, r.typ, r.payload)
				}
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
		})
	}
}

func TestDecodeRecordErrors(t *testing.T) {
	good := appendRecord(nil, typeEntry, []byte("payload"))
	goodV1 := appendRecordV1(nil, typeEntry, []byte("payload"))
	mod := func(rec []byte, f func(b []byte)) []byte {
		b := append([]byte(nil), rec...)
		f(b)
		return b
	}
	tests := []struct {
		name string
		f    frame
		data []byte
		want error
	}{
		{"empty", v2Frame{}, nil, errShortHeader},
		{"partial header", v2Frame{}, good[:12], errShortHeader},
		{"zero header", v2Frame{}, make([]byte, 20), errZeroHeader},
		{"length past end", v2Frame{}, good[:len(good)-1], errTooLong},
		{"flipped payload", v2Frame{}, mod(good, func(b []byte) { b[len(b)-2] ^= 1 }), errChecksum},
		{"flipped end mark", v2Frame{}, mod(good, func(b []byte) { b[len(b)-1] ^= 1 }), errChecksum},
		{"zeroed end mark", v2Frame{}, mod(good, func(b []byte) { b[len(b)-1] = 0 }), errChecksum},
		{"flipped header CRC", v2Frame{}, mod(good, func(b []byte) { b[0] ^= 1 }), errHeaderChecksum},
		{"flipped length", v2Frame{}, mod(good, func(b []byte) { b[4] ^= 1 }), errHeaderChecksum},
		{"flipped type", v2Frame{}, mod(good, func(b []byte) { b[8] = 9 }), errHeaderChecksum},
		{"flipped payload CRC", v2Frame{}, mod(good, func(b []byte) { b[11] ^= 1 }), errHeaderChecksum},
		{"bad type with good CRC", v2Frame{}, appendRecord(nil, 7, nil), errBadType},
		{"zero type with good CRC", v2Frame{}, appendRecord(nil, typeInvalid, []byte("x")), errBadType},
		{"v1 partial header", v1Frame{}, goodV1[:5], errShortHeader},
		{"v1 zero header", v1Frame{}, make([]byte, 20), errZeroHeader},
		{"v1 length past end", v1Frame{}, goodV1[:len(goodV1)-1], errTooLong},
		{"v1 flipped payload", v1Frame{}, mod(goodV1, func(b []byte) { b[len(b)-1] ^= 1 }), errChecksum},
		{"v1 flipped length", v1Frame{}, mod(goodV1, func(b []byte) { b[4] ^= 1 }), errChecksum},
		{"v1 bad type with good CRC", v1Frame{}, appendRecordV1(nil, 7, nil), errBadType},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, _, _, err := decode(tc.f, tc.data); !errors.Is(err, tc.want) {
				t.Fatalf("decode = %v, want %v", err, tc.want)
			}
		})
	}
}

// TestScanClassify checks the recovery rule of format v2 on a segment of
// three records, m, a and b, where m stands for the segment's header
// records: a bad record followed by a valid one is corruption; a bad
// record that was written whole (its end mark, or anything non-zero after
// it, is there) is corruption; only a record cut off by the end of the
// written bytes is a torn tail.
func TestScanClassify(t *testing.T) {
	m := appendRecord(nil, typeSnapshotMark, []byte("marker"))
	a := appendRecord(nil, typeEntry, []byte("first record"))
	b := appendRecord(nil, typeEntry, []byte("second record"))
	c := appendRecord(nil, typeEntry, []byte("an unsynced write"))
	mab := segV2(m, a, b)
	bOff := len(mab) - len(b) // where b starts
	zeros := make([]byte, 64)
	tests := []scanCase{
		{"clean", mab, 3, false, false},
		{"clean with zero tail", concat(mab, zeros), 3, false, false},
		{"torn last record", mab[:len(mab)-3], 2, true, false},
		{"torn last record, zero tail", concat(mab[:len(mab)-3], zeros), 2, true, false},
		{"last record without its end mark, zero tail", concat(mab[:len(mab)-1], zeros), 2, true, false},
		{"torn header", mab[:bOff+4], 2, true, false},
		{"torn header, zero tail", concat(mab[:bOff+6], zeros), 2, true, false},
		{"torn header, zero tail, bit rot in the zeros", concat(mab[:bOff+6], flip(zeros, 30, 1)), 2, true, true},
		// Written whole, then damaged: not a torn write, though nothing
		// valid follows (cutting it could drop an acknowledged write).
		{"flipped last record", flip(mab, len(mab)-2, 0x40), 2, true, true},
		{"flipped last record's end mark", flip(mab, len(mab)-1, 0x40), 2, true, true},
		{"flipped last record's header CRC", flip(mab, bOff+1, 0x40), 2, true, true},
		{"flipped last record's type", flip(mab, bOff+8, 0x40), 2, true, true},
		{"flipped last record's payload CRC", flip(mab, bOff+10, 0x40), 2, true, true},
		{"flipped last record, zero tail", concat(flip(mab, len(mab)-2, 0x40), zeros), 2, true, true},
		{"last record's length shortened", flip(mab, bOff+4, 0x01), 2, true, true},
		{"last record's length grown, zero tail", concat(flip(mab, bOff+4, 0x20), zeros), 2, true, true},
		{"last record's length grown", flip(mab, bOff+5, 0x01), 2, true, true},
		// Seed 6281: damage to the last synced record, then a torn
		// unsynced write after it. Nothing valid follows the damaged
		// record, and the written bytes run past it.
		{"length grown, torn write after", concat(flip(mab, bOff+5, 0x01), c[:len(c)-5], zeros), 2, true, true},
		{"length shortened, torn write after", concat(flip(mab, bOff+4, 0x04), c[:len(c)-5], zeros), 2, true, true},
		{"payload flipped, torn write after", concat(flip(mab, len(mab)-3, 0x04), c[:len(c)-5], zeros), 2, true, true},
		{"end mark flipped, torn header after", concat(flip(mab, len(mab)-1, 0x80), c[:3], zeros), 2, true, true},
		{"torn write whole but its end mark", concat(mab, c[:len(c)-1], zeros), 3, true, false},
		{"torn write in its header", concat(mab, c[:headerSize-1]), 3, true, false},
		// Rot in the unused zeros after the records damages nothing written.
		{"bit rot in a zeroed type after the records", concat(mab, flip(zeros, 8, 0x01)), 3, true, false},
		{"bit rot in a zeroed CRC after the records", concat(mab, flip(zeros, 2, 0x10)), 3, true, false},
		{"bit rot in a zeroed payload CRC after the records", concat(mab, flip(zeros, 11, 0x10)), 3, true, false},
		{"bit rot far into the zeros", concat(mab, flip(zeros, 40, 0x10)), 3, true, false},
		// A segment's first record was fsynced before the segment was
		// renamed into place: it is never torn.
		{"flipped first record", flip(mab, magicSize+12, 0x40), 0, true, true},
		{"first record torn", mab[:magicSize+len(m)-1], 0, true, true},
		{"zeroed first header", concat(segV2(), make([]byte, headerSize), mab[magicSize+headerSize:]), 0, true, true},
		{"no records", concat(segV2(), zeros), 0, true, true},
		{"flipped magic", flip(mab, 3, 0x02), 0, true, true},
		{"zeroed magic", concat(make([]byte, magicSize), mab[magicSize:]), 0, true, true},
		{"empty", nil, 0, true, true},
	}
	runScanCases(t, tests)
}

// scanCase is a segment's bytes and how scan must classify them.
type scanCase struct {
	name    string
	data    []byte
	records int  // good records before the end
	bad     bool // the end is a bad record, not the clean end
	corrupt bool // and it is corruption, not a torn tail
}

func runScanCases(t *testing.T, tests []scanCase) {
	t.Helper()
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

// flip returns a copy of data with byte i xored with mask.
func flip(data []byte, i int, mask byte) []byte {
	c := append([]byte(nil), data...)
	c[i] ^= mask
	return c
}

// TestScanClassifyV1 checks that a v1 segment is still classified by the
// v1 rule, torn tails and damage alike.
func TestScanClassifyV1(t *testing.T) {
	m := appendRecordV1(nil, typeSnapshotMark, []byte("marker"))
	a := appendRecordV1(nil, typeEntry, []byte("first record"))
	b := appendRecordV1(nil, typeEntry, []byte("second record"))
	mab := concat(m, a, b)
	bOff := len(m) + len(a)
	zeros := make([]byte, 64)
	tests := []scanCase{
		{"clean", mab, 3, false, false},
		{"clean with zero tail", concat(mab, zeros), 3, false, false},
		{"torn last record", mab[:len(mab)-3], 2, true, false},
		{"torn last record, zero tail", concat(mab[:len(mab)-3], zeros), 2, true, false},
		{"torn header", mab[:bOff+4], 2, true, false},
		{"flipped last record", flip(mab, len(mab)-2, 0x40), 2, true, true},
		{"flipped last record's CRC", flip(mab, bOff+1, 0x40), 2, true, true},
		{"last record's length grown, zero tail", concat(flip(mab, bOff+4, 0x20), zeros), 2, true, true},
		{"bit rot far into the zeros", concat(mab, flip(zeros, 40, 0x10)), 3, true, false},
		{"flipped middle record", flip(mab, bOff-2, 0x40), 1, true, true},
		{"flipped first record", flip(mab, 12, 0x40), 0, true, true},
	}
	runScanCases(t, tests)
}

// FuzzScan checks that the decoder, of either format, never panics, that
// what it accepts re-encodes to exactly the bytes it consumed, and that a
// clean end is followed by zeros only.
func FuzzScan(f *testing.F) {
	f.Add(segV2(appendRecord(nil, typeEntry, []byte("abc"))))
	f.Add(segV2(appendRecord(appendRecord(nil, typeHardState, []byte{8, 1}), typeSnapshotMark, nil)))
	f.Add(appendRecordV1(nil, typeEntry, []byte("abc")))
	f.Add(appendRecordV1(appendRecordV1(nil, typeHardState, []byte{8, 1}), typeSnapshotMark, nil))
	f.Add(make([]byte, 30))
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := scan(data)
		fr, start := frameOf(data)
		re := append([]byte(nil), data[:start]...)
		for _, rec := range r.records {
			if rec.off != int64(len(re)) {
				t.Fatalf("record at %d, want %d", rec.off, len(re))
			}
			if _, ok := fr.(v1Frame); ok {
				re = appendRecordV1(re, rec.typ, rec.payload)
			} else {
				re = appendRecord(re, rec.typ, rec.payload)
			}
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
	for _, v1 := range []bool{false, true} {
		var data []byte
		enc, h := appendRecord, headerSize
		if v1 {
			enc, h = appendRecordV1, headerSizeV1
		} else {
			data = segV2()
		}
		var second int
		for i, p := range []string{"mmmm", "aaaa", "bbbb", "cccc"} {
			if i == 1 {
				second = len(data)
			}
			data = enc(data, typeEntry, []byte(p))
		}
		data[second+h] ^= 1       // corrupt the second record
		data = data[:len(data)-2] // tear the last
		if r := scan(data); !r.corrupt || r.end != int64(second) {
			t.Fatalf("v1=%v: scan: end %d corrupt %v; want corruption at %d", v1, r.end, r.corrupt, second)
		}
	}
}

// BenchmarkScanGarbage bounds the cost of looking for valid records after a
// bad one in a segment full of random bytes.
func BenchmarkScanGarbage(b *testing.B) {
	garbage := make([]byte, 4<<20)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range garbage {
		garbage[i] = byte(rng.Uint32())
	}
	for _, v1 := range []bool{false, true} {
		b.Run(fmt.Sprintf("v1=%v", v1), func(b *testing.B) {
			data := concat(segV2(appendRecord(nil, typeSnapshotMark, nil)), garbage)
			if v1 {
				data = concat(appendRecordV1(nil, typeSnapshotMark, nil), garbage)
			}
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if r := scan(data); r.bad == nil || len(r.records) != 1 {
					b.Fatal("garbage scanned clean")
				}
			}
		})
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
