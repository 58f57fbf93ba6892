package apache

import (
	"encoding/binary"
	"hash/crc32"
	"strings"

	"github.com/zoohq/zoo/internal/tree"
)

// NodeDigest is Apache's digest of one node (DigestCalculator, version
// 2): the CRC-32 of its path ("" for the root), its data and its stat.
// Nodes under /zookeeper/ count 0: Apache leaves them out, as their quota
// stats are kept locally by each server.
func NodeDigest(path string, data []byte, s *tree.StatPersisted) uint64 {
	if strings.HasPrefix(path, "/zookeeper/") {
		return 0
	}
	if path == "/" {
		path = ""
	}
	var b [60]byte
	binary.BigEndian.PutUint64(b[0:], uint64(s.Czxid))
	binary.BigEndian.PutUint64(b[8:], uint64(s.Mzxid))
	binary.BigEndian.PutUint64(b[16:], uint64(s.Pzxid))
	binary.BigEndian.PutUint64(b[24:], uint64(s.Ctime))
	binary.BigEndian.PutUint64(b[32:], uint64(s.Mtime))
	binary.BigEndian.PutUint32(b[40:], uint32(s.Version))
	binary.BigEndian.PutUint32(b[44:], uint32(s.Cversion))
	binary.BigEndian.PutUint32(b[48:], uint32(s.Aversion))
	binary.BigEndian.PutUint64(b[52:], uint64(s.EphemeralOwner))
	crc := crc32.ChecksumIEEE([]byte(path))
	crc = crc32.Update(crc, crc32.IEEETable, data)
	return uint64(crc32.Update(crc, crc32.IEEETable, b[:]))
}

// TreeDigest is Apache's digest of a whole tree: the sum of its nodes'.
func TreeDigest(t *tree.Tree) uint64 {
	var sum uint64
	t.Walk(func(p string, n tree.Node) bool {
		sum += NodeDigest(p, n.Data, &n.Stat)
		return true
	})
	return sum
}

// pathsDigest sums the digests of the nodes at paths that exist.
func pathsDigest(t *tree.Tree, paths []string) uint64 {
	var sum uint64
	for _, p := range paths {
		if info, ok := t.Lookup(p); ok {
			sum += NodeDigest(p, info.Data, &info.Stat)
		}
	}
	return sum
}
