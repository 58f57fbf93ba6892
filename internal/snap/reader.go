package snap

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"math"
	"path/filepath"
	"slices"

	"github.com/klauspost/compress/s2"

	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/internal/tree"
	"github.com/zoohq/zoo/internal/txn"
)

// ErrNotAccepted is the reason Load gives for a snapshot that
// Options.Accept refused.
var ErrNotAccepted = errors.New("snap: not accepted")

// Skipped is a snapshot Load passed over, and why.
type Skipped struct {
	Name string
	Err  error
}

// Load loads the newest snapshot in dir that Options.Accept allows and
// whose checksum and content verify, after removing temp files left by a
// crash. Newer snapshots it could not use are returned in skipped, newest
// first, and logged. It fails with ErrNoSnapshot if dir holds none and
// ErrNoValidSnapshot if none could be loaded; it never returns a partial
// state.
func Load(fs FS, dir string, opts Options) (Meta, *txn.State, []Skipped, error) {
	log := opts.logger()
	if err := CleanTemp(fs, dir); err != nil {
		log.Warn("snap: cleaning temp files", "dir", dir, "err", err)
	}
	ns, err := names(fs, dir)
	if err != nil {
		return Meta{}, nil, nil, err
	}
	if len(ns) == 0 {
		return Meta{}, nil, nil, fmt.Errorf("%w in %s", ErrNoSnapshot, dir)
	}
	var skipped []Skipped
	for _, name := range slices.Backward(ns) {
		m, st, err := loadAccepted(fs, dir, name, opts)
		if err == nil {
			return m, st, skipped, nil
		}
		skipped = append(skipped, Skipped{Name: name, Err: err})
		if !errors.Is(err, ErrNotAccepted) {
			log.Warn("snap: skipping snapshot", "dir", dir, "file", name, "err", err)
		}
	}
	return Meta{}, nil, skipped, fmt.Errorf("%w: all %d in %s skipped", ErrNoValidSnapshot, len(ns), dir)
}

func loadAccepted(fs FS, dir, name string, opts Options) (Meta, *txn.State, error) {
	if opts.Accept != nil {
		m, err := readMeta(fs, dir, name)
		if err != nil {
			return Meta{}, nil, err
		}
		if !opts.Accept(m) {
			return Meta{}, nil, fmt.Errorf("snap: %s (index %d, term %d): %w", name, m.Index, m.Term, ErrNotAccepted)
		}
	}
	return LoadFile(fs, dir, name, opts)
}

// LoadFile reads and verifies one snapshot file. Errors name the file.
func LoadFile(fs FS, dir, name string, opts Options) (Meta, *txn.State, error) {
	f, err := fs.Open(filepath.Join(dir, name))
	if err != nil {
		return Meta{}, nil, fmt.Errorf("snap: %s: %w", name, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return Meta{}, nil, fmt.Errorf("snap: %s: %w", name, err)
	}
	m, st, err := Read(f, fi.Size(), opts)
	if err != nil {
		return Meta{}, nil, fmt.Errorf("snap: %s: %w", name, err)
	}
	if idx, ok := parseName(name); ok && idx != m.Index {
		return Meta{}, nil, fmt.Errorf("snap: %s: header says index %d: %w", name, m.Index, ErrMalformed)
	}
	return m, st, nil
}

// hashReader hashes what is read through it and remembers the first read
// error other than EOF, which is an I/O error rather than corruption.
type hashReader struct {
	r     io.Reader
	h     hash.Hash32
	ioErr error
}

func (hr *hashReader) Read(p []byte) (int, error) {
	n, err := hr.r.Read(p)
	hr.h.Write(p[:n])
	if err != nil && err != io.EOF && hr.ioErr == nil {
		hr.ioErr = err
	}
	return n, err
}

// Read decodes and verifies a snapshot of size bytes held by r (a file,
// or a snapshot received from a peer). It decodes as it hashes, then
// checks the trailer: on a mismatch it reports ErrChecksum whatever
// decoding said, and it returns a state only if both succeeded.
func Read(r io.ReaderAt, size int64, opts Options) (Meta, *txn.State, error) {
	if size < headerLen+trailerLen {
		return Meta{}, nil, fmt.Errorf("%w: %d bytes is too short", ErrMalformed, size)
	}
	hr := &hashReader{r: io.NewSectionReader(r, 0, size-trailerLen), h: crc32.New(castagnoli)}
	d := decoder{max: opts.maxLen()}
	m, derr := d.decode(hr)
	if _, err := io.Copy(io.Discard, hr); err != nil || hr.ioErr != nil {
		return Meta{}, nil, fmt.Errorf("snap: read: %w", errors.Join(hr.ioErr, err))
	}
	var tb [trailerLen]byte
	if n, err := r.ReadAt(tb[:], size-trailerLen); n < trailerLen {
		return Meta{}, nil, fmt.Errorf("snap: read trailer: %w", err)
	}
	if stored, got := binary.BigEndian.Uint32(tb[:]), hr.h.Sum32(); stored != got {
		return Meta{}, nil, fmt.Errorf("%w: stored %08x, computed %08x", ErrChecksum, stored, got)
	}
	if derr != nil {
		return Meta{}, nil, derr
	}
	return m, d.st, nil
}

// snappyMaxBlock is the largest uncompressed chunk the Snappy framing
// format allows.
const snappyMaxBlock = 64 << 10

// decoder builds a state from a snapshot's records.
type decoder struct {
	br      *bufio.Reader
	max     uint64
	scratch []byte
	// path is the node being read, prefix-decoded in place; data its
	// data. The tree copies both (tree.Restore keeps neither), so one
	// buffer each serves every node: a load makes no garbage per node.
	path, data []byte
	// rs puts the nodes into st's tree; cur is the batch being filled.
	rs       *restorer
	cur      *nodeBatch
	acls     map[uint64][]jute.ACL
	st       *txn.State
	nodes    uint64
	sessions uint64
}

func (d *decoder) decode(hr io.Reader) (Meta, error) {
	var hb [headerLen]byte
	if _, err := io.ReadFull(hr, hb[:]); err != nil {
		return Meta{}, fmt.Errorf("%w: header: %w", ErrMalformed, err)
	}
	h, err := parseHeader(hb[:])
	if err != nil {
		return Meta{}, err
	}
	raw := bufio.NewReaderSize(hr, bufSize)
	d.br = raw
	switch Compression(h.flags) {
	case CompressGzip:
		gz, err := gzip.NewReader(raw)
		if err != nil {
			return Meta{}, fmt.Errorf("%w: gzip: %w", ErrMalformed, err)
		}
		gz.Multistream(false)
		d.br = bufio.NewReaderSize(gz, bufSize)
	case CompressSnappy:
		// A Snappy stream has no end marker: it runs to the end of the
		// body, so nothing can follow it, and a cut at a chunk boundary
		// is caught by the trailer and the end record. Snappy's block
		// limit bounds what a lying chunk length can make it allocate.
		d.br = bufio.NewReaderSize(s2.NewReader(raw, s2.ReaderMaxBlockSize(snappyMaxBlock)), bufSize)
	}
	d.acls = make(map[uint64][]jute.ACL)
	d.st = txn.NewState(tree.New())
	d.rs = startRestorer(d.st.Tree)
	d.cur = <-d.rs.free
	err = d.records()
	// The restorer's error comes first: it is about an earlier node.
	if rerr := d.rs.finish(d.cur); rerr != nil {
		err = rerr
	}
	d.cur = nil
	if err != nil {
		d.st = nil
		return Meta{}, err
	}
	// Nothing may follow the end record, in the body or after it.
	if _, err := d.br.ReadByte(); err != io.EOF {
		d.st = nil
		return Meta{}, fmt.Errorf("%w: data after the end record", ErrMalformed)
	}
	if _, err := raw.ReadByte(); err != io.EOF {
		d.st = nil
		return Meta{}, fmt.Errorf("%w: data after the compressed body", ErrMalformed)
	}
	if err := d.st.Tree.Restored(); err != nil {
		d.st = nil
		return Meta{}, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	return h.meta, nil
}

func (d *decoder) records() error {
	for {
		tag, err := d.br.ReadByte()
		if err != nil {
			return d.fail("record", err)
		}
		switch tag {
		case tagACL:
			err = d.acl()
		case tagNode:
			err = d.node()
		case tagSession:
			err = d.session()
		case tagEnd:
			return d.end()
		default:
			err = fmt.Errorf("%w: unknown record tag %#x", ErrMalformed, tag)
		}
		if err != nil {
			return err
		}
	}
}

// fail wraps a read error: running out of bytes means the body is cut
// short.
func (d *decoder) fail(what string, err error) error {
	if errors.Is(err, ErrMalformed) {
		return fmt.Errorf("after %d nodes: %s: %w", d.nodes, what, err)
	}
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("%w: after %d nodes: %s: %w", ErrMalformed, d.nodes, what, err)
}

// buffered returns at least n bytes of what the reader has buffered, or
// nil if it holds fewer. Decoding from it, then discarding what was used,
// spares a call through io.ByteReader per byte (binary.ReadUvarint).
func (d *decoder) buffered(n int) []byte {
	if d.br.Buffered() < n {
		return nil
	}
	b, _ := d.br.Peek(d.br.Buffered())
	return b
}

func (d *decoder) uvarint() (uint64, error) {
	if b := d.buffered(binary.MaxVarintLen64); b != nil {
		if v, n := binary.Uvarint(b); n > 0 {
			_, _ = d.br.Discard(n) // buffered: cannot fail
			return v, nil
		}
	}
	return binary.ReadUvarint(d.br) // near the end of the buffer, or an overflow to report
}

func (d *decoder) varint32() (int32, error) {
	v, err := binary.ReadVarint(d.br)
	if err == nil && (v < math.MinInt32 || v > math.MaxInt32) {
		err = fmt.Errorf("%w: %d is not an int32", ErrMalformed, v)
	}
	return int32(v), err
}

// readN reads n bytes into a new slice. Beyond one buffer's worth it grows
// the slice as bytes arrive, so a lying n costs at most twice what the
// file really holds.
func (d *decoder) readN(n uint64) ([]byte, error) {
	if n > d.max {
		return nil, fmt.Errorf("%w: length %d over the limit %d", ErrMalformed, n, d.max)
	}
	if n <= bufSize {
		b := make([]byte, n)
		_, err := io.ReadFull(d.br, b)
		return b, err
	}
	b := make([]byte, 0, bufSize)
	for uint64(len(b)) < n {
		if len(b) == cap(b) {
			b = slices.Grow(b, int(min(n-uint64(len(b)), uint64(cap(b)))))
		}
		k := int(min(n-uint64(len(b)), uint64(cap(b)-len(b))))
		m, err := io.ReadFull(d.br, b[len(b):len(b)+k])
		b = b[:len(b)+m]
		if err != nil {
			return nil, err
		}
	}
	return b, nil
}

// bytesField reads a "bytes" field: nil for 0, else n+1.
func (d *decoder) bytesField() ([]byte, error) {
	n, err := d.uvarint()
	if err != nil || n == 0 {
		return nil, err
	}
	return d.readN(n - 1)
}

// str reads a "str" field into the scratch buffer, valid until the next
// call.
func (d *decoder) str() ([]byte, error) {
	n, err := d.uvarint()
	if err != nil {
		return nil, err
	}
	if n > bufSize {
		return d.readN(n)
	}
	d.scratch = slices.Grow(d.scratch[:0], int(n))[:n]
	_, err = io.ReadFull(d.br, d.scratch)
	return d.scratch, err
}

func (d *decoder) node() error {
	shared, err := d.uvarint()
	if err != nil {
		return d.fail("node path", err)
	}
	if shared > uint64(len(d.path)) {
		return d.fail("node path", fmt.Errorf("%w: shares %d bytes of a %d-byte path", ErrMalformed, shared, len(d.path)))
	}
	suffix, err := d.str()
	if err != nil {
		return d.fail("node path", err)
	}
	d.path = append(d.path[:shared], suffix...)
	data, err := d.dataField()
	if err != nil {
		return d.fail(string(d.path)+" data", err)
	}
	id, err := d.uvarint()
	if err != nil {
		return d.fail(string(d.path)+" acl", err)
	}
	acl, ok := d.acls[id]
	if !ok {
		return d.fail(string(d.path), fmt.Errorf("%w: undefined ACL %d", ErrMalformed, id))
	}
	st, err := d.stat()
	if err != nil {
		return d.fail(string(d.path)+" stat", err)
	}
	return d.emit(acl, st, data)
}

// emit hands the node just decoded to the restorer, a batch at a time.
// It stops the decoding once the restorer failed (errRestorer).
func (d *decoder) emit(acl []jute.ACL, st tree.StatPersisted, data []byte) error {
	d.cur.add(d.path, data, acl, st)
	d.nodes++
	if !d.cur.full() {
		return nil
	}
	d.rs.full <- d.cur
	d.cur = <-d.rs.free
	if d.rs.failed.Load() {
		return errRestorer
	}
	return nil
}

// errRestorer stops the decoding when a node did not go into the tree;
// the restorer's error says why.
var errRestorer = errors.New("snap: restore failed")

// dataField reads a node's "bytes" field into d.data, valid until the
// next node; nil data stays nil. Lengths are bounded as readN bounds them.
func (d *decoder) dataField() ([]byte, error) {
	n, err := d.uvarint()
	if err != nil || n == 0 {
		return nil, err
	}
	n--
	if n == 0 {
		return []byte{}, nil // empty, which the tree tells from nil
	}
	if n > bufSize {
		return d.readN(n) // rare: grown as bytes arrive, not reused
	}
	d.data = slices.Grow(d.data[:0], int(n))[:n]
	_, err = io.ReadFull(d.br, d.data)
	return d.data, err
}

func (d *decoder) stat() (tree.StatPersisted, error) {
	if b := d.buffered(statMaxLen); b != nil {
		if s, n := statFrom(b); n > 0 {
			_, _ = d.br.Discard(n) // buffered: cannot fail
			return s, nil
		}
	}
	var s tree.StatPersisted
	var err error
	for _, p := range [...]*int64{&s.Czxid, &s.Mzxid, &s.Ctime, &s.Mtime} {
		if *p, err = binary.ReadVarint(d.br); err != nil {
			return s, err
		}
	}
	for _, p := range [...]*int32{&s.Version, &s.Cversion, &s.Aversion} {
		if *p, err = d.varint32(); err != nil {
			return s, err
		}
	}
	for _, p := range [...]*int64{&s.EphemeralOwner, &s.Pzxid} {
		if *p, err = binary.ReadVarint(d.br); err != nil {
			return s, err
		}
	}
	return s, nil
}

// statMaxLen is the longest encoding of a stat: nine varints.
const statMaxLen = 9 * binary.MaxVarintLen64

// statFrom decodes a stat from the front of b, as stat does, and returns
// how many bytes it took; 0 if a field overflows or an int32 field is out
// of range (stat then reads it again, and says which).
func statFrom(b []byte) (tree.StatPersisted, int) {
	var s tree.StatPersisted
	off := 0
	next := func() (int64, bool) {
		v, n := binary.Varint(b[off:])
		off += max(n, 0)
		return v, n > 0
	}
	ok := true
	for _, p := range [...]*int64{&s.Czxid, &s.Mzxid, &s.Ctime, &s.Mtime} {
		v, good := next()
		*p, ok = v, ok && good
	}
	for _, p := range [...]*int32{&s.Version, &s.Cversion, &s.Aversion} {
		v, good := next()
		*p, ok = int32(v), ok && good && v >= math.MinInt32 && v <= math.MaxInt32
	}
	for _, p := range [...]*int64{&s.EphemeralOwner, &s.Pzxid} {
		v, good := next()
		*p, ok = v, ok && good
	}
	if !ok {
		return tree.StatPersisted{}, 0
	}
	return s, off
}

func (d *decoder) acl() error {
	id, err := d.uvarint()
	if err != nil {
		return d.fail("acl id", err)
	}
	if _, dup := d.acls[id]; dup {
		return d.fail("acl", fmt.Errorf("%w: ACL %d defined twice", ErrMalformed, id))
	}
	n, err := d.uvarint()
	if err != nil {
		return d.fail("acl", err)
	}
	if n > d.max {
		return d.fail("acl", fmt.Errorf("%w: %d ACL entries", ErrMalformed, n))
	}
	var list []jute.ACL // grown as entries arrive: n may lie
	if n > 0 {
		list = make([]jute.ACL, 0, min(n-1, 16))
	}
	for i := uint64(1); i < n; i++ {
		a, err := d.aclEntry()
		if err != nil {
			return d.fail("acl entry", err)
		}
		list = append(list, a)
	}
	d.acls[id] = list
	return nil
}

func (d *decoder) aclEntry() (jute.ACL, error) {
	var a jute.ACL
	var err error
	if a.Perms, err = d.varint32(); err != nil {
		return a, err
	}
	s, err := d.str()
	if err != nil {
		return a, err
	}
	a.ID.Scheme = string(s)
	if s, err = d.str(); err != nil {
		return a, err
	}
	a.ID.ID = string(s)
	return a, nil
}

func (d *decoder) session() error {
	id, err := binary.ReadVarint(d.br)
	if err != nil {
		return d.fail("session", err)
	}
	timeout, err := d.varint32()
	if err != nil {
		return d.fail("session", err)
	}
	pw, err := d.bytesField()
	if err != nil {
		return d.fail("session", err)
	}
	d.st.Sessions[id] = txn.SessionInfo{TimeoutMs: timeout, Password: pw}
	d.sessions++
	return nil
}

func (d *decoder) end() error {
	var c [3]uint64
	for i := range c {
		v, err := d.uvarint()
		if err != nil {
			return d.fail("end", err)
		}
		c[i] = v
	}
	if c != [3]uint64{d.nodes, uint64(len(d.acls)), d.sessions} {
		return fmt.Errorf("%w: end record counts %v, read %d nodes, %d ACLs, %d sessions",
			ErrMalformed, c, d.nodes, len(d.acls), d.sessions)
	}
	return nil
}
