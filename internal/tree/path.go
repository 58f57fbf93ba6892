package tree

import (
	"strings"

	"github.com/zoohq/zoo/internal/jute"
)

// The paths of the system nodes that exist in every tree (Apache's
// DataTree constructor, Quotas and ZooDefs.CONFIG_NODE).
const (
	Root       = "/"
	ProcPath   = "/zookeeper"
	QuotaPath  = "/zookeeper/quota"
	ConfigPath = "/zookeeper/config"
)

// ValidatePath reports whether path is a legal znode path, with the rules
// of the programmer's guide ("ZNodes", naming) as Apache's
// PathUtils.validatePath applies them: it starts with "/", does not end
// with "/" (unless it is "/"), has no empty, "." or ".." segment, and has
// no null character nor a character in \u0001-\u001F, \u007F-\u009F,
// \uD800-\uF8FF or \uFFF0-\uFFFF. Apache checks UTF-16 code units, so any
// character outside the Basic Multilingual Plane (a surrogate pair) is
// refused too, and so are bytes that are not UTF-8 (Java decodes them to
// U+FFFD). A bad path yields jute.BadArguments.
func ValidatePath(path string) error {
	if path == "" || path[0] != '/' {
		return jute.BadArguments
	}
	if path == Root {
		return nil
	}
	if path[len(path)-1] == '/' {
		return jute.BadArguments
	}
	for seg := range strings.SplitSeq(path[1:], "/") {
		if seg == "" || seg == "." || seg == ".." {
			return jute.BadArguments
		}
	}
	for _, r := range path {
		if badRune(r) {
			return jute.BadArguments
		}
	}
	return nil
}

// badRune reports whether r is refused in a path (PathUtils.validatePath).
// Invalid UTF-8 bytes range over as utf8.RuneError (U+FFFD), which falls in
// the refused \uFFF0-\uFFFF block, as in Java.
func badRune(r rune) bool {
	switch {
	case r <= 0x1f:
		return true
	case r >= 0x7f && r <= 0x9f:
		return true
	case r >= 0xd800 && r <= 0xf8ff:
		return true
	case r >= 0xfff0:
		// \uFFF0-\uFFFF, and everything beyond the BMP, which Java holds
		// as a surrogate pair.
		return true
	}
	return false
}

// IsSpecialPath reports whether path is one of the system nodes that
// clients may not delete (DataTree.isSpecialPath).
func IsSpecialPath(path string) bool {
	switch path {
	case Root, ProcPath, QuotaPath, ConfigPath:
		return true
	}
	return false
}

// Split returns the parent path and the last segment of path, the way
// Apache cuts at the last slash except that the root's alias "" is
// spelled "/": Split("/a") is ("/", "a"), Split("/a/b") is ("/a", "b").
// ok is false if path has no slash.
func Split(path string) (parent, name string, ok bool) {
	i := strings.LastIndexByte(path, '/')
	if i < 0 {
		return "", "", false
	}
	if i == 0 {
		return Root, path[1:], true
	}
	return path[:i], path[i+1:], true
}

// Join returns the path of the child name of parent.
func Join(parent, name string) string {
	if parent == Root {
		return "/" + name
	}
	return parent + "/" + name
}
