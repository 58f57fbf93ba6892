package apache

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/internal/tree"
	"github.com/zoohq/zoo/internal/txn"
)

// VersionDir returns dir's version-2 subdirectory if it has one, else dir
// itself (the version-2 directory may be given directly).
func VersionDir(dir string) string {
	v := filepath.Join(dir, "version-2")
	if fi, err := os.Stat(v); err == nil && fi.IsDir() {
		return v
	}
	return dir
}

// file is a snapshot or log file and the zxid its name carries.
type file struct {
	name string
	zxid int64
	comp Compression
}

// listFiles returns the files of dir named prefix.<hex zxid>[suffix],
// oldest first.
func listFiles(dir, prefix string) ([]file, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []file
	for _, e := range ents {
		name := e.Name()
		rest, ok := strings.CutPrefix(name, prefix+".")
		if !ok || e.IsDir() {
			continue
		}
		f := file{name: name}
		if s, ok := strings.CutSuffix(rest, ".gz"); ok {
			rest, f.comp = s, Gzip
		} else if s, ok := strings.CutSuffix(rest, ".snappy"); ok {
			rest, f.comp = s, Snappy
		}
		z, err := strconv.ParseUint(rest, 16, 64)
		if err != nil {
			continue // Apache ignores names it cannot parse too
		}
		f.zxid = int64(z)
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b file) int { return cmp.Compare(a.zxid, b.zxid) })
	return out, nil
}

// LoadOptions tune Load.
type LoadOptions struct {
	Options
	Logger *slog.Logger // nil: discard
	// Progress, if set, is called every ProgressEvery nodes loaded and
	// txns replayed, with the totals so far.
	Progress      func(nodes, txns int)
	ProgressEvery int
	// IgnoreDigest makes a digest mismatch a warning instead of an error.
	IgnoreDigest bool
}

// Result is the state recovered from an Apache data directory.
type Result struct {
	State *txn.State
	// Zxid is the last zxid of the state: the newer of the snapshot's and
	// the last replayed txn's. Every zxid a client of the Apache server
	// could have seen is at most Zxid.
	Zxid          int64
	Snapshot      string   // the file loaded
	Skipped       []string // newer snapshots that could not be loaded, and why
	SnapshotNodes int
	Logs          []string // the logs replayed from
	Txns          int      // txns replayed
	// DigestsChecked counts the digests compared (snapshot and txns);
	// DigestMismatches those that differed (only with IgnoreDigest).
	DigestsChecked, DigestMismatches int
	Warnings                         []string
}

// Load recovers the state an Apache server would start with from the
// snapshots in snapDir and the logs in logDir (their version-2
// directories), following FileTxnSnapLog.restore: the newest snapshot
// that loads, then every txn after its zxid in the logs that hold them.
// Unlike Apache it fails, rather than warn, on a digest mismatch (unless
// IgnoreDigest) and on a gap in the zxids the logs hold after the
// snapshot, since the state would not be the one Apache served.
func Load(snapDir, logDir string, opts LoadOptions) (*Result, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	snaps, err := listFiles(snapDir, "snapshot")
	if err != nil {
		return nil, fmt.Errorf("apache: %w", err)
	}
	logs, err := listFiles(logDir, "log")
	if err != nil {
		return nil, fmt.Errorf("apache: %w", err)
	}
	if len(snaps) == 0 {
		if len(logs) > 0 {
			return nil, fmt.Errorf("%w: %s holds txn logs but no snapshot (Apache refuses this too: "+
				"\"No snapshot found, but there are log entries\")", ErrNoData, snapDir)
		}
		return nil, fmt.Errorf("%w: no snapshot.* in %s", ErrNoData, snapDir)
	}
	l := &loader{opts: opts, log: log, res: &Result{}}
	var snapZxid int64
	var digest *Digest
	for _, f := range slices.Backward(snaps) {
		st, s, err := l.loadSnapshot(snapDir, f)
		if err != nil {
			l.res.Skipped = append(l.res.Skipped, err.Error())
			log.Warn("skipping snapshot", "file", f.name, "err", err)
			continue
		}
		l.res.State, l.res.Snapshot, l.res.SnapshotNodes = st, f.name, s.Nodes
		snapZxid, digest = f.zxid, s.Digest
		break
	}
	if l.res.State == nil {
		return nil, fmt.Errorf("apache: none of the %d snapshots in %s loads: %s", len(snaps), snapDir, strings.Join(l.res.Skipped, "; "))
	}
	l.res.Zxid = snapZxid
	l.digest = TreeDigest(l.res.State.Tree)
	if digest != nil && digest.Zxid < snapZxid {
		digest = nil // taken before the snapshot's own zxid: Apache ignores it too
	}
	l.snapDigest = digest
	if err := l.checkSnapshotDigest(snapZxid); err != nil {
		return nil, err
	}
	if len(logs) == 0 {
		l.warn(fmt.Sprintf("no txn log (log.*) in %s: if Apache ran with a separate dataLogDir, give it too, "+
			"or the txns after the snapshot (zxid %#x) are missing", logDir, snapZxid))
	}
	if err := l.replay(logDir, logsFrom(logs, snapZxid), snapZxid); err != nil {
		return nil, err
	}
	if l.snapDigest != nil {
		l.warn(fmt.Sprintf("the snapshot's digest (at zxid %#x) was not checked: the logs end at %#x", l.snapDigest.Zxid, l.res.Zxid))
	}
	return l.res, nil
}

// logsFrom returns the logs that may hold txns after zxid: the newest one
// starting at or before it and every later one (FileTxnLog.getLogFiles).
func logsFrom(logs []file, zxid int64) []file {
	start := 0
	for i, f := range logs {
		if f.zxid <= zxid {
			start = i
		}
	}
	return logs[start:]
}

type loader struct {
	opts       LoadOptions
	log        *slog.Logger
	res        *Result
	digest     uint64  // Apache's digest of the state, kept up to date
	snapDigest *Digest // the snapshot's, until the replay reaches its zxid
	nodes      int
	ticks      int
}

func (l *loader) warn(w string) {
	l.res.Warnings = append(l.res.Warnings, w)
	l.log.Warn(w)
}

func (l *loader) progress(txns int) {
	l.ticks++
	if l.opts.Progress != nil && l.ticks%max(l.opts.ProgressEvery, 1) == 0 {
		l.opts.Progress(l.nodes, txns)
	}
}

func (l *loader) loadSnapshot(dir string, f file) (*txn.State, *Snapshot, error) {
	fh, err := os.Open(filepath.Join(dir, f.name))
	if err != nil {
		return nil, nil, fmt.Errorf("apache: %w", err)
	}
	defer fh.Close()
	st := txn.NewState(tree.New())
	base := l.nodes
	s, err := ReadSnapshot(bufio.NewReaderSize(fh, 1<<20), f.name, f.comp, l.opts.Options, func(n *Node) error {
		if err := st.Tree.Restore(n.Path, n.Data, n.ACL, n.Stat); err != nil {
			return fmt.Errorf("%w: node %.200q: %w", ErrCorrupt, n.Path, err)
		}
		l.nodes++
		l.progress(0)
		return nil
	})
	if err != nil {
		l.nodes = base
		return nil, nil, err
	}
	if err := st.Tree.Restored(); err != nil {
		l.nodes = base
		return nil, nil, fmt.Errorf("%w: %s: %w", ErrCorrupt, f.name, err)
	}
	for _, se := range s.Sessions {
		st.Sessions[se.ID] = txn.SessionInfo{TimeoutMs: se.TimeoutMs, Password: Password(se.ID)}
	}
	return st, s, nil
}

// checkSnapshotDigest compares the tree with the snapshot's digest once
// the state is at its zxid (DataTree.compareSnapshotDigests).
func (l *loader) checkSnapshotDigest(zxid int64) error {
	d := l.snapDigest
	if d == nil || zxid != d.Zxid {
		return nil
	}
	l.snapDigest = nil
	if d.Version != DigestVersion {
		l.warn(fmt.Sprintf("snapshot digest version %d is not %d: not compared", d.Version, DigestVersion))
		return nil
	}
	return l.compare(zxid, d.Value, "the snapshot's digest", true)
}

// compare checks the tree's digest against want. A mismatch fails the
// load, unless IgnoreDigest, or unless soft: a snapshot's digest can be
// off by Apache's own race. DataTree.processTxn changes the tree first
// and records (zxid, digest) after; a snapshot whose walk sees txn D+1's
// change but ends before D+1's digest is recorded holds D+1's effect with
// D's digest (D may be the snapshot's own zxid), so the tree at D
// differs, and the replay of D+1 puts it right. Apache only logs this
// too. The log's digests after it, which the leader computed from its
// own state before the txn, are compared and still fail the load.
func (l *loader) compare(zxid, want int64, what string, soft bool) error {
	l.res.DigestsChecked++
	if uint64(want) == l.digest {
		return nil
	}
	msg := fmt.Sprintf("apache: the tree's digest at zxid %#x is %#x, %s says %#x", zxid, l.digest, what, uint64(want))
	if soft {
		l.res.DigestMismatches++
		l.warn(msg + " (the digest of a fuzzy snapshot; Apache only logs this too)")
		return nil
	}
	if !l.opts.IgnoreDigest {
		return errors.New(msg + ": the recovered tree is not the one Apache had (use -ignore-digest to import anyway)")
	}
	l.res.DigestMismatches++
	l.warn(msg)
	return nil
}

// replay applies the txns after snapZxid in logs, in order.
func (l *loader) replay(dir string, logs []file, snapZxid int64) error {
	last := snapZxid
	for _, f := range logs {
		n, err := l.replayLog(dir, f, &last)
		if err != nil {
			return err
		}
		if n > 0 {
			l.res.Logs = append(l.res.Logs, f.name)
		}
	}
	return nil
}

func (l *loader) replayLog(dir string, f file, last *int64) (int, error) {
	fh, err := os.Open(filepath.Join(dir, f.name))
	if err != nil {
		return 0, fmt.Errorf("apache: %w", err)
	}
	defer fh.Close()
	lr, err := NewLogReader(bufio.NewReaderSize(fh, 1<<20), f.name, l.opts.Options)
	if err != nil {
		return 0, err
	}
	n := 0
	for {
		e, err := lr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return n, err
		}
		z := e.Header.Zxid
		if z <= *last {
			continue // in the snapshot, or a txn logged twice
		}
		if *last != 0 && z>>32 == *last>>32 && z != *last+1 {
			return n, &FileError{File: f.name, Offset: e.Offset, Err: fmt.Errorf(
				"%w: txn %#x follows %#x: the txns between them are in no log (a log file is missing)", ErrCorrupt, z, *last)}
		}
		if err := l.apply(e); err != nil {
			return n, &FileError{File: f.name, Offset: e.Offset, Err: err}
		}
		*last = z
		n++
	}
	if lr.Torn != nil {
		l.warn(fmt.Sprintf("%v: the rest of the file is ignored, as Apache ignores it", lr.Torn))
	}
	return n, nil
}

// apply applies one txn at its Apache zxid and keeps the digest current.
func (l *loader) apply(e *Entry) error {
	st := l.res.State
	z := e.Header.Zxid
	touched := touchedPaths(st, e.Txn)
	before := pathsDigest(st.Tree, touched)
	txn.Apply(st, e.Txn, z)
	l.digest += pathsDigest(st.Tree, touched) - before
	l.res.Txns++
	l.res.Zxid = z
	l.progress(l.res.Txns)
	if l.snapDigest != nil {
		return l.checkSnapshotDigest(z)
	}
	if d := e.Digest; d != nil && d.Version == DigestVersion {
		return l.compare(z, d.Tree, "the log", false)
	}
	return nil
}

// touchedPaths lists the nodes t may change (its paths and their
// parents), so that the digest can be updated from them alone.
func touchedPaths(st *txn.State, t *txn.Txn) []string {
	var out []string
	add := func(p string, parent bool) {
		out = append(out, p)
		if parent {
			if pp, _, ok := tree.Split(p); ok {
				out = append(out, pp)
			}
		}
	}
	var op func(typ jute.Op, body jute.Record)
	op = func(typ jute.Op, body jute.Record) {
		switch b := body.(type) {
		case *txn.CreateTxn:
			add(b.Path, true)
		case *txn.CreateContainerTxn:
			add(b.Path, true)
		case *txn.CreateTTLTxn:
			add(b.Path, true)
		case *txn.DeleteTxn:
			add(b.Path, true)
		case *txn.SetDataTxn:
			add(b.Path, false)
		case *txn.SetACLTxn:
			add(b.Path, false)
		case *txn.MultiTxn:
			for _, o := range b.Ops {
				op(o.Type, o.Body)
			}
		case *txn.CloseSessionTxn:
			for _, p := range b.Paths {
				add(p, true)
			}
		}
	}
	op(t.Type, t.Body)
	if t.Type == jute.OpCloseSession {
		for _, p := range st.Tree.Ephemerals(t.SessionID) {
			add(p, true)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
