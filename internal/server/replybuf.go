package server

import (
	"math/bits"
	"sync"

	"github.com/zoohq/zoo/internal/jute"
)

// Reply buffers. A reply is encoded into a buffer from a pool, sized to
// the power of two that holds it, and the connection's writer gives the
// buffer back once the frame is written. Allocating each reply instead
// made a 1 KiB getData reply 1.1 KiB of garbage: at 100% reads the
// allocation, its zeroing and the collections it caused were a tenth of
// the server's CPU (issue 14). Only replies go through the pools: each is
// queued on exactly one connection, unlike a watch event's frame, which
// may be queued on many.

const (
	minReplyShift = 7  // the smallest pooled buffer: 128 bytes (a setData reply is 88)
	maxReplyShift = 12 // the largest: 4 KiB; a larger reply is allocated
)

var replyPools [maxReplyShift - minReplyShift + 1]sync.Pool

func init() {
	for i := range replyPools {
		size := 1 << (minReplyShift + i)
		replyPools[i].New = func() any { b := make([]byte, 0, size); return &b }
	}
}

// replyClass is the pool for a frame of size bytes, or -1.
func replyClass(size int) int {
	shift := max(bits.Len(uint(size-1)), minReplyShift)
	if size <= 0 || shift > maxReplyShift {
		return -1
	}
	return shift - minReplyShift
}

// encodeReply encodes a reply frame, into a pooled buffer when one fits:
// owner is that buffer (nil if none), to pass on with the frame to the
// connection's queue.
func encodeReply(hdr jute.ReplyHeader, resp jute.Record) (frame []byte, owner *[]byte) {
	class := replyClass(jute.FrameSize(resp) + jute.ReplyHeaderSize)
	if class < 0 {
		return jute.AppendReply(nil, hdr, resp), nil
	}
	p := replyPools[class].Get().(*[]byte)
	frame = jute.AppendReply((*p)[:0], hdr, resp)
	if cap(frame) != cap(*p) {
		// A record larger than its estimate: AppendFrame allocated.
		replyPools[class].Put(p)
		return frame, nil
	}
	*p = frame
	return frame, p
}

// recycleReplies gives written frames' pooled buffers back, and forgets
// them.
func recycleReplies(owners []*[]byte) {
	for i, p := range owners {
		if p == nil {
			continue
		}
		owners[i] = nil
		if class := replyClass(cap(*p)); class >= 0 && 1<<(minReplyShift+class) == cap(*p) {
			*p = (*p)[:0]
			replyPools[class].Put(p)
		}
	}
}
