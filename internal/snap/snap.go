package snap

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/zoohq/zoo/internal/vfs"
)

// File is an open file, vfs's: Go matches the result types of FS's
// methods by identity, so this alias is what lets a vfs.FS be an FS.
type File = vfs.File

// FS is the subset of internal/vfs's FS that snap uses, with the same
// signatures, so that a vfs.FS can be passed in and tests can crash it or
// inject errors.
type FS interface {
	Create(name string) (File, error) // O_RDWR|O_CREATE|O_TRUNC
	Open(name string) (File, error)   // read-only
	Remove(name string) error
	Rename(oldname, newname string) error
	List(dir string) ([]string, error) // entry names, sorted
	SyncDir(dir string) error
}

// Errors. Each comes wrapped with the file it concerns.
var (
	// ErrChecksum means a file's CRC does not match its bytes: it was
	// damaged or truncated on disk.
	ErrChecksum = errors.New("snap: checksum mismatch")
	// ErrMalformed means a file's checksum is right but its content is not
	// a valid snapshot (or it is too short to hold one).
	ErrMalformed = errors.New("snap: malformed snapshot")
	// ErrVersion means the file was written in a format version this
	// build does not know.
	ErrVersion = errors.New("snap: unknown format version")
	// ErrNoSnapshot means the directory holds no snapshot file.
	ErrNoSnapshot = errors.New("snap: no snapshot")
	// ErrNoValidSnapshot means the directory holds snapshot files but none
	// could be loaded; the skipped list says why.
	ErrNoValidSnapshot = errors.New("snap: no loadable snapshot")
	// ErrCompression means an unknown compression method was asked for.
	ErrCompression = errors.New("snap: unknown compression method")
	// ErrClosed means a Writer was used after Close or after a failure.
	ErrClosed = errors.New("snap: writer closed")
)

// IsCorrupt reports whether err says a file's bytes are bad (checksum or
// content), as opposed to an I/O error.
func IsCorrupt(err error) bool {
	return errors.Is(err, ErrChecksum) || errors.Is(err, ErrMalformed) || errors.Is(err, ErrVersion)
}

// Meta labels a snapshot: the raft index and term it stands for and the
// zxid last applied when its walk began.
type Meta struct {
	Index uint64
	Term  uint64
	Zxid  int64
}

// Compression is how a snapshot's body is stored.
type Compression uint8

// Compression methods (zoo.cfg snapshot.compression.method: "gz" and
// "snappy", as Apache offers). A snappy body is a standard Snappy framed
// stream (google/snappy framing_format.txt), so any Snappy stream tool can
// unpack it once the header and trailer are cut off.
const (
	CompressNone   Compression = 0
	CompressGzip   Compression = 1
	CompressSnappy Compression = 2
)

// known reports whether c is a method this build writes and reads.
func (c Compression) known() bool { return c <= CompressSnappy }

// DefaultMaxLen is the default bound on one length in a file (a path, a
// node's data, a password, an ACL list's entry count).
const DefaultMaxLen = 1 << 28

// MinRetain is the fewest snapshots Purge keeps (Apache's minimum for
// autopurge.snapRetainCount).
const MinRetain = 3

// Options tune writing and loading. The zero value is valid.
type Options struct {
	// Compression of the body when writing.
	Compression Compression
	// Logger receives a warning for every snapshot Load skips. Nil: none.
	Logger *slog.Logger
	// Accept, if set, restricts Load to the snapshots it returns true for,
	// judged by the header: the replica passes the snapshots its log
	// refers to (a snapshot is committed once the log records it).
	Accept func(Meta) bool
	// MaxLen bounds every length read from a file; 0 means DefaultMaxLen.
	MaxLen int
}

func (o *Options) maxLen() uint64 {
	if o.MaxLen <= 0 {
		return DefaultMaxLen
	}
	return uint64(o.MaxLen)
}

func (o *Options) logger() *slog.Logger {
	if o.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return o.Logger
}

const (
	namePrefix = "snap."
	tmpSuffix  = ".tmp"
	hexDigits  = 16
)

// Name returns the file name of the snapshot at index.
func Name(index uint64) string {
	return fmt.Sprintf("%s%0*x", namePrefix, hexDigits, index)
}

// parseName returns the index a snapshot file name stands for.
func parseName(name string) (uint64, bool) {
	hex, ok := strings.CutPrefix(name, namePrefix)
	if !ok || len(hex) != hexDigits {
		return 0, false
	}
	i, err := strconv.ParseUint(hex, 16, 64)
	return i, err == nil
}

func isTemp(name string) bool {
	base, ok := strings.CutSuffix(name, tmpSuffix)
	if !ok {
		return false
	}
	_, ok = parseName(base)
	return ok
}

// Info describes one snapshot file as List finds it. Meta comes from the
// header, which List reads without verifying the file: Err is set if the
// header cannot be read or does not match the name.
type Info struct {
	Name string
	Meta Meta
	Err  error
}

// names returns the snapshot file names in dir, oldest first.
func names(fs FS, dir string) ([]string, error) {
	entries, err := fs.List(dir)
	if err != nil {
		return nil, fmt.Errorf("snap: list %s: %w", dir, err)
	}
	var out []string
	for _, e := range entries {
		if _, ok := parseName(e); ok {
			out = append(out, e)
		}
	}
	// Fixed-width hex sorts as the index does.
	slices.Sort(out)
	return out, nil
}

// List returns the snapshots in dir, oldest first, with the meta of their
// headers. Temp files are ignored.
func List(fs FS, dir string) ([]Info, error) {
	ns, err := names(fs, dir)
	if err != nil {
		return nil, err
	}
	out := make([]Info, 0, len(ns))
	for _, n := range ns {
		m, err := readMeta(fs, dir, n)
		out = append(out, Info{Name: n, Meta: m, Err: err})
	}
	return out, nil
}

// readMeta reads and checks the header of a file without verifying it.
func readMeta(fs FS, dir, name string) (Meta, error) {
	f, err := fs.Open(filepath.Join(dir, name))
	if err != nil {
		return Meta{}, fmt.Errorf("snap: %s: %w", name, err)
	}
	defer f.Close()
	var b [headerLen]byte
	if _, err := f.ReadAt(b[:], 0); err != nil {
		return Meta{}, fmt.Errorf("snap: %s: header: %w (%w)", name, ErrMalformed, err)
	}
	h, err := parseHeader(b[:])
	if err != nil {
		return Meta{}, fmt.Errorf("snap: %s: %w", name, err)
	}
	if idx, _ := parseName(name); idx != h.meta.Index {
		return h.meta, fmt.Errorf("snap: %s: header says index %d: %w", name, h.meta.Index, ErrMalformed)
	}
	return h.meta, nil
}

// Purge removes all but the newest keep snapshots of dir; keep below
// MinRetain counts as MinRetain. It removes no temp file, since a snapshot
// may be being written. It tries every removal and reports every failure.
func Purge(fs FS, dir string, keep int) error {
	keep = max(keep, MinRetain)
	ns, err := names(fs, dir)
	if err != nil || len(ns) <= keep {
		return err
	}
	var errs []error
	for _, n := range ns[:len(ns)-keep] {
		if err := fs.Remove(filepath.Join(dir, n)); err != nil {
			errs = append(errs, fmt.Errorf("snap: purge %s: %w", n, err))
		}
	}
	return errors.Join(errs...)
}

// CleanTemp removes the temp files a crash mid-write left in dir. Call it
// only when no snapshot is being written (Load does, at startup).
func CleanTemp(fs FS, dir string) error {
	entries, err := fs.List(dir)
	if err != nil {
		return fmt.Errorf("snap: list %s: %w", dir, err)
	}
	var errs []error
	for _, e := range entries {
		if isTemp(e) {
			if err := fs.Remove(filepath.Join(dir, e)); err != nil {
				errs = append(errs, fmt.Errorf("snap: remove %s: %w", e, err))
			}
		}
	}
	return errors.Join(errs...)
}
