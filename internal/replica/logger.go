package replica

import (
	"context"
	"fmt"
	"log/slog"
	"os"
)

// raftLogger adapts an slog.Logger to raft's Logger, so raft logs through
// the logger the server was given instead of raft's global one.
type raftLogger struct{ l *slog.Logger }

func (r raftLogger) log(level slog.Level, msg string) {
	r.l.Log(context.Background(), level, msg, "component", "raft")
}

func (r raftLogger) Debug(v ...any)              { r.log(slog.LevelDebug, fmt.Sprint(v...)) }
func (r raftLogger) Debugf(f string, v ...any)   { r.log(slog.LevelDebug, fmt.Sprintf(f, v...)) }
func (r raftLogger) Info(v ...any)               { r.log(slog.LevelDebug, fmt.Sprint(v...)) }
func (r raftLogger) Infof(f string, v ...any)    { r.log(slog.LevelDebug, fmt.Sprintf(f, v...)) }
func (r raftLogger) Warning(v ...any)            { r.log(slog.LevelWarn, fmt.Sprint(v...)) }
func (r raftLogger) Warningf(f string, v ...any) { r.log(slog.LevelWarn, fmt.Sprintf(f, v...)) }
func (r raftLogger) Error(v ...any)              { r.log(slog.LevelError, fmt.Sprint(v...)) }
func (r raftLogger) Errorf(f string, v ...any)   { r.log(slog.LevelError, fmt.Sprintf(f, v...)) }
func (r raftLogger) Panic(v ...any)              { s := fmt.Sprint(v...); r.log(slog.LevelError, s); panic(s) }
func (r raftLogger) Panicf(f string, v ...any) {
	s := fmt.Sprintf(f, v...)
	r.log(slog.LevelError, s)
	panic(s)
}
func (r raftLogger) Fatal(v ...any) { r.log(slog.LevelError, fmt.Sprint(v...)); os.Exit(1) }
func (r raftLogger) Fatalf(f string, v ...any) {
	r.log(slog.LevelError, fmt.Sprintf(f, v...))
	os.Exit(1)
}
