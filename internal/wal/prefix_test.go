package wal

import (
	"bytes"
	"testing"
)

// TestValidPrefix: a copy of a segment read while it was appended to can
// hold a later record after zeros where an earlier one was not yet
// written; the prefix stops before the hole, and a torn record, as
// recovery would cut them.
func TestValidPrefix(t *testing.T) {
	a := segV2(appendRecord(nil, typeEntry, []byte("first")))
	b := appendRecord(nil, typeEntry, []byte("second"))
	whole := concat(a, b)
	a1 := appendRecordV1(nil, typeEntry, []byte("first"))
	b1 := appendRecordV1(nil, typeEntry, []byte("second"))
	for _, tc := range []struct {
		name string
		data []byte
		want int
	}{
		{"records then padding", concat(whole, make([]byte, 64)), len(whole)},
		{"a hole before a later record", concat(a, make([]byte, len(b)), b), len(a)},
		{"a torn last record", concat(a, b[:len(b)-2]), len(a)},
		{"nothing written", make([]byte, 32), 0},
		{"v1 records then padding", concat(a1, b1, make([]byte, 64)), len(a1) + len(b1)},
		{"v1 a hole before a later record", concat(a1, make([]byte, len(b1)), b1), len(a1)},
		{"v1 a torn last record", concat(a1, b1[:len(b1)-2]), len(a1)},
	} {
		if got := ValidPrefix(tc.data); got != int64(tc.want) {
			t.Errorf("%s: ValidPrefix = %d, want %d", tc.name, got, tc.want)
		}
		if got, err := ValidPrefixReader(bytes.NewReader(tc.data), int64(len(tc.data))); err != nil || got != int64(tc.want) {
			t.Errorf("%s: ValidPrefixReader = %d, %v, want %d", tc.name, got, err, tc.want)
		}
	}
}
