package tree

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"strings"
)

// ApacheDigest returns the tree's digest as Apache ZooKeeper computes it
// (DigestCalculator, version 2, summed as NodeHashMapImpl's AdHash): the
// 64-bit wrapping sum, over every node outside /zookeeper/, of the CRC32
// of its path ("" for the root), its data and 60 bytes of its persisted
// stat. The "hash" four-letter word and AdminServer command print it. It
// is kept up to date by every change, so reading it costs nothing.
func (t *Tree) ApacheDigest() int64 { return t.apacheDigest }

// digestSkipped is Apache's ZOOKEEPER_NODE_SUBTREE: the quota and config
// nodes are updated outside txns there, so they are left out of the digest.
const digestSkipped = "/zookeeper/"

// nodeApacheDigest is DigestCalculator.calculateDigest for one node. It
// hashes in t.digestBuf, so a write's digests (two or three nodes, twice
// each) allocate nothing: at 3M znodes every byte allocated per write
// costs the collector (issue 17). Only the writer may call it.
func (t *Tree) nodeApacheDigest(path string, n *node) int64 {
	d, buf := apacheDigest(t.digestBuf, path, t.bufs.data(n), &n.stat)
	t.digestBuf = buf
	return d
}

// NodeApacheDigest is Apache's digest of one node (DigestCalculator,
// version 2): the CRC32 of its path ("" for the root), its data and 60
// bytes of its persisted stat; 0 under /zookeeper/. The readers of
// Apache's files (internal/apache) check imported trees with it.
func NodeApacheDigest(path string, data []byte, s *StatPersisted) int64 {
	d, _ := apacheDigest(nil, path, data, s)
	return d
}

// apacheDigest is NodeApacheDigest with buf as scratch for the path's and
// the stat's bytes (crc32.Update makes whatever it hashes escape); it
// returns buf as grown, for the next call.
func apacheDigest(buf []byte, path string, data []byte, s *StatPersisted) (int64, []byte) {
	if strings.HasPrefix(path, digestSkipped) {
		return 0, buf
	}
	if path == Root {
		path = ""
	}
	// Small data goes in one buffer with the path and the stat: the CRC's
	// carry-less multiply takes 64 bytes or more at a time, and a path, a
	// small data and the stat are each under that, left to the
	// table-driven loop (which took 14% of a restart's snapshot load).
	whole := len(data) <= digestCopyMax
	b := append(buf[:0], path...)
	if whole {
		b = append(b, data...)
	}
	b = append(b, make([]byte, statDigestLen)...)
	putStatDigest(b[len(b)-statDigestLen:], s)
	if whole {
		return int64(crc32.ChecksumIEEE(b)), b
	}
	crc := crc32.Update(0, crc32.IEEETable, b[:len(path)])
	crc = crc32.Update(crc, crc32.IEEETable, data)
	crc = crc32.Update(crc, crc32.IEEETable, b[len(path):])
	return int64(crc), b
}

// digestCopyMax is the largest data apacheDigest copies next to the path
// and stat; larger data is long enough on its own (and the scratch buffer,
// which the tree keeps, stays small).
const digestCopyMax = 1 << 10

// statDigestLen is the length of the stat's part of a node's digest.
const statDigestLen = 60

// putStatDigest writes the stat's part of a node's digest to b.
func putStatDigest(b []byte, s *StatPersisted) {
	_ = b[statDigestLen-1]
	binary.BigEndian.PutUint64(b[0:], uint64(s.Czxid))
	binary.BigEndian.PutUint64(b[8:], uint64(s.Mzxid))
	binary.BigEndian.PutUint64(b[16:], uint64(s.Pzxid))
	binary.BigEndian.PutUint64(b[24:], uint64(s.Ctime))
	binary.BigEndian.PutUint64(b[32:], uint64(s.Mtime))
	binary.BigEndian.PutUint32(b[40:], uint32(s.Version))
	binary.BigEndian.PutUint32(b[44:], uint32(s.Cversion))
	binary.BigEndian.PutUint32(b[48:], uint32(s.Aversion))
	binary.BigEndian.PutUint64(b[52:], uint64(s.EphemeralOwner))
}

// undigest takes n out of the running digest before it changes; redigest
// puts it back after, and keeps its term in n.digest for the next
// undigest. Every change to a node's path, data or persisted stat is
// bracketed by the two, and a new node is redigested once linked.
func (t *Tree) undigest(n *node) { t.apacheDigest -= int64(n.digest) }

func (t *Tree) redigest(path string, n *node) {
	d := t.nodeApacheDigest(path, n)
	n.digest = uint32(d) // a CRC32: d is within uint32
	t.apacheDigest += d
}

// recomputeApacheDigest walks the whole tree; tests compare it with the
// running digest.
func (t *Tree) recomputeApacheDigest() int64 {
	var sum int64
	// Not t.nodeApacheDigest: a check may run beside readers.
	t.each(func(path string, _ nodeID, n *node) { sum += NodeApacheDigest(path, t.bufs.data(n), &n.stat) })
	return sum
}

// checkApacheDigest verifies that the running digest matches a full walk,
// and that each node's kept term is its digest.
func (t *Tree) checkApacheDigest() error {
	var stale error
	t.each(func(path string, _ nodeID, n *node) {
		if d := NodeApacheDigest(path, t.bufs.data(n), &n.stat); stale == nil && int64(n.digest) != d {
			stale = fmt.Errorf("%w: %s keeps digest %d, its digest is %d", ErrInconsistent, path, n.digest, d)
		}
	})
	if stale != nil {
		return stale
	}
	if got, want := t.apacheDigest, t.recomputeApacheDigest(); got != want {
		return fmt.Errorf("%w: running Apache digest %d, walk gives %d", ErrInconsistent, got, want)
	}
	return nil
}
