package snap

import (
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/internal/tree"
)

// A load takes two cores: the decoder reads, checksums and decodes the
// file, and a restorer goroutine puts the decoded nodes into the tree
// (issue 14, restart). At 1M znodes the tree's side (path checks, the
// index, the slab, the digest) is three quarters of a load and the
// decoding the rest, so overlapping them shortens a load by up to a
// quarter. Nodes go over in batches, so that handing them over costs
// little against the work; the batches are recycled, so a load makes
// no garbage per node, and a fixed number of them bounds what the
// decoder can run ahead.

const (
	batchNodes = 2048    // nodes per batch, at most
	batchBytes = 1 << 20 // and bytes of paths and data, about
	batches    = 4       // batches in all: decoding runs at most three ahead
)

// nodeBatch is decoded nodes on their way to the tree. The nodes' paths
// and data sit back to back in bytes. size counts those and the large
// data read apart: a batch is handed over at batchNodes nodes or
// batchBytes bytes, so that what the decoder runs ahead stays a few
// megabytes even when every znode holds a megabyte.
type nodeBatch struct {
	bytes []byte
	nodes []batchNode
	size  int
}

type batchNode struct {
	pathLen int
	dataLen int    // -1: nil data
	big     []byte // data too large for bytes, read apart
	acl     []jute.ACL
	st      tree.StatPersisted
}

func (b *nodeBatch) add(path, data []byte, acl []jute.ACL, st tree.StatPersisted) {
	n := batchNode{pathLen: len(path), dataLen: len(data), acl: acl, st: st}
	b.bytes = append(b.bytes, path...)
	switch {
	case data == nil:
		n.dataLen = -1
	case len(data) > bufSize:
		n.big = data // readN's own slice, not reused
	default:
		b.bytes = append(b.bytes, data...)
	}
	b.nodes = append(b.nodes, n)
	b.size += len(path) + len(data)
}

// full reports whether the batch is to be handed over.
func (b *nodeBatch) full() bool { return len(b.nodes) == batchNodes || b.size >= batchBytes }

// reset empties the batch for reuse; it keeps no large data alive.
func (b *nodeBatch) reset() {
	clear(b.nodes)
	b.bytes, b.nodes, b.size = b.bytes[:0], b.nodes[:0], 0
}

// restorer is the goroutine that puts batches of nodes into t.
type restorer struct {
	t    *tree.Tree
	full chan *nodeBatch // decoded, to restore; closed by the decoder
	free chan *nodeBatch // restored, to fill again
	done chan struct{}   // closed when the restorer has returned
	// failed is set once a node did not go into the tree; err says
	// why, and is the decoder's to read after done.
	failed atomic.Bool
	err    error
}

func startRestorer(t *tree.Tree) *restorer {
	r := &restorer{t: t, full: make(chan *nodeBatch, batches), free: make(chan *nodeBatch, batches), done: make(chan struct{})}
	for range batches {
		r.free <- &nodeBatch{nodes: make([]batchNode, 0, batchNodes)}
	}
	go r.run()
	return r
}

// run restores every batch it is given. After a failure it restores no
// more, but goes on taking batches back, so that the decoder never waits
// for one for ever.
func (r *restorer) run() {
	defer close(r.done)
	var restored uint64
	for b := range r.full {
		if !r.failed.Load() {
			if err := r.restore(b, &restored); err != nil {
				r.err = err
				r.failed.Store(true)
			}
		}
		b.reset()
		r.free <- b
	}
}

func (r *restorer) restore(b *nodeBatch, restored *uint64) error {
	off := 0
	for i := range b.nodes {
		n := &b.nodes[i]
		p := b.bytes[off : off+n.pathLen]
		off += n.pathLen
		var data []byte
		switch {
		case n.big != nil:
			data = n.big
		case n.dataLen >= 0:
			data = b.bytes[off : off+n.dataLen : off+n.dataLen]
			off += n.dataLen
		}
		// Only for this call: Restore keeps neither path nor data.
		path := unsafe.String(unsafe.SliceData(p), len(p))
		if err := r.t.Restore(path, data, n.acl, n.st); err != nil {
			return fmt.Errorf("after %d nodes: restore %s: %w", *restored, string(p), fmt.Errorf("%w: %w", ErrMalformed, err))
		}
		*restored++
	}
	return nil
}

// finish hands over the batch being filled, if any, waits for the
// restorer to be done and returns its error.
func (r *restorer) finish(cur *nodeBatch) error {
	if cur != nil && len(cur.nodes) > 0 {
		r.full <- cur
	}
	close(r.full)
	<-r.done
	return r.err
}
