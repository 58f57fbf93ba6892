package wal

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/zoohq/zoo/internal/vfs"
)

// Errors returned by the WAL.
var (
	// ErrCorrupt marks a log that cannot be trusted: a bad record before the
	// tail, a missing segment, entries that do not follow each other. The
	// error is a *CorruptionError when a file and offset are known.
	ErrCorrupt = errors.New("wal: corrupt log")
	// ErrBroken wraps every error after a write or sync failed: the WAL
	// refuses further appends and never retries an fsync.
	ErrBroken = errors.New("wal: broken by an earlier I/O error")
	// ErrClosed is returned by calls on a closed WAL.
	ErrClosed = errors.New("wal: closed")
	// ErrOutOfOrder is returned by Save for entries that do not follow one
	// another or that leave a gap after the log; nothing is written (a gap
	// in the log would make it unreadable) and the WAL stays usable.
	ErrOutOfOrder = errors.New("wal: entries out of order")
)

// CorruptionError says where a log is corrupt. It matches ErrCorrupt.
type CorruptionError struct {
	File   string
	Offset int64
	Reason error
}

func (e *CorruptionError) Error() string {
	return fmt.Sprintf("wal: corrupt log: %s at offset %d: %v", e.File, e.Offset, e.Reason)
}

// Is makes errors.Is(err, ErrCorrupt) hold.
func (e *CorruptionError) Is(target error) bool { return target == ErrCorrupt }

// Unwrap returns the reason.
func (e *CorruptionError) Unwrap() error { return e.Reason }

// DefaultSegmentSize is the preallocated size of a segment.
const DefaultSegmentSize = 64 << 20

// Options configure a WAL. The zero value is usable.
type Options struct {
	// SegmentSize is the size segments are preallocated to; a segment is
	// cut when the next Save would not fit (one Save never spans segments,
	// so a large batch may grow a segment past it). Default 64 MiB.
	SegmentSize int64
	// Logger gets torn-tail cuts and purges. nil discards.
	Logger *slog.Logger
	// NoSync skips the fsync of appended records (zoo.cfg forceSync=no):
	// a machine failure, not only a process crash, may then lose
	// acknowledged records. Segment cuts and removals are still synced.
	NoSync bool
	// LazyCommit writes a HardState that only advances the commit index
	// without an fsync: the next Save's sync covers it. Raft needs the
	// term, the vote and the entries durable, not the commit index, which
	// the leader tells again; a member of an ensemble may come back with
	// an older one and apply the rest when the leader says. A one-voter
	// group must not use it: its commit index is its own say.
	// SetLazyCommit changes it as the membership changes.
	LazyCommit bool
}

func (o *Options) ensureDefaults() {
	if o.SegmentSize <= 0 {
		o.SegmentSize = DefaultSegmentSize
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

// State is what Open recovered: the newest HardState and snapshot marker,
// and the entries after the snapshot (contiguous from Snapshot.Index+1).
type State struct {
	HardState raftpb.HardState
	Snapshot  raftpb.SnapshotMetadata
	Entries   []raftpb.Entry
	// Markers are the snapshots recovery may start from, oldest first:
	// every marker the log still holds the entries after, Snapshot last.
	// Should the newest snapshot's file be damaged, ReadFrom gives the
	// entries after an older one.
	Markers []raftpb.SnapshotMetadata
	// locs are where Entries were read from, so that the Storage need not
	// hold them all (nil or short: unknown).
	locs []loc
}

// LastIndex is the index of the last entry, or the snapshot's index.
func (s *State) LastIndex() uint64 {
	if n := len(s.Entries); n > 0 {
		return s.Entries[n-1].Index
	}
	return s.Snapshot.Index
}

type segment struct {
	seq, first uint64
}

func (s segment) name() string { return fmt.Sprintf("%016x-%016x.wal", s.seq, s.first) }

func parseSegmentName(name string) (segment, bool) {
	var s segment
	base, ok := strings.CutSuffix(name, ".wal")
	if !ok || len(base) != 33 {
		return s, false
	}
	if _, err := fmt.Sscanf(base, "%016x-%016x", &s.seq, &s.first); err != nil {
		return s, false
	}
	return s, s.name() == name
}

// WAL is an open log. It is safe for concurrent use, though raft's Ready
// loop is expected to be its only writer.
type WAL struct {
	fs   vfs.FS
	dir  string
	opts Options

	mu     sync.Mutex
	segs   []segment // live segments, oldest first; the last is active
	f      vfs.File  // the active segment
	off    int64     // write offset in f
	base   int64     // offset in f just past the segment's header records
	buf    []byte
	starts []int64 // where each entry's record starts in buf, in a Save
	err    error   // sticky: the first write or sync error
	closed bool
	// unsynced: the active segment has records not yet fsynced (a lazy
	// commit, or NoSync); a cut syncs them first.
	unsynced bool

	// What the next segment's header repeats, and what ReleaseTo may drop.
	hs        raftpb.HardState
	snap      raftpb.SnapshotMetadata
	markers   []raftpb.SnapshotMetadata // retained, oldest first; snap last
	lastIndex uint64
}

// Open recovers the log in dir (creating dir and a first segment if there
// is none) and returns it ready for appends, with the recovered state.
// A torn tail is cut and logged; corruption fails with ErrCorrupt.
func Open(fs vfs.FS, dir string, opts Options) (*WAL, *State, error) {
	opts.ensureDefaults()
	w := &WAL{fs: fs, dir: dir, opts: opts}
	if err := fs.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, fmt.Errorf("wal: open %s: %w", dir, err)
	}
	segs, err := w.listSegments()
	if err != nil {
		return nil, nil, err
	}
	st := &replay{}
	if n := len(segs); n > 1 {
		st.skipTo = headerSnapshot(fs, w.path(segs[n-1].name()))
	}
	var last segmentEnd // how the last segment's records end
	for i, s := range segs {
		if last, err = w.recoverSegment(s, i == len(segs)-1, st); err != nil {
			return nil, nil, err
		}
	}
	if err := st.finish(); err != nil {
		return nil, nil, err
	}
	w.segs = segs
	w.hs, w.snap, w.lastIndex = st.state.HardState, st.state.Snapshot, st.state.LastIndex()
	w.markers = slices.Clone(st.state.Markers)
	n := len(segs)
	if n > 0 && !last.v1 {
		// Appends go on in the last segment, in the space preallocated
		// for it, rather than in a new one per start: a crash loop must
		// not fill the disk with preallocated segments.
		if err := w.reopen(segs[n-1], last.end); err != nil {
			w.closeFile()
			return nil, nil, fmt.Errorf("wal: open %s: %w", dir, err)
		}
		return w, &st.state, nil
	}
	// No segment yet, or the last one is in format v1, which is never
	// appended to: a new v2 segment, cut once (the next Open finds it).
	next := segment{first: w.lastIndex + 1}
	if n > 0 {
		next.seq = segs[n-1].seq + 1
		w.opts.Logger.Info("wal: the last segment is in format v1; new records go to a new v2 segment",
			"file", w.path(segs[n-1].name()), "new", next.name())
	}
	if err := w.cut(next); err != nil {
		w.closeFile()
		return nil, nil, fmt.Errorf("wal: open %s: %w", dir, err)
	}
	return w, &st.state, nil
}

// listSegments lists dir's segments, removes leftover temporary files of an
// interrupted cut, and checks that no segment is missing in the middle.
func (w *WAL) listSegments() ([]segment, error) {
	names, err := w.fs.List(w.dir)
	if err != nil {
		return nil, fmt.Errorf("wal: open %s: %w", w.dir, err)
	}
	var segs []segment
	for _, name := range names {
		if strings.HasSuffix(name, ".wal.tmp") {
			if err := w.fs.Remove(w.path(name)); err != nil {
				return nil, fmt.Errorf("wal: remove leftover %s: %w", name, err)
			}
			continue
		}
		if s, ok := parseSegmentName(name); ok {
			segs = append(segs, s)
		}
	}
	for i := 1; i < len(segs); i++ {
		if segs[i].seq != segs[i-1].seq+1 {
			return nil, &CorruptionError{File: w.path(segs[i-1].name()),
				Reason: fmt.Errorf("next segment is %s: segment %d is missing", segs[i].name(), segs[i-1].seq+1)}
		}
	}
	return segs, nil
}

func (w *WAL) path(name string) string { return filepath.Join(w.dir, name) }

// recoverSegment replays one segment into st, cutting a torn tail if it is
// the last one. It returns how the segment's records end (where a torn
// tail was cut).
func (w *WAL) recoverSegment(s segment, last bool, st *replay) (segmentEnd, error) {
	name := w.path(s.name())
	r, err := readSegment(w.fs, name, func(rec record) error {
		if err := st.apply(rec, s.seq); err != nil {
			return &CorruptionError{File: name, Offset: rec.off, Reason: err}
		}
		return nil
	})
	if err != nil {
		return segmentEnd{}, err
	}
	if r.bad != nil && (r.corrupt || !last) {
		return segmentEnd{}, &CorruptionError{File: name, Offset: r.end, Reason: r.bad}
	}
	if r.bad != nil {
		if err := w.cutTornTail(name, r, r.bad); err != nil {
			return segmentEnd{}, err
		}
	}
	return r, nil
}

// reopen makes the recovered segment s the active one again, appending
// at end, just past its last record: what follows is zeros (preallocated,
// or a torn tail cut off).
func (w *WAL) reopen(s segment, end int64) error {
	f, err := w.fs.OpenReadWrite(w.path(s.name()))
	if err != nil {
		return err
	}
	if err := seekTo(f, end); err != nil {
		_ = f.Close()
		return fmt.Errorf("reopen %s at %d: %w", s.name(), end, err)
	}
	// base 0: the segment holds more than its header, so a batch that
	// does not fit in the rest goes to a new segment.
	w.f, w.off, w.base = f, end, 0
	return nil
}

// seekTo moves f's offset, where the next Write goes, to off. vfs.File has
// no Seek; a file that cannot seek is read up to off instead.
func seekTo(f vfs.File, off int64) error {
	if s, ok := f.(io.Seeker); ok {
		_, err := s.Seek(off, io.SeekStart)
		return err
	}
	n, err := io.CopyN(io.Discard, f, off)
	if err == io.EOF && n == off {
		err = nil
	}
	return err
}

// ReadFrom recovers the log again, keeping the entries after index, which
// must be one of State.Markers: the State of a recovery from that older
// snapshot, for when the newest snapshot's file is damaged. It reads every
// segment; call it before the first Save.
func (w *WAL) ReadFrom(index uint64) (*State, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil, ErrClosed
	}
	st := &replay{fixed: true, keepFrom: index}
	for _, s := range w.segs {
		name := w.path(s.name())
		r, err := readSegment(w.fs, name, func(rec record) error {
			if err := st.apply(rec, s.seq); err != nil {
				return &CorruptionError{File: name, Offset: rec.off, Reason: err}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if r.bad != nil {
			return nil, &CorruptionError{File: name, Offset: r.end, Reason: r.bad}
		}
	}
	if err := st.finish(); err != nil {
		return nil, err
	}
	i := slices.IndexFunc(st.state.Markers, func(m raftpb.SnapshotMetadata) bool { return m.Index == index })
	if i < 0 {
		return nil, fmt.Errorf("wal: no snapshot marker at %d to recover from", index)
	}
	st.state.Snapshot = st.state.Markers[i]
	return &st.state, nil
}

// cutTornTail keeps the torn bytes in name.broken, then zeroes the segment
// from off on, so that the torn record can never be mistaken for data (or
// for corruption, once this segment is no longer the last).
func (w *WAL) cutTornTail(name string, r segmentEnd, why error) error {
	off, torn := r.end, r.tail
	for len(torn) > 0 && torn[len(torn)-1] == 0 {
		torn = torn[:len(torn)-1]
	}
	w.opts.Logger.Warn("wal: cutting torn tail", "file", name, "offset", off, "bytes", len(torn), "reason", why)
	if err := w.writeBroken(name+".broken", torn); err != nil {
		return err
	}
	f, err := w.fs.OpenReadWrite(name)
	if err != nil {
		return fmt.Errorf("wal: cut torn tail of %s: %w", name, err)
	}
	err = f.Truncate(off)
	if err == nil {
		err = f.Truncate(r.size)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("wal: cut torn tail of %s at %d: %w", name, off, err)
	}
	return nil
}

func (w *WAL) writeBroken(name string, torn []byte) error {
	f, err := w.fs.Create(name)
	if err != nil {
		return fmt.Errorf("wal: save torn tail: %w", err)
	}
	_, err = f.Write(torn)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = w.fs.SyncDir(w.dir)
	}
	if err != nil {
		return fmt.Errorf("wal: save torn tail in %s: %w", name, err)
	}
	return nil
}

// cut makes s the active segment: built and fsynced under a temporary name
// with the current state at its start, then renamed into place.
func (w *WAL) cut(s segment) error {
	// The old segment's unsynced tail first: once the new segment is
	// durable, a torn record at the old one's end would no longer be the
	// log's tail, and recovery would take it for corruption.
	if w.f != nil && w.unsynced {
		if err := w.f.Sync(); err != nil {
			return err
		}
		w.unsynced = false
	}
	final := w.path(s.name())
	tmp := final + ".tmp"
	f, err := w.fs.Create(tmp)
	if err != nil {
		return err
	}
	w.buf = append(w.buf[:0], segmentMagic[:]...)
	// Every retained marker, so that releasing the segment a marker was
	// written in never loses a snapshot recovery may fall back to.
	for i := range w.markers {
		w.buf = appendProtoRecord(w.buf, typeSnapshotMark, &w.markers[i])
	}
	if len(w.markers) == 0 {
		w.buf = appendProtoRecord(w.buf, typeSnapshotMark, &w.snap)
	}
	w.buf = appendProtoRecord(w.buf, typeHardState, &w.hs)
	err = vfs.Preallocate(f, w.opts.SegmentSize)
	if err == nil {
		_, err = f.Write(w.buf)
	}
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		err = w.fs.Rename(tmp, final)
	}
	if err == nil {
		err = w.fs.SyncDir(w.dir)
	}
	if err != nil {
		_ = f.Close()
		return err
	}
	w.closeFile()
	w.f, w.off, w.base = f, int64(len(w.buf)), int64(len(w.buf))
	w.segs = append(w.segs, s)
	return nil
}

// closeFile closes the active segment. Its data is already synced, so a
// close error changes nothing durable; it is logged.
func (w *WAL) closeFile() {
	if w.f == nil {
		return
	}
	if err := w.f.Close(); err != nil {
		w.opts.Logger.Warn("wal: close segment", "err", err)
	}
	w.f = nil
}

// usable returns why the WAL cannot take an append, if it cannot.
func (w *WAL) usable() error {
	if w.closed {
		return ErrClosed
	}
	if w.err != nil {
		return fmt.Errorf("%w: %w", ErrBroken, w.err)
	}
	return nil
}

// SetLazyCommit sets Options.LazyCommit for the Saves after it.
func (w *WAL) SetLazyCommit(lazy bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.opts.LazyCommit = lazy
}

// Save appends the entries, then the HardState if it is not empty, and
// makes them durable with one fsync before returning: a raft Ready's worth
// of records share one sync. Entries may start at or below the last index:
// they then replace the conflicting suffix (raft's log truncation), on
// replay as well. An error is sticky (see ErrBroken).
func (w *WAL) Save(hs raftpb.HardState, ents []raftpb.Entry) error {
	return w.save(hs, ents, nil)
}

// save is Save, also filling locs[i], if locs is not nil, with where
// entry i was written.
func (w *WAL) save(hs raftpb.HardState, ents []raftpb.Entry, locs []loc) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.usable(); err != nil {
		return err
	}
	if err := w.checkOrder(ents); err != nil {
		return err
	}
	if len(ents) == 0 && !newerHardState(hs, w.hs) {
		// Nothing newer than the log holds: a sole voter writes its
		// commit index with the entries it covers (replica's
		// commitWithEntries), and raft names it again once they are
		// durable. Writing it again would cost an fsync, and an older
		// one would move the commit index back.
		return nil
	}
	w.buf, w.starts = w.buf[:0], w.starts[:0]
	for i := range ents {
		w.starts = append(w.starts, int64(len(w.buf)))
		w.buf = appendProtoRecord(w.buf, typeEntry, &ents[i])
	}
	saveHS := !isEmptyHardState(hs)
	if saveHS {
		w.buf = appendProtoRecord(w.buf, typeHardState, &hs)
	}
	if len(w.buf) == 0 {
		return nil
	}
	sync := len(ents) > 0 || !w.opts.LazyCommit || hs.Term != w.hs.Term || hs.Vote != w.hs.Vote
	at, err := w.append(sync)
	if err != nil {
		return err
	}
	seq := w.segs[len(w.segs)-1].seq
	for i := range locs {
		locs[i] = makeLoc(seq, at+w.starts[i])
	}
	if n := len(ents); n > 0 {
		w.lastIndex = ents[n-1].Index
	}
	if saveHS {
		w.hs = hs
	}
	return nil
}

func (w *WAL) checkOrder(ents []raftpb.Entry) error {
	if len(ents) == 0 {
		return nil
	}
	if ents[0].Index > w.lastIndex+1 {
		return fmt.Errorf("%w: entry %d after last index %d", ErrOutOfOrder, ents[0].Index, w.lastIndex)
	}
	for i := 1; i < len(ents); i++ {
		if ents[i].Index != ents[i-1].Index+1 {
			return fmt.Errorf("%w: entry %d after entry %d", ErrOutOfOrder, ents[i].Index, ents[i-1].Index)
		}
	}
	return nil
}

func isEmptyHardState(hs raftpb.HardState) bool { return hs == raftpb.HardState{} }

// newerHardState reports whether hs says more than held: another term or
// vote, or a commit index past held's.
func newerHardState(hs, held raftpb.HardState) bool {
	return hs.Term != held.Term || hs.Vote != held.Vote || hs.Commit > held.Commit
}

// SaveSnapshotMarker records, durably, that a snapshot this server took at
// meta exists. Call it after the snapshot file is fsynced (the marker is
// the commit point) and before ReleaseTo. On replay, entries up to
// meta.Index are dropped and the later ones kept.
func (w *WAL) SaveSnapshotMarker(meta raftpb.SnapshotMetadata) error {
	return w.saveMarker(meta, false)
}

// SaveReceivedSnapshotMarker records a snapshot received from a leader,
// its file already fsynced. It replaces the log, and the snapshots of the
// old log are no longer ones to recover from.
func (w *WAL) SaveReceivedSnapshotMarker(meta raftpb.SnapshotMetadata) error {
	return w.saveMarker(meta, true)
}

func (w *WAL) saveMarker(meta raftpb.SnapshotMetadata, received bool) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.usable(); err != nil {
		return err
	}
	typ := typeSnapshotMark
	if received {
		typ = typeReceivedSnap
	}
	w.buf = appendProtoRecord(w.buf[:0], typ, &meta)
	if _, err := w.append(true); err != nil {
		return err
	}
	if meta.Index <= w.snap.Index {
		return nil
	}
	if received || meta.Index > w.lastIndex {
		w.markers = w.markers[:0]
	}
	w.snap = meta
	w.markers = append(w.markers, meta)
	w.lastIndex = max(w.lastIndex, meta.Index)
	return nil
}

// append writes w.buf to the active segment (cutting a new one first if it
// would not fit) and, if sync, syncs it. It returns the offset in the
// active segment the batch was written at. Any error is made sticky.
func (w *WAL) append(sync bool) (int64, error) {
	buf := w.buf
	// A batch larger than a segment goes whole into a fresh one, growing it.
	if w.off+int64(len(buf)) > w.opts.SegmentSize && w.off > w.base {
		// cut reuses w.buf for the new header; keep the batch aside.
		batch := append([]byte(nil), buf...)
		last := w.segs[len(w.segs)-1]
		if err := w.cut(segment{seq: last.seq + 1, first: w.lastIndex + 1}); err != nil {
			return 0, w.fail(fmt.Errorf("wal: cut segment %d: %w", last.seq+1, err))
		}
		buf = batch
	}
	at := w.off
	if _, err := w.f.Write(buf); err != nil {
		return 0, w.fail(fmt.Errorf("wal: write: %w", err))
	}
	w.off += int64(len(buf))
	if w.opts.NoSync || !sync {
		w.unsynced = true
		return at, nil
	}
	if err := w.f.Sync(); err != nil {
		return 0, w.fail(fmt.Errorf("wal: sync: %w", err))
	}
	w.unsynced = false
	return at, nil
}

func (w *WAL) fail(err error) error {
	w.err = err
	return fmt.Errorf("%w: %w", ErrBroken, err)
}

// Err returns the sticky error that broke the WAL, or nil.
func (w *WAL) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// ReleaseTo removes the oldest segments whose entries all have index <=
// index, keeping the active one, and forgets the markers of snapshots
// before index: index is the oldest snapshot that recovery may still start
// from. It is capped at the newest snapshot marker, since entries not
// covered by a snapshot are still needed. A failed removal is returned but
// does not break the WAL.
func (w *WAL) ReleaseTo(index uint64) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return ErrClosed
	}
	index = min(index, w.snap.Index)
	w.markers = slices.DeleteFunc(w.markers, func(m raftpb.SnapshotMetadata) bool { return m.Index < index })
	for len(w.segs) > 1 && w.segs[1].first <= index+1 {
		name := w.path(w.segs[0].name())
		if err := w.fs.Remove(name); err != nil {
			return fmt.Errorf("wal: release %s: %w", name, err)
		}
		// Sync each removal so that a crash cannot leave a hole in the
		// middle of the sequence, which Open would call corruption.
		if err := w.fs.SyncDir(w.dir); err != nil {
			return fmt.Errorf("wal: release %s: %w", name, err)
		}
		w.opts.Logger.Info("wal: released segment", "file", name, "index", index)
		w.segs = w.segs[1:]
	}
	return nil
}

// Close closes the active segment. Everything saved is already durable.
func (w *WAL) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return ErrClosed
	}
	w.closed = true
	if w.f == nil {
		return nil
	}
	err := w.f.Close()
	w.f = nil
	if err != nil {
		return fmt.Errorf("wal: close: %w", err)
	}
	return nil
}
