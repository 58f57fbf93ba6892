package tree

import (
	"encoding/binary"
	"unsafe"
)

// bufStore holds every node's name and data, so that the node slab holds
// no pointers and Go's collector never visits a node (issue 17). With a
// pointer per node to its own buffer, a collection had to trace 3M
// pointers and mark 3M objects at 3M znodes, and sweep their spans: about
// 4 µs of every write at that size, against under 1 µs at 10k znodes.
// Here the collector sees a few thousand large pointer-free chunks.
//
// Each name and data is one record, appended to the chunk being filled
// and never written again: a string or slice handed out of a record stays
// valid however the store changes later, since the chunk it points into
// stays allocated while anything points into it.
//
// A record is an 8-byte header (the owner's node id and the payload's
// length) and the payload, the name then the data. When a record is
// freed its chunk counts fewer live bytes. A chunk with no live bytes is
// dropped. A chunk under two thirds live is queued for compaction: its
// live records are copied to the chunk being filled and their nodes
// pointed at the copies, found through the headers. Copying at most the
// two thirds that are live, after at least a third was freed, costs at
// most two bytes copied per byte freed, and holds the store to 1.5 times
// its live bytes under any pattern of changes. (At half, a 3M-znode
// server after scale.sh's setData windows held 17% more RSS than with a
// malloc'd buffer per node, whose freed slots the allocator reuses at
// once.)
//
// Queued chunks wait until they hold more than slack dead bytes, then the
// emptiest are compacted first. The records of znodes that change often
// die young: waiting lets their chunks empty and be dropped without a
// copy. With Table 1's setData on 1,000 znodes of 1 KiB, compacting each
// chunk as it was queued copied 1.4 bytes per byte written and took 7% of
// the server's CPU. The store then holds at most 1.5 times its live bytes
// plus slack.
//
// Open Frozen views read the nodes' records through the chunk table as
// it was at their freeze, so compaction, which moves records, waits until
// they are closed; a dropped chunk's number may be reused at once, since
// a view keeps the chunks it saw.
type bufStore struct {
	chunks []bufChunk // by number; 0 is never used, so that no record has ref 0
	free   []uint32   // numbers of dropped chunks
	cur    uint32     // the chunk being filled, 0 before the first
	fill   int        // bytes used in cur
	// pending are the chunks under two thirds live, queued for
	// compaction; deadPending counts the bytes in them not live.
	pending     []uint32
	deadPending int
	// chunkBytes is the size of a shared chunk and slack the dead bytes
	// pending chunks may hold before compaction; tests shrink both.
	chunkBytes int
	slack      int
}

// bufChunk is one chunk of the store.
type bufChunk struct {
	b    []byte // nil once dropped
	live int    // bytes in live records, headers included
	at   int    // 1 + its index in pending; 0 if not queued
}

// bufRef names a record: its chunk's number in the high 32 bits, the
// offset of its payload in the low. 0 is no record: empty name and data.
type bufRef uint64

const (
	bufHeader     = 8
	bufChunkBytes = 256 << 10
	bufSlack      = 16 << 20 // 64 chunks
)

func newBufStore() bufStore {
	return bufStore{chunks: make([]bufChunk, 1), chunkBytes: bufChunkBytes, slack: bufSlack}
}

// add appends a record of name and data for the node owner.
func (s *bufStore) add(owner nodeID, name string, data []byte) bufRef {
	size := len(name) + len(data)
	if size == 0 {
		return 0
	}
	need := bufHeader + size
	var c uint32
	var off int
	if need > s.chunkBytes/8 {
		// Large data gets a chunk of its own, dropped when it is freed,
		// rather than wasting the end of a shared one.
		c = s.newChunk(need)
	} else {
		if s.cur == 0 || s.fill+need > len(s.chunks[s.cur].b) {
			s.retire()
			s.cur, s.fill = s.newChunk(s.chunkBytes), 0
		}
		c, off = s.cur, s.fill
		s.fill += need
	}
	ch := &s.chunks[c]
	rec := ch.b[off : off+need]
	binary.LittleEndian.PutUint32(rec, uint32(owner))
	binary.LittleEndian.PutUint32(rec[4:], uint32(size))
	copy(rec[bufHeader+copy(rec[bufHeader:], name):], data)
	ch.live += need
	return bufRef(uint64(c)<<32 | uint64(off+bufHeader))
}

// sparse reports whether a chunk of size bytes with live bytes in use is
// due for compaction.
func sparse(live, size int) bool { return live*3 < size*2 }

// retire stops filling cur, queueing it if it is already sparse.
func (s *bufStore) retire() {
	if s.cur != 0 {
		c := s.cur
		s.cur = 0
		s.check(c)
	}
}

func (s *bufStore) newChunk(size int) uint32 {
	ch := bufChunk{b: make([]byte, size)}
	if n := len(s.free); n > 0 {
		c := s.free[n-1]
		s.free = s.free[:n-1]
		s.chunks[c] = ch
		return c
	}
	s.chunks = append(s.chunks, ch)
	return uint32(len(s.chunks) - 1)
}

// release frees the record ref of size payload bytes.
func (s *bufStore) release(ref bufRef, size int) {
	if ref == 0 {
		return
	}
	c := uint32(ref >> 32)
	ch := &s.chunks[c]
	ch.live -= bufHeader + size
	if ch.at != 0 {
		s.deadPending += bufHeader + size
	}
	s.check(c)
}

// check drops chunk c if nothing in it is live and queues it for
// compaction if under two thirds is; the chunk being filled waits until
// it is full.
func (s *bufStore) check(c uint32) {
	ch := &s.chunks[c]
	switch {
	case c == s.cur:
	case ch.live == 0:
		if ch.at != 0 {
			s.unqueue(c)
		}
		*ch = bufChunk{}
		s.free = append(s.free, c)
	case ch.at == 0 && sparse(ch.live, len(ch.b)):
		s.pending = append(s.pending, c)
		ch.at = len(s.pending)
		s.deadPending += len(ch.b) - ch.live
	}
}

// unqueue takes chunk c out of pending.
func (s *bufStore) unqueue(c uint32) {
	ch := &s.chunks[c]
	s.deadPending -= len(ch.b) - ch.live
	last := s.pending[len(s.pending)-1]
	s.pending[ch.at-1] = last
	s.chunks[last].at = ch.at
	s.pending = s.pending[:len(s.pending)-1]
	ch.at = 0
}

// emptiest returns the pending chunk with the fewest live bytes, which
// is the cheapest to compact.
func (s *bufStore) emptiest() uint32 {
	best := s.pending[0]
	for _, c := range s.pending[1:] {
		if s.chunks[c].live < s.chunks[best].live {
			best = c
		}
	}
	return best
}

// size returns the bytes the store holds in chunks and, of those, in
// live records. It walks the chunk table: for tests and checks.
func (s *bufStore) size() (held, live int) {
	for _, ch := range s.chunks {
		held += len(ch.b)
		live += ch.live
	}
	return held, live
}

// name returns n's name ("" for the root), sharing the store's bytes.
func (s *bufStore) name(n *node) string { return recName(s.chunks, n.buf, n.nameLen) }

// data returns n's data, shared: callers must not modify it.
func (s *bufStore) data(n *node) []byte { return recData(s.chunks, n.buf, n.nameLen, n.dataLen) }

func recName(chunks []bufChunk, ref bufRef, nameLen uint32) string {
	if nameLen == 0 {
		return ""
	}
	b := chunks[ref>>32].b[uint32(ref):]
	return unsafe.String(&b[0], nameLen)
}

func recData(chunks []bufChunk, ref bufRef, nameLen, dataLen uint32) []byte {
	switch dataLen {
	case nilData:
		return nil
	case 0:
		return emptyData
	}
	off := uint32(ref) + nameLen
	return chunks[ref>>32].b[off : off+dataLen : off+dataLen]
}

// setBuf gives node id name and data in a new record and frees its old
// one, which readers and frozen views may still hold.
func (t *Tree) setBuf(id nodeID, name string, data []byte) {
	n := t.nodes.at(id)
	old, oldSize := n.buf, n.payload()
	n.nameLen = uint32(len(name))
	n.dataLen = uint32(len(data))
	if data == nil {
		n.dataLen = nilData
	}
	n.buf = t.bufs.add(id, name, data)
	t.bufs.release(old, oldSize)
	t.compact()
}

// setData replaces node id's data and keeps its name.
func (t *Tree) setData(id nodeID, data []byte) { t.setBuf(id, t.bufs.name(t.nodes.at(id)), data) }

// dropBuf frees node id's record, before its slot is freed.
func (t *Tree) dropBuf(id nodeID) {
	n := t.nodes.at(id)
	t.bufs.release(n.buf, n.payload())
	n.buf = 0
	t.compact()
}

// compact moves the live records out of the emptiest pending chunks
// while they hold more than slack dead bytes, if no Frozen view is open.
func (t *Tree) compact() {
	s := &t.bufs
	if s.deadPending <= s.slack {
		return
	}
	if len(t.frozen) > 0 {
		if t.dropClosed(); len(t.frozen) > 0 {
			return
		}
	}
	// Dead bytes are only in pending chunks, so pending is not empty; a
	// chunk filled by the moves is all live, so it is never queued.
	for s.deadPending > s.slack {
		t.moveRecords(s.emptiest())
	}
}

// moveRecords copies queued chunk c's live records to the chunk being
// filled; the last one's release drops c. Until then c stays queued, so
// that the moves do not queue it again.
func (t *Tree) moveRecords(c uint32) {
	s := &t.bufs
	b := s.chunks[c].b
	for off := 0; off+bufHeader <= len(b) && s.chunks[c].live > 0; {
		owner := nodeID(binary.LittleEndian.Uint32(b[off:]))
		size := int(binary.LittleEndian.Uint32(b[off+4:]))
		ref := bufRef(uint64(c)<<32 | uint64(off+bufHeader))
		off += bufHeader + size
		if size == 0 {
			break // the unused end of the chunk
		}
		if int(owner>>chunkShift) >= len(t.nodes.chunks) {
			continue
		}
		n := t.nodes.at(owner)
		if n.buf != ref {
			continue // freed
		}
		rec := b[off-size : off]
		n.buf = s.add(owner, unsafe.String(&rec[0], n.nameLen), rec[n.nameLen:])
		s.release(ref, size)
	}
}

// payload is the length of n's record's payload.
func (n *node) payload() int { return int(n.nameLen) + n.dataLength() }
