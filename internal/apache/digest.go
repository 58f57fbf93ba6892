package apache

import "github.com/zoohq/zoo/internal/tree"

// NodeDigest is Apache's digest of one node (DigestCalculator, version
// 2), as the tree keeps it: tree.NodeApacheDigest.
func NodeDigest(path string, data []byte, s *tree.StatPersisted) uint64 {
	return uint64(tree.NodeApacheDigest(path, data, s))
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
