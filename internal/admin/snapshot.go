package admin

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DefaultSnapshotInterval is Apache's admin.rateLimiterIntervalInMS
// default: one snapshot per five minutes.
const DefaultSnapshotInterval = 5 * time.Minute

// SnapshotConfig is the snapshot command's.
type SnapshotConfig struct {
	// Write writes the server's state as an Apache snapshot and returns
	// the zxid it is taken at.
	Write func(w io.Writer) (zxid int64, err error)
	// TempDir holds the snapshot while it streams ("" is os.TempDir()):
	// the state is written to a local file first so that a slow client
	// never holds the server's state.
	TempDir string
	// Interval is the least time between two snapshots; 0 is
	// DefaultSnapshotInterval.
	Interval time.Duration
	Now      func() time.Time // nil is time.Now
	Logger   *slog.Logger
}

// SnapshotHandler is Apache 3.9's snapshot command: it takes a snapshot
// and streams it (application/octet-stream) unless streaming=false, with
// the headers last_zxid ("0x" and hex) and snapshot_size; 429 when rate
// limited, 500 when the snapshot fails. Authorization is checked before
// it runs (Handler).
func SnapshotHandler(cfg SnapshotConfig) http.Handler {
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultSnapshotInterval
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &snapshotHandler{cfg: cfg}
}

type snapshotHandler struct {
	cfg  SnapshotConfig
	mu   sync.Mutex
	last time.Time // when the last snapshot was allowed; zero: never
}

// allow is Apache's RateLimiter with one token: a snapshot, then none
// until Interval has passed.
func (s *snapshotHandler) allow() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.cfg.Now()
	if !s.last.IsZero() && now.Sub(s.last) < s.cfg.Interval {
		return false
	}
	s.last = now
	return true
}

func (s *snapshotHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := &handler{cfg: Config{Logger: s.cfg.Logger}}
	empty := newObj().put("command", "snapshot").put("error", nil)
	if !s.allow() {
		s.cfg.Logger.Warn("admin: snapshot request was rate limited", "interval", s.cfg.Interval)
		h.reply(w, http.StatusTooManyRequests, empty)
		return
	}
	f, zxid, size, err := s.take()
	if err != nil {
		s.cfg.Logger.Warn("admin: taking a snapshot for the snapshot command", "err", err)
		h.reply(w, http.StatusInternalServerError, empty)
		return
	}
	defer os.Remove(f.Name())
	defer f.Close()
	w.Header().Set("last_zxid", "0x"+strconv.FormatInt(zxid, 16))
	w.Header().Set("snapshot_size", strconv.FormatInt(size, 10))
	if q := r.URL.Query(); q.Has("streaming") && !strings.EqualFold(q.Get("streaming"), "true") {
		h.reply(w, http.StatusOK, empty) // Java's parseBoolean: anything but "true" is false
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.WriteHeader(http.StatusOK)
	if _, err := io.Copy(w, f); err != nil {
		s.cfg.Logger.Warn("admin: streaming a snapshot", "remote", r.RemoteAddr, "err", err)
	}
}

// take writes a snapshot to a temporary file and returns it open at its
// start, with its zxid and size. The caller closes and removes it.
func (s *snapshotHandler) take() (*os.File, int64, int64, error) {
	f, err := os.CreateTemp(s.cfg.TempDir, "admin-snapshot-*")
	if err != nil {
		return nil, 0, 0, err
	}
	fail := func(err error) (*os.File, int64, int64, error) {
		f.Close()
		os.Remove(f.Name())
		return nil, 0, 0, err
	}
	bw := bufio.NewWriterSize(f, 1<<16)
	zxid, err := s.cfg.Write(bw)
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		return fail(err)
	}
	size, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return fail(err)
	}
	if size == 0 {
		return fail(fmt.Errorf("admin: the snapshot is empty"))
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return fail(err)
	}
	return f, zxid, size, nil
}
