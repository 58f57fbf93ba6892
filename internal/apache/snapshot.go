package apache

import (
	"compress/gzip"
	"fmt"
	"io"
	"strings"

	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/internal/tree"
)

// File magics and the format version Apache 3.4 through 3.9 write.
const (
	snapMagic   = 0x5A4B534E // "ZKSN"
	logMagic    = 0x5A4B4C47 // "ZKLG"
	fileVersion = 2
	// openACLID is the ACL cache id of the open ACL, which needs no entry.
	openACLID = -1
	// DigestVersion is the DigestCalculator version this package
	// computes; a digest stored with another version is not compared.
	DigestVersion = 2
)

// Compression is how a snapshot file is stored, as its name says.
type Compression uint8

// The compressions zookeeper.snapshot.compression.method writes.
const (
	Plain Compression = iota
	Gzip
	Snappy
)

// Snapshot is what a snapshot file holds besides its nodes.
type Snapshot struct {
	DBID     int64
	Sessions []Session
	Nodes    int
	// Digest is the tree's digest the file stores (3.6+), nil if none.
	Digest *Digest
}

// Session is a live session: its id and timeout.
type Session struct {
	ID        int64
	TimeoutMs int32
}

// Digest is a tree digest and the zxid it was taken at (ZxidDigest).
type Digest struct {
	Zxid    int64
	Version int32
	Value   int64
}

// Node is one znode as a snapshot stores it. Path "/" is the root.
type Node struct {
	Path string
	Data []byte
	ACL  []jute.ACL
	Stat tree.StatPersisted
}

// ReadSnapshot decodes a snapshot stream (compressed as c says; name is
// for errors) and calls fn for each node, parents first. fn sees nodes
// before the checksum at the end is checked: on an error the caller must
// discard what it built. fn's error stops the read and is returned.
func ReadSnapshot(r io.Reader, name string, c Compression, opts Options, fn func(*Node) error) (*Snapshot, error) {
	var body io.Reader = r
	switch c {
	case Gzip:
		gz, err := gzip.NewReader(r)
		if err != nil {
			return nil, &FileError{File: name, Err: fmt.Errorf("%w: gzip: %w", ErrCorrupt, err)}
		}
		body = gz
	case Snappy:
		body = newSnappyReader(r, name)
	}
	d := newRd(body, name, opts.maxLen())
	s, err := readSnapshot(d, fn)
	if err != nil {
		return nil, d.fail(err)
	}
	return s, nil
}

func readSnapshot(r *rd, fn func(*Node) error) (*Snapshot, error) {
	s := &Snapshot{}
	if err := readFileHeader(r, snapMagic, "snapshot"); err != nil {
		return nil, err
	}
	var err error
	if s.DBID, err = r.int64("dbid"); err != nil {
		return nil, err
	}
	if s.Sessions, err = readSessions(r); err != nil {
		return nil, err
	}
	acls, err := readACLCache(r)
	if err != nil {
		return nil, err
	}
	if s.Nodes, err = readNodes(r, acls, fn); err != nil {
		return nil, err
	}
	if err := r.seal("snapshot"); err != nil {
		return nil, err
	}
	// The trailers are optional: a file of an older release ends here.
	if r.atEOF() {
		return s, nil
	}
	if s.Digest, err = readDigest(r); err != nil {
		return nil, err
	}
	if err := r.seal("digest"); err != nil {
		return nil, err
	}
	if !r.atEOF() {
		// 3.9's lastProcessedZxid.
		if _, err := r.int64("last processed zxid"); err != nil {
			return nil, err
		}
		if err := r.seal("last processed zxid"); err != nil {
			return nil, err
		}
	}
	if !r.atEOF() {
		return nil, r.corrupt("data after the last seal")
	}
	return s, nil
}

func readFileHeader(r *rd, magic int32, kind string) error {
	m, err := r.int32("magic")
	if err != nil {
		return err
	}
	if m != magic {
		return r.corrupt("magic %#x is not an Apache %s's (%#x)", uint32(m), kind, magic)
	}
	v, err := r.int32("version")
	if err != nil {
		return err
	}
	if v != fileVersion {
		return r.fail(fmt.Errorf("%w: %s format version %d (want %d)", ErrUnsupported, kind, v, fileVersion))
	}
	return nil
}

func readSessions(r *rd) ([]Session, error) {
	n, err := r.int32("session count")
	if err != nil {
		return nil, err
	}
	if n < 0 {
		return nil, r.corrupt("session count %d", n)
	}
	// Grown as sessions arrive: the count may lie.
	var out []Session
	for range n {
		id, err := r.int64("session id")
		if err != nil {
			return nil, err
		}
		to, err := r.int32("session timeout")
		if err != nil {
			return nil, err
		}
		out = append(out, Session{ID: id, TimeoutMs: to})
	}
	return out, nil
}

func readACLCache(r *rd) (map[int64][]jute.ACL, error) {
	n, err := r.int32("ACL cache size")
	if err != nil {
		return nil, err
	}
	if n < 0 {
		return nil, r.corrupt("ACL cache size %d", n)
	}
	acls := make(map[int64][]jute.ACL)
	for range n {
		id, err := r.int64("ACL id")
		if err != nil {
			return nil, err
		}
		list, err := readACLs(r)
		if err != nil {
			return nil, err
		}
		if list == nil {
			return nil, r.corrupt("ACL %d: null list", id)
		}
		acls[id] = list
	}
	return acls, nil
}

func readACLs(r *rd) ([]jute.ACL, error) {
	n, err := r.int32("ACL count")
	if err != nil {
		return nil, err
	}
	if n == -1 {
		return nil, nil
	}
	if n < 0 {
		return nil, r.corrupt("ACL count %d", n)
	}
	list := make([]jute.ACL, 0, min(n, 16))
	for range n {
		var a jute.ACL
		if a.Perms, err = r.int32("ACL perms"); err != nil {
			return nil, err
		}
		if a.ID.Scheme, err = r.str("ACL scheme"); err != nil {
			return nil, err
		}
		if a.ID.ID, err = r.str("ACL id"); err != nil {
			return nil, err
		}
		list = append(list, a)
	}
	return list, nil
}

var openACL = []jute.ACL{{Perms: jute.PermAll, ID: jute.Id{Scheme: "world", ID: "anyone"}}}

func readNodes(r *rd, acls map[int64][]jute.ACL, fn func(*Node) error) (int, error) {
	count := 0
	for {
		path, err := r.str("node path")
		if err != nil {
			return count, err
		}
		if path == "/" {
			return count, nil
		}
		if path == "" {
			path = "/"
		} else if !strings.HasPrefix(path, "/") {
			return count, r.corrupt("node path %.64q does not start with /", path)
		}
		n := Node{Path: path}
		if n.Data, err = r.buffer(path + " data"); err != nil {
			return count, err
		}
		id, err := r.int64(path + " ACL id")
		if err != nil {
			return count, err
		}
		if id == openACLID {
			n.ACL = openACL
		} else if n.ACL = acls[id]; n.ACL == nil {
			return count, r.corrupt("%s: ACL id %d is not in the ACL cache", path, id)
		}
		if n.Stat, err = readStat(r, path); err != nil {
			return count, err
		}
		if err := fn(&n); err != nil {
			return count, r.fail(err)
		}
		count++
	}
}

func readStat(r *rd, path string) (tree.StatPersisted, error) {
	var s tree.StatPersisted
	var err error
	for _, p := range [...]*int64{&s.Czxid, &s.Mzxid, &s.Ctime, &s.Mtime} {
		if *p, err = r.int64(path + " stat"); err != nil {
			return s, err
		}
	}
	for _, p := range [...]*int32{&s.Version, &s.Cversion, &s.Aversion} {
		if *p, err = r.int32(path + " stat"); err != nil {
			return s, err
		}
	}
	for _, p := range [...]*int64{&s.EphemeralOwner, &s.Pzxid} {
		if *p, err = r.int64(path + " stat"); err != nil {
			return s, err
		}
	}
	return s, nil
}

// readDigest reads a ZxidDigest; a zxid of 0 is Apache's "no digest".
func readDigest(r *rd) (*Digest, error) {
	var d Digest
	var err error
	if d.Zxid, err = r.int64("digest zxid"); err != nil {
		return nil, err
	}
	if d.Version, err = r.int32("digest version"); err != nil {
		return nil, err
	}
	if d.Version < 2 {
		// The old version stored the digest as a hex string.
		s, err := r.str("digest")
		if err != nil {
			return nil, err
		}
		var v uint64
		if _, err := fmt.Sscanf(s, "%x", &v); err != nil && s != "" {
			return nil, r.corrupt("digest %q is not hex", s)
		}
		d.Value = int64(v)
	} else if d.Value, err = r.int64("digest"); err != nil {
		return nil, err
	}
	if d.Zxid <= 0 {
		return nil, nil
	}
	return &d, nil
}
