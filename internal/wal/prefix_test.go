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
	a := appendRecord(nil, typeEntry, []byte("first"))
	b := appendRecord(nil, typeEntry, []byte("second"))
	whole := append(append([]byte{}, a...), b...)
	for _, tc := range []struct {
		name string
		data []byte
		want int
	}{
		{"records then padding", append(append([]byte{}, whole...), make([]byte, 64)...), len(whole)},
		{"a hole before a later record", append(append(append([]byte{}, a...), make([]byte, len(b))...), b...), len(a)},
		{"a torn last record", append(append([]byte{}, a...), b[:len(b)-2]...), len(a)},
		{"nothing written", make([]byte, 32), 0},
	} {
		if got := ValidPrefix(tc.data); got != int64(tc.want) {
			t.Errorf("%s: ValidPrefix = %d, want %d", tc.name, got, tc.want)
		}
		if got, err := ValidPrefixReader(bytes.NewReader(tc.data), int64(len(tc.data))); err != nil || got != int64(tc.want) {
			t.Errorf("%s: ValidPrefixReader = %d, %v, want %d", tc.name, got, err, tc.want)
		}
	}
}
