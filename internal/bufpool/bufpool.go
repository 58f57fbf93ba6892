// Package bufpool keeps large byte buffers for reuse, in power-of-two
// size classes.
//
// Under load a leader marshals every batch of entries it sends a follower
// into a buffer of its own (up to raft's 1 MiB per message), and a
// follower reads every frame into one; each was allocated and zeroed, then
// dropped once written or decoded: on three servers at 0% reads that was
// 5% of the leader's CPU (issue 14). Buffers smaller than the smallest
// class are cheap to allocate and are not pooled.
//
// A pooled buffer's contents are stale: whoever gets one writes every byte
// of it before reading any. And whoever puts one back must hold the only
// reference to it: a buffer put back while another slice still reads it
// is a buffer two owners write.
package bufpool

import (
	"math/bits"
	"sync"
)

const (
	minShift = 12 // 4 KiB: below this, allocating is as cheap as pooling
	maxShift = 22 // 4 MiB: raft's messages stay under 1 MiB, snapshots stream
)

var pools [maxShift - minShift + 1]sync.Pool

// class is the pool for a buffer of n bytes, or -1 if n is not pooled.
func class(n int) int {
	if n < 1<<minShift || n > 1<<maxShift {
		return -1
	}
	return bits.Len(uint(n-1)) - minShift
}

// Get returns a buffer of length n from its class, or nil if n is outside
// the pooled sizes (the caller allocates). The contents are stale.
func Get(n int) *[]byte {
	c := class(n)
	if c < 0 {
		return nil
	}
	if p, ok := pools[c].Get().(*[]byte); ok {
		*p = (*p)[:n]
		return p
	}
	b := make([]byte, n, 1<<(minShift+c))
	return &b
}

// Put gives back a buffer Get returned; the caller must not use it, or
// any slice of it, afterwards. A nil buffer, or one whose capacity is not
// a class size, is ignored.
func Put(p *[]byte) {
	if p == nil {
		return
	}
	c := class(cap(*p))
	if c < 0 || cap(*p) != 1<<(minShift+c) {
		return
	}
	*p = (*p)[:0]
	pools[c].Put(p)
}
