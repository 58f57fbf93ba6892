package admin

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"time"
)

// Errors a RestoreConfig.Restore returns to say what was wrong with the
// request rather than the server.
var (
	// ErrBadRestore means the body is not a snapshot the server can
	// restore (400).
	ErrBadRestore = errors.New("admin: restore: the body is not a valid snapshot")
	// ErrRestoreTooLarge means the snapshot is too large to restore
	// online (413).
	ErrRestoreTooLarge = errors.New("admin: restore: the snapshot is too large")
)

// DefaultRestoreMaxBytes bounds a restore request's body.
const DefaultRestoreMaxBytes = 512 << 20

// RestoreConfig is the restore command's.
type RestoreConfig struct {
	// Restore replaces the server's database with the snapshot read from
	// r and returns the zxid of the restore.
	Restore func(ctx context.Context, r io.Reader) (zxid int64, err error)
	// Interval is the least time between two restores; 0 is
	// DefaultSnapshotInterval (Apache's admin.rateLimiterIntervalInMS
	// serves both commands).
	Interval time.Duration
	// MaxBytes bounds the body; 0 is DefaultRestoreMaxBytes.
	MaxBytes int64
	// Timeout bounds one restore; 0 is two minutes.
	Timeout time.Duration
	Now     func() time.Time // nil is time.Now
	Logger  *slog.Logger
}

// RestoreHandler is Apache 3.9's restore command: a POST whose body is a
// snapshot stream (what the snapshot command gives); it answers
// {"command": "restore", "error": null, "last_zxid": N}, 429 when rate
// limited, 405 for another method. Beyond Apache, which answers 500 to any
// failure, a body that is not a snapshot gets 400 and one too large 413,
// with the reason in "error"; the server is then unchanged. Authorization
// is checked before it runs (Handler).
func RestoreHandler(cfg RestoreConfig) http.Handler {
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultSnapshotInterval
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = DefaultRestoreMaxBytes
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 2 * time.Minute
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &restoreHandler{cfg: cfg, limit: &snapshotHandler{cfg: SnapshotConfig{Interval: cfg.Interval, Now: cfg.Now}}}
}

type restoreHandler struct {
	cfg   RestoreConfig
	limit *snapshotHandler // its one-token rate limiter
}

func (s *restoreHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := &handler{cfg: Config{Logger: s.cfg.Logger}}
	resp := newObj().put("command", "restore").put("error", nil)
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	if !s.limit.allow() {
		s.cfg.Logger.Warn("admin: restore request was rate limited", "interval", s.cfg.Interval)
		h.reply(w, http.StatusTooManyRequests, resp)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.Timeout)
	defer cancel()
	body := http.MaxBytesReader(w, r.Body, s.cfg.MaxBytes)
	zxid, err := s.cfg.Restore(ctx, body)
	if err != nil {
		status := http.StatusInternalServerError
		var tooBig *http.MaxBytesError
		switch {
		case errors.As(err, &tooBig), errors.Is(err, ErrRestoreTooLarge):
			status = http.StatusRequestEntityTooLarge
		case errors.Is(err, ErrBadRestore):
			status = http.StatusBadRequest
		}
		s.cfg.Logger.Warn("admin: restore failed", "remote", r.RemoteAddr, "status", status, "err", err)
		h.reply(w, status, resp.put("error", err.Error()))
		return
	}
	s.cfg.Logger.Info("admin: restored the database from a snapshot", "remote", r.RemoteAddr, "zxid", zxid)
	h.reply(w, http.StatusOK, resp.put("last_zxid", zxid))
}
