// Package backup writes a backup of a Zoo data directory while the server
// runs, and restores one, to its end or to a point in time.
//
// A backup is a gzipped tar stream of the oldest snapshot file the
// directory keeps ("snap/") and the log segments holding every entry
// after it ("log/"), so that it restores to any point since that
// snapshot, as they are
// on disk when read: the snapshot is complete (its rename was its commit
// point) and the log is read up to where it was written, a record being
// appended then reading as a torn tail, which restore cuts as recovery
// does. Nothing the server writes is changed, and no lock is taken: the
// server goes on serving, and the reader may be rate-limited.
//
// Restore loads the snapshot, applies the committed txns after it, up to
// a zxid or a time if asked, and writes a new data directory whose log
// starts at the last txn applied (replica.Seed).
//
// A snapshot is fuzzy (DESIGN decision 9): it may hold effects of the
// txns applied while it was written. A restore point inside that window
// (just after the snapshot's index) may therefore include some later
// changes; points after it are exact.
package backup

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/zoohq/zoo/internal/snap"
	"github.com/zoohq/zoo/internal/vfs"
	"github.com/zoohq/zoo/internal/wal"
)

// ErrNoSnapshot means the data directory holds no snapshot to back up.
var ErrNoSnapshot = errors.New("backup: no snapshot in the data directory")

// Info describes a backup.
type Info struct {
	Snapshot snap.Meta
	Segments []string
	Bytes    int64 // read from the data directory
}

// Options tune Write.
type Options struct {
	// Rate bounds the bytes read from the data directory per second (0:
	// no bound): compressing and checking them is what a backup costs the
	// server it runs beside.
	Rate int64
	// Ctx, if set, ends a wait for the rate early.
	Ctx context.Context
}

// Write writes a backup of the data directory whose log is in logDir and
// snapshots in snapDir to w. It is safe while a server runs on them.
func Write(w io.Writer, fs vfs.FS, logDir, snapDir string, opts Options) (Info, error) {
	var info Info
	snaps, err := snap.List(fs, snapDir)
	if err != nil {
		return info, err
	}
	// The oldest snapshot the directory keeps: the log holds every entry
	// after it (purge releases the log only up to the oldest kept
	// snapshot), so the backup can be restored to any point since then.
	var chosen *snap.Info
	for j := range snaps {
		if snaps[j].Err == nil {
			chosen = &snaps[j]
			break
		}
	}
	if chosen == nil {
		return info, fmt.Errorf("%w: %s", ErrNoSnapshot, snapDir)
	}
	info.Snapshot = chosen.Meta
	segs, err := fs.List(logDir)
	if err != nil {
		return info, fmt.Errorf("backup: %w", err)
	}
	segs = slices.DeleteFunc(segs, func(n string) bool { return !strings.HasSuffix(n, ".wal") })
	// The fastest level: a log segment's padding and a snapshot's repeated
	// paths compress well at any level, and the default level made a
	// backup CPU-bound at a few MB/s.
	gz, _ := gzip.NewWriterLevel(w, gzip.BestSpeed)
	ctx := opts.Ctx
	if ctx == nil {
		ctx = context.Background()
	}
	tw := &rateTar{Writer: tar.NewWriter(gz), lim: &limitedWriter{rate: opts.Rate, ctx: ctx}}
	tw.lim.w = tw.Writer
	n, err := addFile(tw, fs, filepath.Join(snapDir, chosen.Name), path.Join("snap", chosen.Name))
	info.Bytes += n
	if err != nil {
		return info, err
	}
	// Every segment: those before the snapshot are small to skip but
	// cheap to keep, and a segment's name does not say where it ends.
	// A segment purged while this runs is skipped if the snapshot does
	// not need it (it held only entries before a newer snapshot).
	for _, s := range segs {
		n, err := addFile(tw, fs, filepath.Join(logDir, s), path.Join("log", s))
		info.Bytes += n
		if errors.Is(err, errVanished) {
			continue
		}
		if err != nil {
			return info, err
		}
		info.Segments = append(info.Segments, s)
	}
	if err := tw.Close(); err != nil {
		return info, fmt.Errorf("backup: %w", err)
	}
	if err := gz.Close(); err != nil {
		return info, fmt.Errorf("backup: %w", err)
	}
	return info, nil
}

var errVanished = errors.New("backup: file removed while being read")

// addFile copies the file at name, as long as it is when opened, into tw;
// a log segment is cut after its last whole record (wal.ValidPrefix).
func addFile(tw *rateTar, fs vfs.FS, name, as string) (int64, error) {
	isLog := strings.HasSuffix(as, ".wal")
	f, err := fs.Open(name)
	if err != nil {
		if isLog {
			return 0, errVanished
		}
		return 0, fmt.Errorf("backup: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("backup: %w", err)
	}
	size := fi.Size()
	if isLog {
		// Two passes: find the whole records, then copy them (bytes once
		// written do not change while the server runs).
		if size, err = wal.ValidPrefixReader(io.NewSectionReader(f, 0, size), size); err != nil {
			return 0, fmt.Errorf("backup: %s: %w", name, err)
		}
	}
	src := io.NewSectionReader(f, 0, size)
	if err := tw.WriteHeader(&tar.Header{Name: as, Mode: 0o644, Size: size, ModTime: fi.ModTime(), Typeflag: tar.TypeReg}); err != nil {
		return 0, fmt.Errorf("backup: %w", err)
	}
	n, err := io.Copy(tw.lim, src)
	if err != nil {
		return n, fmt.Errorf("backup: %s: %w", name, err)
	}
	return n, nil
}

// rateTar is a tar writer whose file contents go through a rate limit.
type rateTar struct {
	*tar.Writer
	lim *limitedWriter
}

// limitedWriter passes at most rate bytes per second to w.
type limitedWriter struct {
	w     io.Writer
	rate  int64
	ctx   context.Context
	start time.Time
	n     int64
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if l.rate <= 0 {
		return l.w.Write(p)
	}
	if l.start.IsZero() {
		l.start = time.Now()
	}
	total := 0
	for len(p) > 0 {
		chunk := p[:min(len(p), 64<<10)]
		n, err := l.w.Write(chunk)
		total += n
		l.n += int64(n)
		if err != nil {
			return total, err
		}
		p = p[n:]
		// Ahead of the allowed rate: wait until the bytes sent are due.
		if due := l.start.Add(time.Duration(float64(l.n) / float64(l.rate) * float64(time.Second))); time.Until(due) > 0 {
			t := time.NewTimer(time.Until(due))
			select {
			case <-t.C:
			case <-l.ctx.Done():
				t.Stop()
				return total, l.ctx.Err()
			}
		}
	}
	return total, nil
}
