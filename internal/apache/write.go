package apache

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"hash"
	"hash/adler32"
	"io"
	"maps"
	"slices"

	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/internal/tree"
	"github.com/zoohq/zoo/internal/txn"
)

// wr writes jute values, keeping the Adler-32 of every byte (Java's
// CheckedOutputStream). Errors are sticky.
type wr struct {
	w   *bufio.Writer
	sum hash.Hash32
	b   []byte
	err error
}

func newWr(w io.Writer) *wr {
	return &wr{w: bufio.NewWriterSize(w, 64<<10), sum: adler32.New()}
}

func (w *wr) raw(p []byte) {
	if w.err == nil {
		w.sum.Write(p)
		_, w.err = w.w.Write(p)
	}
}

func (w *wr) int32(v int32) { w.b = binary.BigEndian.AppendUint32(w.b[:0], uint32(v)); w.raw(w.b) }
func (w *wr) int64(v int64) { w.b = binary.BigEndian.AppendUint64(w.b[:0], uint64(v)); w.raw(w.b) }

func (w *wr) buffer(p []byte) {
	if p == nil {
		w.int32(-1)
		return
	}
	w.int32(int32(len(p)))
	w.raw(p)
}

func (w *wr) str(s string) { w.int32(int32(len(s))); w.raw([]byte(s)) }

func (w *wr) seal() {
	w.int64(int64(w.sum.Sum32()))
	w.str("/")
}

// SnapshotName is the file name Apache gives the snapshot at zxid.
func SnapshotName(zxid int64, c Compression) string {
	name := fmt.Sprintf("snapshot.%x", zxid)
	switch c {
	case Gzip:
		name += ".gz"
	case Snappy:
		name += ".snappy"
	}
	return name
}

// WriteSnapshot writes st as Apache 3.8 writes a snapshot taken at zxid
// (which goes in the file's name, SnapshotName): sessions, the ACL cache,
// the nodes parents first, a seal, and the digest of the tree at zxid
// with its own seal. st must not change while it runs.
func WriteSnapshot(out io.Writer, st *txn.State, zxid int64, c Compression) error {
	var comp io.WriteCloser
	switch c {
	case Gzip:
		comp = gzip.NewWriter(out)
	case Snappy:
		comp = newSnappyWriter(out)
	}
	if comp != nil {
		out = comp
	}
	w := newWr(out)
	w.int32(snapMagic)
	w.int32(fileVersion)
	w.int64(-1) // dbid: Apache's FileSnap writes -1 too
	ids := slices.Sorted(maps.Keys(st.Sessions))
	w.int32(int32(len(ids)))
	for _, id := range ids {
		w.int64(id)
		w.int32(st.Sessions[id].TimeoutMs)
	}
	// The ACL cache: the tree's ACL table, by its ids.
	acls := map[uint64][]jute.ACL{}
	st.Tree.Walk(func(_ string, n tree.Node) bool {
		acls[n.ACLID] = n.ACL
		return true
	})
	w.int32(int32(len(acls)))
	for _, id := range slices.Sorted(maps.Keys(acls)) {
		w.int64(int64(id))
		writeACLs(w, acls[id])
	}
	var digest uint64
	st.Tree.Walk(func(p string, n tree.Node) bool {
		digest += NodeDigest(p, n.Data, &n.Stat)
		if p == "/" {
			p = ""
		}
		w.str(p)
		w.buffer(n.Data)
		w.int64(int64(n.ACLID))
		writeStat(w, &n.Stat)
		return w.err == nil
	})
	w.str("/")
	w.seal()
	w.int64(zxid)
	w.int32(DigestVersion)
	w.int64(int64(digest))
	w.seal()
	if w.err == nil {
		w.err = w.w.Flush()
	}
	if comp != nil && w.err == nil {
		w.err = comp.Close()
	}
	return w.err
}

func writeACLs(w *wr, acl []jute.ACL) {
	if acl == nil {
		w.int32(-1)
		return
	}
	w.int32(int32(len(acl)))
	for _, a := range acl {
		w.int32(a.Perms)
		w.str(a.ID.Scheme)
		w.str(a.ID.ID)
	}
}

func writeStat(w *wr, s *tree.StatPersisted) {
	for _, v := range [...]int64{s.Czxid, s.Mzxid, s.Ctime, s.Mtime} {
		w.int64(v)
	}
	for _, v := range [...]int32{s.Version, s.Cversion, s.Aversion} {
		w.int32(v)
	}
	w.int64(s.EphemeralOwner)
	w.int64(s.Pzxid)
}

// LogWriter writes an Apache txn log (for export and tests).
type LogWriter struct {
	w   *wr
	buf []byte
}

// NewLogWriter writes the log's file header.
func NewLogWriter(out io.Writer) *LogWriter {
	w := newWr(out)
	w.int32(logMagic)
	w.int32(fileVersion)
	w.int64(0)
	return &LogWriter{w: w}
}

// Append writes one txn record: Zoo's txn in Apache's encoding (which is
// the same for every record but createSession's), under Apache's header
// with zxid, and the digest if not nil.
func (l *LogWriter) Append(t *txn.Txn, zxid int64, d *TxnDigest) error {
	jw := jute.Writer{B: l.buf[:0]}
	jw.Long(t.SessionID)
	jw.Int(t.Cxid)
	jw.Long(zxid)
	jw.Long(t.Time)
	jw.Int(int32(t.Type))
	switch b := t.Body.(type) {
	case *txn.CreateSessionTxn:
		jw.Int(b.TimeoutMs)
	case nil:
	default:
		b.Encode(&jw)
	}
	if d != nil {
		jw.Int(d.Version)
		jw.Long(d.Tree)
	}
	l.buf = jw.B
	l.w.int64(int64(adler(l.buf)))
	l.w.buffer(l.buf)
	l.w.raw([]byte{'B'})
	return l.w.err
}

// Flush writes what is buffered.
func (l *LogWriter) Flush() error {
	if l.w.err == nil {
		l.w.err = l.w.w.Flush()
	}
	return l.w.err
}
