package snap

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"math"
	"testing"
)

// FuzzRead feeds the decoder arbitrary files. With fix set, the trailer is
// recomputed so that the input reaches the end of decoding and Restore
// instead of stopping at the checksum. Read must never panic, and must
// return a state only with a nil error. TestLyingLength covers allocation
// bounds; MaxLen keeps a fuzzed length from growing a buffer far.
func FuzzRead(f *testing.F) {
	for _, tc := range compressions {
		f.Add(encode(f, smallState(f), tc.c), false)
		f.Add(encode(f, smallState(f), tc.c), true)
	}
	f.Add(seal(minimal, 0, 1), true)
	f.Add(seal(compressed(f, CompressSnappy, minimal), 2, 1), true)
	f.Fuzz(func(t *testing.T, b []byte, fix bool) {
		if fix && len(b) >= trailerLen {
			b = bytes.Clone(b)
			binary.BigEndian.PutUint32(b[len(b)-trailerLen:], crc32.Checksum(b[:len(b)-trailerLen], castagnoli))
		}
		_, st, err := Read(bytes.NewReader(b), int64(len(b)), Options{MaxLen: 1 << 20})
		if (err == nil) != (st != nil) {
			t.Fatalf("err %v with state %v", err, st != nil)
		}
		if st != nil {
			if err := st.Tree.CheckInvariants(); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// FuzzStat checks the stat decoded from a buffer (statFrom, the load's
// fast path) against the one read a byte at a time: where the fast path
// answers, both read the same stat from the same bytes; where the bytes
// are bad, the fast path declines and the slow one reports the error.
func FuzzStat(f *testing.F) {
	var good []byte
	for _, v := range []int64{1 << 40, 1<<40 + 7, 1_700_000_000_000, 1_700_000_000_001, 3, 0, 1, 0x1234, 1<<40 + 9} {
		good = binary.AppendVarint(good, v)
	}
	f.Add(good)
	f.Add(binary.AppendVarint(nil, math.MaxInt32+1))
	f.Add(bytes.Repeat([]byte{0xff}, 20))
	f.Fuzz(func(t *testing.T, b []byte) {
		padded := append(bytes.Clone(b), make([]byte, statMaxLen)...)
		fast, n := statFrom(padded)
		d := &decoder{br: bufio.NewReader(bytes.NewReader(b))}
		slow, err := d.stat()
		switch {
		case n > 0 && n <= len(b) && (err != nil || fast != slow):
			t.Fatalf("fast path read %+v (%d bytes); byte by byte: %+v, %v", fast, n, slow, err)
		case n == 0 && err == nil:
			t.Fatalf("fast path declined a stat the slow path reads: %+v", slow)
		}
	})
}
