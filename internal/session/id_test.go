package session

import (
	"math"
	"testing"
)

func TestInitialID(t *testing.T) {
	// Expected values computed with Apache 3.8's formula in jshell:
	// ((t << 24) >>> 8) | (sid << 56), bumped by one if Long.MIN_VALUE.
	tests := []struct {
		sid, now, want int64
	}{
		{1, 1700000000000, 111411200000000000},
		{0, 0, 0},
		{1, 0, 72057594037927936},
		{255, 1700000000000, -32703988075855872},
		{128, 0, -9223372036854775807},       // would be Long.MIN_VALUE
		{128, 1 << 40, -9223372036854775807}, // clock bits above 40 are dropped
		{5, -1, 432345564227502080},
		{2, 1<<40 - 1, 216172782113718272},
		{3, 1 << 40, 216172782113783808},
		{127, 123456789, 9151322533680971776},
	}
	for _, tt := range tests {
		if got := InitialID(tt.sid, tt.now); got != tt.want {
			t.Errorf("InitialID(%d, %d) = %d (%#x), want %d", tt.sid, tt.now, got, uint64(got), tt.want)
		}
	}
}

func TestInitialIDKeepsServerByte(t *testing.T) {
	// ZOOKEEPER-1622: a signed shift would let the clock's sign bit spill
	// into the server-id byte. Every clock value must leave it intact.
	for _, sid := range []int64{1, 2, 100, 127, 200, 254} {
		for _, now := range []int64{0, 1, 1 << 39, 1<<40 - 1, 1700000000000, math.MaxInt64, -1} {
			id := InitialID(sid, now)
			if got := uint64(id) >> 56; got != uint64(sid) {
				t.Errorf("InitialID(%d, %d) = %#x: top byte %d", sid, now, uint64(id), got)
			}
			if uint16(id) != 0 && id != containerOwner+1 {
				t.Errorf("InitialID(%d, %d) = %#x: low 16 bits not zero", sid, now, uint64(id))
			}
		}
	}
}

func TestIDGen(t *testing.T) {
	tests := []struct {
		name     string
		sid, now int64
		want     []int64
	}{
		{"counts up", 1, 0, []int64{1 << 56, 1<<56 + 1, 1<<56 + 2}},
		{"skips zero", 0, 0, []int64{1, 2}},
		{"skips container marker", 128, 0, []int64{math.MinInt64 + 1, math.MinInt64 + 2}},
	}
	for _, tt := range tests {
		g := NewIDGen(tt.sid, tt.now)
		for i, want := range tt.want {
			if got := g.Next(); got != want {
				t.Errorf("%s: id %d = %#x, want %#x", tt.name, i, uint64(got), uint64(want))
			}
		}
	}
}
