package vfs

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"time"
)

// MemFS is an in-memory FS for tests. It keeps, beside the current state,
// what a crash would leave behind, so CrashClone can simulate power loss:
// a file's data as of its last Sync, and each directory's entries as of its
// last SyncDir. Directories made by MkdirAll are durable at once (a
// simplification: callers need not sync the parents of their data dir).
//
// Names are slash-separated; relative names are relative to the root. It is
// safe for concurrent use.
type MemFS struct {
	mu   sync.Mutex
	root *memNode
}

type memNode struct {
	name  string // base name, for FileInfo
	isDir bool

	// Directories: current entries and entries as of the last SyncDir.
	children map[string]*memNode
	synced   map[string]*memNode

	// Files: current data and data as of the last Sync. Bytes of data in
	// [dirtyLo, dirtyHi) may differ from syncedData; outside it they are
	// the same wherever both reach. Sync copies only that range, so an
	// fsync of a preallocated 64 MiB log segment costs what was written
	// since the last one, not the whole file (a full copy made every
	// in-memory server's writes of large data take up to seconds).
	data             []byte
	syncedData       []byte
	dirtyLo, dirtyHi int
}

// markDirty records that data's bytes in [lo, hi) changed.
func (n *memNode) markDirty(lo, hi int) {
	if lo >= hi {
		return
	}
	if n.dirtyLo >= n.dirtyHi {
		n.dirtyLo, n.dirtyHi = lo, hi
		return
	}
	n.dirtyLo, n.dirtyHi = min(n.dirtyLo, lo), max(n.dirtyHi, hi)
}

// sync makes data durable: syncedData becomes a copy of it.
func (n *memNode) sync() {
	switch {
	case len(n.syncedData) > len(n.data):
		n.syncedData = n.syncedData[:len(n.data)]
	case len(n.syncedData) < len(n.data):
		n.syncedData = append(n.syncedData, n.data[len(n.syncedData):]...)
	}
	if lo, hi := n.dirtyLo, min(n.dirtyHi, len(n.data)); lo < hi {
		copy(n.syncedData[lo:hi], n.data[lo:hi])
	}
	n.dirtyLo, n.dirtyHi = 0, 0
}

// NewMem returns an empty in-memory file system.
func NewMem() *MemFS {
	return &MemFS{root: newDir("/")}
}

func newDir(name string) *memNode {
	return &memNode{name: name, isDir: true, children: map[string]*memNode{}, synced: map[string]*memNode{}}
}

// CrashClone returns a new MemFS holding only what was durable in fs: file
// data written after the file's last Sync is lost, and names created,
// renamed or removed after the last SyncDir of their directory revert.
// fs itself is unchanged and may still be used.
func (m *MemFS) CrashClone() *MemFS {
	m.mu.Lock()
	defer m.mu.Unlock()
	seen := map[*memNode]*memNode{}
	return &MemFS{root: crashCopy(m.root, seen)}
}

// crashCopy copies n's durable state; seen keeps a node linked under two
// names (a rename not yet synced in one dir) one node in the clone.
func crashCopy(n *memNode, seen map[*memNode]*memNode) *memNode {
	if c, ok := seen[n]; ok {
		return c
	}
	if !n.isDir {
		c := &memNode{name: n.name, data: slices.Clone(n.syncedData), syncedData: slices.Clone(n.syncedData)}
		seen[n] = c
		return c
	}
	c := newDir(n.name)
	seen[n] = c
	for name, child := range n.synced {
		cc := crashCopy(child, seen)
		c.children[name] = cc
		c.synced[name] = cc
	}
	return c
}

func split(name string) []string {
	p := path.Clean("/" + name)
	if p == "/" {
		return nil
	}
	return strings.Split(p[1:], "/")
}

// lookupDir walks to the directory holding name's last element.
func (m *MemFS) lookupDir(op, name string) (*memNode, string, error) {
	parts := split(name)
	if len(parts) == 0 {
		return nil, "", &os.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	dir := m.root
	for _, p := range parts[:len(parts)-1] {
		next, ok := dir.children[p]
		if !ok {
			return nil, "", &os.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
		}
		if !next.isDir {
			return nil, "", &os.PathError{Op: op, Path: name, Err: errNotDir}
		}
		dir = next
	}
	return dir, parts[len(parts)-1], nil
}

var errNotDir = errors.New("not a directory")

func (m *MemFS) lookup(op, name string) (*memNode, error) {
	if len(split(name)) == 0 {
		return m.root, nil
	}
	dir, base, err := m.lookupDir(op, name)
	if err != nil {
		return nil, err
	}
	n, ok := dir.children[base]
	if !ok {
		return nil, &os.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
	}
	return n, nil
}

// Create implements FS.
func (m *MemFS) Create(name string) (File, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	dir, base, err := m.lookupDir("create", name)
	if err != nil {
		return nil, err
	}
	n, ok := dir.children[base]
	switch {
	case ok && n.isDir:
		return nil, &os.PathError{Op: "create", Path: name, Err: fs.ErrExist}
	case ok:
		n.data = nil // O_TRUNC; the truncation is durable only after Sync
	default:
		n = &memNode{name: base}
		dir.children[base] = n
	}
	return &memFile{fs: m, n: n, name: name, writable: true}, nil
}

// OpenReadWrite implements FS.
func (m *MemFS) OpenReadWrite(name string) (File, error) { return m.open("open", name, true) }

// Open implements FS.
func (m *MemFS) Open(name string) (File, error) { return m.open("open", name, false) }

func (m *MemFS) open(op, name string, writable bool) (File, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, err := m.lookup(op, name)
	if err != nil {
		return nil, err
	}
	if n.isDir && writable {
		return nil, &os.PathError{Op: op, Path: name, Err: errors.New("is a directory")}
	}
	return &memFile{fs: m, n: n, name: name, writable: writable}, nil
}

// Remove implements FS.
func (m *MemFS) Remove(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	dir, base, err := m.lookupDir("remove", name)
	if err != nil {
		return err
	}
	n, ok := dir.children[base]
	if !ok {
		return &os.PathError{Op: "remove", Path: name, Err: fs.ErrNotExist}
	}
	if n.isDir && len(n.children) > 0 {
		return &os.PathError{Op: "remove", Path: name, Err: errors.New("directory not empty")}
	}
	delete(dir.children, base)
	return nil
}

// Rename implements FS. Like rename(2) it replaces an existing file.
func (m *MemFS) Rename(oldname, newname string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	odir, obase, err := m.lookupDir("rename", oldname)
	if err != nil {
		return err
	}
	n, ok := odir.children[obase]
	if !ok {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: fs.ErrNotExist}
	}
	ndir, nbase, err := m.lookupDir("rename", newname)
	if err != nil {
		return err
	}
	if old, ok := ndir.children[nbase]; ok && old.isDir {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: fs.ErrExist}
	}
	delete(odir.children, obase)
	n.name = nbase
	ndir.children[nbase] = n
	return nil
}

// MkdirAll implements FS. New directories are durable at once.
func (m *MemFS) MkdirAll(dir string, _ os.FileMode) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	cur := m.root
	for _, p := range split(dir) {
		next, ok := cur.children[p]
		if !ok {
			next = newDir(p)
			cur.children[p] = next
			cur.synced[p] = next
		} else if !next.isDir {
			return &os.PathError{Op: "mkdir", Path: dir, Err: errNotDir}
		}
		cur = next
	}
	return nil
}

// List implements FS.
func (m *MemFS) List(dir string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, err := m.lookup("readdir", dir)
	if err != nil {
		return nil, err
	}
	if !n.isDir {
		return nil, &os.PathError{Op: "readdir", Path: dir, Err: errNotDir}
	}
	names := make([]string, 0, len(n.children))
	for name := range n.children {
		names = append(names, name)
	}
	slices.Sort(names)
	return names, nil
}

// SyncDir implements FS: the directory's current entries become durable.
func (m *MemFS) SyncDir(dir string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, err := m.lookup("sync", dir)
	if err != nil {
		return err
	}
	if !n.isDir {
		return &os.PathError{Op: "sync", Path: dir, Err: errNotDir}
	}
	n.synced = make(map[string]*memNode, len(n.children))
	for name, c := range n.children {
		n.synced[name] = c
	}
	return nil
}

// Stat implements FS.
func (m *MemFS) Stat(name string) (os.FileInfo, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, err := m.lookup("stat", name)
	if err != nil {
		return nil, err
	}
	return n.info(), nil
}

func (n *memNode) info() os.FileInfo {
	return memInfo{name: n.name, size: int64(len(n.data)), dir: n.isDir}
}

type memFile struct {
	fs       *MemFS
	n        *memNode
	name     string
	pos      int64
	writable bool
	closed   bool
}

var errClosed = errors.New("file already closed")

func (f *memFile) check(op string, write bool) error {
	if f.closed {
		return &os.PathError{Op: op, Path: f.name, Err: errClosed}
	}
	if write && !f.writable {
		return &os.PathError{Op: op, Path: f.name, Err: errors.New("bad file descriptor")}
	}
	if f.n.isDir && op != "stat" && op != "close" {
		return &os.PathError{Op: op, Path: f.name, Err: errors.New("is a directory")}
	}
	return nil
}

func (f *memFile) Read(p []byte) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check("read", false); err != nil {
		return 0, err
	}
	if f.pos >= int64(len(f.n.data)) {
		return 0, io.EOF
	}
	n := copy(p, f.n.data[f.pos:])
	f.pos += int64(n)
	return n, nil
}

func (f *memFile) ReadAt(p []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check("read", false); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, &os.PathError{Op: "read", Path: f.name, Err: fs.ErrInvalid}
	}
	if off >= int64(len(f.n.data)) {
		return 0, io.EOF
	}
	n := copy(p, f.n.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (f *memFile) Write(p []byte) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check("write", true); err != nil {
		return 0, err
	}
	end := f.pos + int64(len(p))
	if old := int64(len(f.n.data)); end > old {
		f.n.data = append(f.n.data, make([]byte, end-old)...)
		f.n.markDirty(int(min(old, f.pos)), int(end)) // a gap before pos is zeros now
	}
	copy(f.n.data[f.pos:], p)
	f.n.markDirty(int(f.pos), int(end))
	f.pos = end
	return len(p), nil
}

// Seek sets the offset of the next Read or Write, as os.File's does.
func (f *memFile) Seek(offset int64, whence int) (int64, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check("seek", false); err != nil {
		return 0, err
	}
	switch whence {
	case io.SeekCurrent:
		offset += f.pos
	case io.SeekEnd:
		offset += int64(len(f.n.data))
	}
	if offset < 0 {
		return 0, &os.PathError{Op: "seek", Path: f.name, Err: fs.ErrInvalid}
	}
	f.pos = offset
	return offset, nil
}

func (f *memFile) Close() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check("close", false); err != nil {
		return err
	}
	f.closed = true
	return nil
}

func (f *memFile) Sync() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check("sync", false); err != nil {
		return err
	}
	f.n.sync()
	return nil
}

func (f *memFile) Truncate(size int64) error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check("truncate", true); err != nil {
		return err
	}
	if size < 0 {
		return &os.PathError{Op: "truncate", Path: f.name, Err: fs.ErrInvalid}
	}
	if old := int64(len(f.n.data)); size <= old {
		f.n.data = f.n.data[:size:size]
	} else {
		// Bytes past the old end read as zeros, whatever syncedData
		// held there before a shrink.
		f.n.data = append(f.n.data, make([]byte, size-old)...)
		f.n.markDirty(int(old), int(size))
	}
	return nil
}

func (f *memFile) Stat() (os.FileInfo, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check("stat", false); err != nil {
		return nil, err
	}
	return f.n.info(), nil
}

type memInfo struct {
	name string
	size int64
	dir  bool
}

func (i memInfo) Name() string { return i.name }
func (i memInfo) Size() int64  { return i.size }
func (i memInfo) Mode() os.FileMode {
	if i.dir {
		return os.ModeDir | 0o755
	}
	return 0o644
}
func (i memInfo) ModTime() time.Time { return time.Time{} }
func (i memInfo) IsDir() bool        { return i.dir }
func (i memInfo) Sys() any           { return nil }

// CrashCloneTorn is CrashClone with torn writes: of a file's data written
// since its last Sync, a prefix survives, as a power cut in the middle of
// a write leaves it. keep is given the file's name and how many bytes
// changed (from the first changed byte to the end of the current data)
// and returns how many of them to keep, from 0 (CrashClone) to all.
func (m *MemFS) CrashCloneTorn(keep func(name string, changed int) int) *MemFS {
	c := m.CrashClone()
	m.mu.Lock()
	defer m.mu.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	tear(m.root, c.root, "", keep)
	return c
}

// tear copies into the clone node cn the kept prefix of n's unsynced
// changes, for every file reachable under both.
func tear(n, cn *memNode, name string, keep func(string, int) int) {
	if !n.isDir {
		lo := 0
		for lo < len(n.data) && lo < len(n.syncedData) && n.data[lo] == n.syncedData[lo] {
			lo++
		}
		changed := len(n.data) - lo
		if changed <= 0 {
			return
		}
		k := min(max(keep(name, changed), 0), changed)
		if end := lo + k; end > len(cn.data) {
			cn.data = append(cn.data, make([]byte, end-len(cn.data))...)
		}
		copy(cn.data[lo:], n.data[lo:lo+k])
		cn.syncedData = slices.Clone(cn.data)
		return
	}
	for childName, child := range n.synced {
		if cc, ok := cn.children[childName]; ok {
			tear(child, cc, path.Join(name, childName), keep)
		}
	}
}

// Files returns the names of every file in fs, sorted, for tests that
// damage one.
func (m *MemFS) Files() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	var walk func(n *memNode, name string)
	walk = func(n *memNode, name string) {
		if !n.isDir {
			out = append(out, name)
			return
		}
		for c, child := range n.children {
			walk(child, path.Join(name, c))
		}
	}
	walk(m.root, "")
	slices.Sort(out)
	return out
}

// Corrupt flips the bits of mask in the byte at off of the named file,
// in its current and its synced data: bit rot on the medium.
func (m *MemFS) Corrupt(name string, off int, mask byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, err := m.lookup("corrupt", name)
	if err != nil {
		return err
	}
	if off < len(n.data) {
		n.data[off] ^= mask
	}
	if off < len(n.syncedData) {
		n.syncedData[off] ^= mask
	}
	return nil
}
