package config

import (
	"errors"
	"strconv"
	"strings"
)

// Sentinel errors. Every problem Parse, Validate and Load report wraps one
// of these; test with errors.Is.
var (
	// ErrSyntax: a line the Java properties format cannot read (a
	// malformed \uXXXX escape).
	ErrSyntax = errors.New("config: syntax error")
	// ErrInvalid: a value that does not parse or is out of range.
	ErrInvalid = errors.New("config: invalid value")
	// ErrMissing: a required setting is absent.
	ErrMissing = errors.New("config: required setting missing")
	// ErrConflict: settings that contradict each other.
	ErrConflict = errors.New("config: conflicting settings")
	// ErrMyID: the myid file is unreadable or malformed.
	ErrMyID = errors.New("config: bad myid file")
	// ErrRefused: a security setting Zoo does not provide; the server
	// refuses to start rather than run weaker than asked.
	ErrRefused = errors.New("config: refused")
	// ErrJVMFlag: a word of SERVER_JVMFLAGS or JVMFLAGS that is not a
	// JVM option.
	ErrJVMFlag = errors.New("config: unparseable JVM flag")
)

// Pos is where a setting came from: a file and a 1-based line. Line 0 means
// the whole file, or a default.
type Pos struct {
	File string
	Line int
}

func (p Pos) String() string {
	f := p.File
	if f == "" {
		f = "<config>"
	}
	if p.Line == 0 {
		return f
	}
	return f + ":" + strconv.Itoa(p.Line)
}

// Problem is one error in a configuration, with its position and key.
type Problem struct {
	Pos Pos
	Key string // "" for problems not tied to one key
	Err error  // wraps a sentinel
}

func (p *Problem) Error() string {
	if p.Key == "" {
		return p.Pos.String() + ": " + p.Err.Error()
	}
	return p.Pos.String() + ": " + p.Key + ": " + p.Err.Error()
}

func (p *Problem) Unwrap() error { return p.Err }

// Problems is every problem found, in file order. It is the error type Parse,
// Validate and Load return; errors.Is sees through it to each sentinel.
type Problems []*Problem

func (ps Problems) Error() string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.Error()
	}
	return strings.Join(s, "\n")
}

// Unwrap lets errors.Is and errors.As search every problem.
func (ps Problems) Unwrap() []error {
	out := make([]error, len(ps))
	for i, p := range ps {
		out[i] = p
	}
	return out
}

// err returns ps as an error, or nil if there is none.
func (ps Problems) err() error {
	if len(ps) == 0 {
		return nil
	}
	return ps
}

// Join merges the Problems in errs (nil entries are skipped) into one error.
func Join(errs ...error) error {
	var all Problems
	for _, err := range errs {
		var ps Problems
		var p *Problem
		switch {
		case err == nil:
		case errors.As(err, &ps):
			all = append(all, ps...)
		case errors.As(err, &p):
			all = append(all, p)
		default:
			all = append(all, &Problem{Err: err})
		}
	}
	return all.err()
}

// WarningKind says why a setting produced a warning.
type WarningKind int

const (
	// Unsupported: an Apache ZooKeeper setting Zoo does not implement; it
	// is ignored.
	Unsupported WarningKind = iota + 1
	// Unknown: a key Zoo does not recognize, usually a typo (Apache turns
	// any key it does not parse into a Java system property, so it never
	// complains); it is ignored.
	Unknown
	// Adjusted: a value Zoo changed, as Apache would, e.g. an
	// autopurge.snapRetainCount below 3.
	Adjusted
	// Duplicate: a key set twice; the last value wins, as in Apache.
	Duplicate
)

func (k WarningKind) String() string {
	switch k {
	case Unsupported:
		return "unsupported"
	case Unknown:
		return "unknown"
	case Adjusted:
		return "adjusted"
	case Duplicate:
		return "duplicate"
	}
	return "warning"
}

// Warning is a setting that does not stop the server but that the operator
// should hear about at start-up.
type Warning struct {
	Pos  Pos
	Key  string
	Kind WarningKind
	Msg  string
}

func (w Warning) String() string {
	return w.Pos.String() + ": " + w.Key + ": " + w.Msg
}
