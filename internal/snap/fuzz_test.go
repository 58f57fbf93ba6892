package snap

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
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
