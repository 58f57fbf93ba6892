package zktest

import (
	"sync"
	"testing"
)

// Logger routes a go-zookeeper client's logging (its Logger's Printf) to
// t.Log until the test ends. go-zookeeper's Close does not wait for the
// client's goroutines, and t.Log after a test has ended panics, so the
// logger stops at cleanup. Cleanups run last registered first: make the
// Logger before the client whose Close is registered as a cleanup.
type Logger struct {
	mu      sync.Mutex
	t       testing.TB
	prefix  string
	stopped bool
}

// NewLogger returns a Logger for t whose lines start with prefix.
func NewLogger(t testing.TB, prefix string) *Logger {
	l := &Logger{t: t, prefix: prefix}
	t.Cleanup(l.stop)
	return l
}

// Printf logs to t until the test ends, and then drops the line.
func (l *Logger) Printf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.stopped {
		l.t.Logf(l.prefix+format, args...)
	}
}

func (l *Logger) stop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stopped = true
}
