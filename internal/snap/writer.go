package snap

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"maps"
	"path/filepath"
	"slices"

	"github.com/klauspost/compress/s2"

	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/internal/tree"
	"github.com/zoohq/zoo/internal/txn"
)

// FormatVersion is the version of the file format this build writes and
// reads.
const FormatVersion = 1

const (
	headerLen  = 40
	trailerLen = 4
	bufSize    = 64 << 10
	magic      = "ZOOSNAP\x00"
)

// Record tags.
const (
	tagACL     = 'A'
	tagNode    = 'N'
	tagSession = 'S'
	tagEnd     = 'E'
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

type header struct {
	meta  Meta
	flags uint32
}

func (h *header) append(b []byte) []byte {
	b = append(b, magic...)
	b = binary.BigEndian.AppendUint32(b, FormatVersion)
	b = binary.BigEndian.AppendUint32(b, h.flags)
	b = binary.BigEndian.AppendUint64(b, h.meta.Index)
	b = binary.BigEndian.AppendUint64(b, h.meta.Term)
	return binary.BigEndian.AppendUint64(b, uint64(h.meta.Zxid))
}

func parseHeader(b []byte) (header, error) {
	if len(b) < headerLen || string(b[:8]) != magic {
		return header{}, fmt.Errorf("%w: bad magic", ErrMalformed)
	}
	if v := binary.BigEndian.Uint32(b[8:]); v != FormatVersion {
		return header{}, fmt.Errorf("%w %d", ErrVersion, v)
	}
	h := header{flags: binary.BigEndian.Uint32(b[12:])}
	if h.flags > 0xff || !Compression(h.flags).known() {
		return header{}, fmt.Errorf("%w: flags %#x", ErrMalformed, h.flags)
	}
	h.meta = Meta{
		Index: binary.BigEndian.Uint64(b[16:]),
		Term:  binary.BigEndian.Uint64(b[24:]),
		Zxid:  int64(binary.BigEndian.Uint64(b[32:])),
	}
	return h, nil
}

// hashWriter hashes what passes through it to w.
type hashWriter struct {
	w io.Writer
	h hash.Hash32
}

func (hw *hashWriter) Write(p []byte) (int, error) {
	n, err := hw.w.Write(p)
	hw.h.Write(p[:n])
	return n, err
}

// aclKey names an ACL list by its backing array: the tree shares one slice
// among all nodes with the same list, so this finds a known list without
// encoding it. The map holding the pointer keeps the array alive, so an
// address is never reused for another list.
type aclKey struct {
	p *jute.ACL
	n int
}

// Writer is a streaming snapshot encoder. Feed it nodes (parents first)
// and sessions in any order, then Close it to write the end record and
// the trailer. Errors are sticky: after one, every call returns it. It is
// not safe for concurrent use.
type Writer struct {
	hw   hashWriter
	raw  *bufio.Writer  // header and stored body, into hw
	comp io.WriteCloser // nil unless compressing
	body *bufio.Writer  // records; raw itself if not compressing
	buf  []byte         // one record's fixed part

	byPtr     map[aclKey]uint64
	byContent map[string]uint64
	lastACL   aclKey // the list of the last node, and its id
	lastID    uint64
	prevPath  []byte

	nodes, sessions uint64
	err             error
}

// NewWriter starts a snapshot on w, writing its header. It does not close
// or sync w.
func NewWriter(w io.Writer, meta Meta, c Compression) *Writer {
	sw := &Writer{
		hw:        hashWriter{w: w, h: crc32.New(castagnoli)},
		byPtr:     make(map[aclKey]uint64),
		byContent: make(map[string]uint64),
	}
	sw.raw = bufio.NewWriterSize(&sw.hw, bufSize)
	h := header{meta: meta, flags: uint32(c)}
	_, sw.err = sw.raw.Write(h.append(sw.buf[:0]))
	switch c {
	case CompressNone:
		sw.body = sw.raw
	case CompressGzip, CompressSnappy:
		sw.comp = newCompressor(sw.raw, c)
		sw.body = bufio.NewWriterSize(sw.comp, bufSize)
	default:
		sw.err = fmt.Errorf("%w %d", ErrCompression, c)
	}
	return sw
}

// newCompressor returns the compressing writer for c (gzip or snappy) on
// w. Its Close ends the stream without closing w.
func newCompressor(w io.Writer, c Compression) io.WriteCloser {
	if c == CompressGzip {
		return gzip.NewWriter(w)
	}
	// Snappy-compatible framing (64 KiB blocks, "sNaPpY" stream
	// identifier), not S2's. Concurrency 1 compresses in the caller's
	// goroutine: the default starts a writer goroutine that an aborted
	// snapshot, which never closes the stream, would leak, and would
	// write to the file behind the caller's back.
	return s2.NewWriter(w, s2.WriterSnappyCompat(), s2.WriterConcurrency(1))
}

func (w *Writer) write(b []byte) {
	if w.err == nil {
		_, w.err = w.body.Write(b)
	}
}

// AddNode adds a znode. Its parent must have been added before it. data
// and acl are only read.
func (w *Writer) AddNode(path string, data []byte, acl []jute.ACL, st tree.StatPersisted) error {
	return addNode(w, path, data, acl, st)
}

// AddNodeBytes is AddNode with the path in a buffer the caller reuses, as
// a walk of a frozen tree hands it: a snapshot of millions of nodes then
// allocates no path string.
func (w *Writer) AddNodeBytes(path []byte, data []byte, acl []jute.ACL, st tree.StatPersisted) error {
	return addNode(w, path, data, acl, st)
}

func addNode[P string | []byte](w *Writer, path P, data []byte, acl []jute.ACL, st tree.StatPersisted) error {
	if w.err != nil {
		return w.err
	}
	id := w.aclID(acl)
	shared := commonPrefix(w.prevPath, path)
	b := append(w.buf[:0], tagNode)
	b = binary.AppendUvarint(b, uint64(shared))
	b = binary.AppendUvarint(b, uint64(len(path)-shared))
	b = append(b, path[shared:]...)
	b = appendBytesLen(b, data)
	w.write(b)
	w.write(data)
	b = binary.AppendUvarint(b[:0], id)
	for _, v := range [...]int64{st.Czxid, st.Mzxid, st.Ctime, st.Mtime,
		int64(st.Version), int64(st.Cversion), int64(st.Aversion), st.EphemeralOwner, st.Pzxid} {
		b = binary.AppendVarint(b, v)
	}
	w.write(b)
	w.buf = b
	w.prevPath = append(w.prevPath[:0], path...)
	w.nodes++
	return w.err
}

// aclID returns the id of acl in the file's table, writing its definition
// if it is new.
func (w *Writer) aclID(acl []jute.ACL) uint64 {
	var k aclKey
	if len(acl) > 0 {
		k = aclKey{&acl[0], len(acl)}
		if k == w.lastACL {
			return w.lastID // siblings mostly share one list
		}
		if id, ok := w.byPtr[k]; ok {
			w.lastACL, w.lastID = k, id
			return id
		}
	}
	def := appendACL(nil, acl)
	id, ok := w.byContent[string(def)]
	if !ok {
		id = uint64(len(w.byContent) + 1)
		w.byContent[string(def)] = id
		b := append(w.buf[:0], tagACL)
		b = binary.AppendUvarint(b, id)
		w.write(append(b, def...))
		w.buf = b
	}
	if len(acl) > 0 {
		w.byPtr[k] = id
		w.lastACL, w.lastID = k, id
	}
	return id
}

// appendACL appends an ACL list's encoding: its count+1 (0 for nil), then
// its entries.
func appendACL(b []byte, acl []jute.ACL) []byte {
	if acl == nil {
		return binary.AppendUvarint(b, 0)
	}
	b = binary.AppendUvarint(b, uint64(len(acl))+1)
	for _, a := range acl {
		b = binary.AppendVarint(b, int64(a.Perms))
		b = appendStr(b, a.ID.Scheme)
		b = appendStr(b, a.ID.ID)
	}
	return b
}

// AddSession adds a live session.
func (w *Writer) AddSession(id int64, timeoutMs int32, password []byte) error {
	if w.err != nil {
		return w.err
	}
	b := append(w.buf[:0], tagSession)
	b = binary.AppendVarint(b, id)
	b = binary.AppendVarint(b, int64(timeoutMs))
	b = appendBytesLen(b, password)
	w.write(append(b, password...))
	w.buf = b
	w.sessions++
	return w.err
}

// Close writes the end record and the trailer and flushes. It does not
// close the underlying writer. A Writer cannot be used after Close.
func (w *Writer) Close() error {
	if w.err != nil {
		return w.err
	}
	b := append(w.buf[:0], tagEnd)
	b = binary.AppendUvarint(b, w.nodes)
	b = binary.AppendUvarint(b, uint64(len(w.byContent)))
	b = binary.AppendUvarint(b, w.sessions)
	w.write(b)
	if w.comp != nil {
		w.flush(w.body)
		if w.err == nil {
			w.err = w.comp.Close()
		}
	}
	w.flush(w.raw)
	if w.err == nil {
		_, w.err = w.hw.w.Write(binary.BigEndian.AppendUint32(nil, w.hw.h.Sum32()))
	}
	if w.err != nil {
		return w.err
	}
	w.err = ErrClosed
	return nil
}

func (w *Writer) flush(b *bufio.Writer) {
	if w.err == nil {
		w.err = b.Flush()
	}
}

func appendStr(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// appendBytesLen appends the length part of a "bytes" field.
func appendBytesLen(b, v []byte) []byte {
	if v == nil {
		return binary.AppendUvarint(b, 0)
	}
	return binary.AppendUvarint(b, uint64(len(v))+1)
}

func commonPrefix[P string | []byte](a []byte, b P) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// Pending is a snapshot file being written: a Writer on a temp file in the
// snapshot directory. Commit makes it the snapshot; Abort discards it.
// The replica uses it for a fuzzy snapshot, feeding the Writer as it walks.
type Pending struct {
	w         *Writer
	fs        FS
	dir, name string
	f         File
	done      bool
}

// Create starts the snapshot file for meta in dir, which must exist.
func Create(fs FS, dir string, meta Meta, opts Options) (*Pending, error) {
	name := Name(meta.Index)
	f, err := fs.Create(filepath.Join(dir, name+tmpSuffix))
	if err != nil {
		return nil, fmt.Errorf("snap: create %s: %w", name+tmpSuffix, err)
	}
	return &Pending{w: NewWriter(f, meta, opts.Compression), fs: fs, dir: dir, name: name, f: f}, nil
}

// Writer returns the encoder to feed.
func (p *Pending) Writer() *Writer { return p.w }

// Commit finishes the file, syncs it, renames it into place and syncs the
// directory. It returns the file's name. On error the temp file is
// removed; if the error came from the final directory sync the snapshot
// may or may not survive a crash, so the caller must treat it as failed
// (a failed fsync is fatal).
func (p *Pending) Commit() (string, error) {
	if p.done {
		return "", ErrClosed
	}
	p.done = true
	tmp := filepath.Join(p.dir, p.name+tmpSuffix)
	err := p.w.Close()
	if err == nil {
		err = p.f.Sync()
	}
	if cerr := p.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = p.fs.Rename(tmp, filepath.Join(p.dir, p.name))
	}
	if err != nil {
		_ = p.fs.Remove(tmp) // best effort: Load removes it too
		return "", fmt.Errorf("snap: write %s: %w", p.name, err)
	}
	if err := p.fs.SyncDir(p.dir); err != nil {
		return "", fmt.Errorf("snap: sync dir after %s: %w", p.name, err)
	}
	return p.name, nil
}

// Abort discards the file. It is a no-op after Commit.
func (p *Pending) Abort() error {
	if p.done {
		return nil
	}
	p.done = true
	p.w.err = ErrClosed
	cerr := p.f.Close()
	if err := p.fs.Remove(filepath.Join(p.dir, p.name+tmpSuffix)); err != nil {
		return fmt.Errorf("snap: abort %s: %w", p.name, err)
	}
	return cerr
}

// Write writes st as the snapshot for meta in dir and returns its file
// name. st must not change while Write runs (a fuzzy snapshot of a live
// state is the replica's job, with Create). Sessions are written in id
// order so that equal states give equal files.
func Write(fs FS, dir string, meta Meta, st *txn.State, opts Options) (string, error) {
	p, err := Create(fs, dir, meta, opts)
	if err != nil {
		return "", err
	}
	if err := AddState(p.w, st); err != nil {
		_ = p.Abort()
		return "", fmt.Errorf("snap: write %s: %w", p.name, err)
	}
	return p.Commit()
}

// AddState feeds every node of st's tree, then every session, to w.
func AddState(w *Writer, st *txn.State) error {
	var err error
	st.Tree.Walk(func(path string, n tree.Node) bool {
		err = w.AddNode(path, n.Data, n.ACL, n.Stat)
		return err == nil
	})
	if err != nil {
		return err
	}
	for _, id := range slices.Sorted(maps.Keys(st.Sessions)) {
		s := st.Sessions[id]
		if err := w.AddSession(id, s.TimeoutMs, s.Password); err != nil {
			return err
		}
	}
	return nil
}
