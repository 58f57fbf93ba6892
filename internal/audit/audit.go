// Package audit writes Apache ZooKeeper's audit log: one line per write,
// ACL change, ephemeral node removed with its session, and server start
// and stop, in the format of Apache's Slf4jAuditLogger with the layout of
// its logback.xml (%d{ISO8601} %p %c{2}: %m%n):
//
//	2026-11-25 18:56:03,123 INFO audit.Slf4jAuditLogger: session=0x1a2b	user=127.0.0.1,bob	ip=127.0.0.1	operation=create	znode=/a	znode_type=persistent	result=success
//
// Fields are tab-separated key=value pairs in Apache's order (session,
// user, ip, operation, znode, znode_type, acl, then result); empty fields
// are left out. Failures are logged at ERROR, as Apache does.
//
// A Logger queues records in a bounded buffer that one goroutine writes to
// the file, rotating it by size as logback's FixedWindowRollingPolicy
// does (file.1 is the newest backup). A full buffer drops the record and
// counts it: a slow disk never blocks a request.
package audit

import (
	"bufio"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Result is an audit record's outcome.
type Result string

// Apache's results.
const (
	Success Result = "success"
	Failure Result = "failure"
	Invoked Result = "invoked"
)

// Apache's operation names (AuditConstants).
const (
	OpCreate          = "create"
	OpDelete          = "delete"
	OpSetData         = "setData"
	OpSetACL          = "setAcl"
	OpMulti           = "multiOperation"
	OpReconfig        = "reconfig"
	OpServerStart     = "serverStart"
	OpServerStop      = "serverStop"
	OpEphemeralDelete = "ephemeralZNodeDeletionOnSessionCloseOrExpire"
)

// Event is one audit record.
type Event struct {
	Time      time.Time
	Session   string // "0x..." as Apache prints it, or ""
	User      string // the session's users, comma-separated
	IP        string
	Operation string
	Znode     string
	ZnodeType string // "persistent", "ephemeral_sequential", ...
	ACL       string // "scheme:id:perms,..."
	Result    Result
}

// String renders the record's message as Apache's AuditEvent.toString.
func (e Event) String() string {
	var b strings.Builder
	for _, f := range [...]struct{ k, v string }{
		{"session", e.Session}, {"user", e.User}, {"ip", e.IP}, {"operation", e.Operation},
		{"znode", e.Znode}, {"znode_type", e.ZnodeType}, {"acl", e.ACL}, {"result", string(e.Result)},
	} {
		if f.v == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\t')
		}
		b.WriteString(f.k + "=" + f.v)
	}
	return b.String()
}

// Line is the record as a line of the audit file.
func (e Event) Line() string {
	level := "INFO"
	if e.Result == Failure {
		level = "ERROR"
	}
	return e.Time.Format("2006-01-02 15:04:05,000") + " " + level + " audit.Slf4jAuditLogger: " + e.String() + "\n"
}

// Config says where and how a Logger writes.
type Config struct {
	Path    string
	MaxSize int64 // rotate past this many bytes; 0 is 10 MiB
	Backups int   // rotated files kept; 0 is 10
	Buffer  int   // records queued; 0 is 4096
	Logger  *slog.Logger
	// ServerUser is the user the server runs as, the user of the
	// records Apache writes for the server itself (start, stop,
	// ephemeral nodes removed with their session).
	ServerUser string
}

// Logger writes audit records from one goroutine.
type Logger struct {
	cfg     Config
	ch      chan Event
	quit    chan struct{}
	done    chan struct{}
	once    sync.Once
	dropped atomic.Uint64

	f    *os.File // the writer goroutine's
	w    *bufio.Writer
	size int64
}

// Open opens (appends to) the audit file and starts the writer.
func Open(cfg Config) (*Logger, error) {
	if cfg.Path == "" {
		return nil, errors.New("audit: no file")
	}
	if cfg.MaxSize <= 0 {
		cfg.MaxSize = 10 << 20
	}
	if cfg.Backups <= 0 {
		cfg.Backups = 10
	}
	if cfg.Buffer <= 0 {
		cfg.Buffer = 4096
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	l := &Logger{cfg: cfg, ch: make(chan Event, cfg.Buffer), quit: make(chan struct{}), done: make(chan struct{})}
	if err := l.open(); err != nil {
		return nil, err
	}
	go l.run()
	return l, nil
}

func (l *Logger) open() error {
	f, err := os.OpenFile(l.cfg.Path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o640)
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("audit: %w", err)
	}
	l.f, l.w, l.size = f, bufio.NewWriter(f), st.Size()
	return nil
}

// Log queues a record. It never blocks: when the buffer is full the
// record is dropped and counted, and Log reports false.
func (l *Logger) Log(e Event) bool {
	select {
	case <-l.quit:
		l.dropped.Add(1)
		return false
	default:
	}
	select {
	case l.ch <- e:
		return true
	default:
		if l.dropped.Add(1) == 1 {
			l.cfg.Logger.Warn("audit: buffer full; dropping audit records", "file", l.cfg.Path)
		}
		return false
	}
}

// ServerUser is Config.ServerUser.
func (l *Logger) ServerUser() string { return l.cfg.ServerUser }

// Dropped is how many records were dropped.
func (l *Logger) Dropped() uint64 { return l.dropped.Load() }

// Close writes what is queued, stops the writer and closes the file.
func (l *Logger) Close() error {
	l.once.Do(func() { close(l.quit) })
	<-l.done
	return nil
}

func (l *Logger) run() {
	defer close(l.done)
	defer func() {
		l.flush()
		if l.f != nil {
			l.f.Close()
		}
	}()
	for {
		select {
		case e := <-l.ch:
			l.write(e)
			if len(l.ch) == 0 {
				l.flush()
			}
		case <-l.quit:
			for {
				select {
				case e := <-l.ch:
					l.write(e)
				default:
					return
				}
			}
		}
	}
}

func (l *Logger) write(e Event) {
	if l.f == nil {
		// The file could not be reopened after a rotation; try again.
		if err := l.open(); err != nil {
			l.dropped.Add(1)
			return
		}
	}
	line := e.Line()
	if l.size > 0 && l.size+int64(len(line)) > l.cfg.MaxSize {
		l.rotate()
		if l.f == nil {
			l.dropped.Add(1)
			return
		}
	}
	n, err := l.w.WriteString(line)
	l.size += int64(n)
	if err != nil {
		l.dropped.Add(1)
		l.cfg.Logger.Warn("audit: write failed", "file", l.cfg.Path, "err", err)
	}
}

func (l *Logger) flush() {
	if l.w == nil {
		return
	}
	if err := l.w.Flush(); err != nil {
		l.cfg.Logger.Warn("audit: write failed", "file", l.cfg.Path, "err", err)
		l.w.Reset(l.f)
	}
}

// rotate renames file.(i) to file.(i+1), the oldest falling off, and the
// file to file.1, then starts a new file.
func (l *Logger) rotate() {
	l.flush()
	l.f.Close()
	l.f, l.w = nil, nil
	p := l.cfg.Path
	_ = os.Remove(fmt.Sprintf("%s.%d", p, l.cfg.Backups))
	for i := l.cfg.Backups - 1; i >= 1; i-- {
		_ = os.Rename(fmt.Sprintf("%s.%d", p, i), fmt.Sprintf("%s.%d", p, i+1))
	}
	if err := os.Rename(p, p+".1"); err != nil {
		l.cfg.Logger.Warn("audit: rotate failed", "file", p, "err", err)
	}
	if err := l.open(); err != nil {
		l.cfg.Logger.Warn("audit: reopen after rotation failed", "file", p, "err", err)
	}
}
