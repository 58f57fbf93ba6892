package cli

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/zoohq/zoo/zk"
)

// javaDateLayout is java.util.Date.toString(): "Sat Nov 21 06:31:14 UTC 2026".
const javaDateLayout = "Mon Jan 02 15:04:05 MST 2006"

func javaDate(ms int64) string {
	return time.UnixMilli(ms).Format(javaDateLayout)
}

// hex is Java's "0x" + Long.toHexString: unsigned, lower case.
func hex(v int64) string { return fmt.Sprintf("0x%x", uint64(v)) }

// formatStat is zkCli's printStat.
func formatStat(st zk.Stat) string {
	var b strings.Builder
	fmt.Fprintf(&b, "cZxid = %s\n", hex(st.Czxid))
	fmt.Fprintf(&b, "ctime = %s\n", javaDate(st.Ctime))
	fmt.Fprintf(&b, "mZxid = %s\n", hex(st.Mzxid))
	fmt.Fprintf(&b, "mtime = %s\n", javaDate(st.Mtime))
	fmt.Fprintf(&b, "pZxid = %s\n", hex(st.Pzxid))
	fmt.Fprintf(&b, "cversion = %d\n", st.Cversion)
	fmt.Fprintf(&b, "dataVersion = %d\n", st.Version)
	fmt.Fprintf(&b, "aclVersion = %d\n", st.Aversion)
	fmt.Fprintf(&b, "ephemeralOwner = %s\n", hex(st.EphemeralOwner))
	fmt.Fprintf(&b, "dataLength = %d\n", st.DataLength)
	fmt.Fprintf(&b, "numChildren = %d\n", st.NumChildren)
	return b.String()
}

// formatData is how zkCli prints node data: Java's new String(data), or
// "null" for a node created without data.
func formatData(data []byte) string {
	if data == nil {
		return "null"
	}
	return string(data)
}

// formatList is Java's List.toString.
func formatList(items []string) string {
	return "[" + strings.Join(items, ", ") + "]"
}

// permString is zkCli's getPermString: the letters in "cdrwa" order.
func permString(perms int32) string {
	var b strings.Builder
	for _, p := range []struct {
		bit    int32
		letter byte
	}{{zk.PermCreate, 'c'}, {zk.PermDelete, 'd'}, {zk.PermRead, 'r'}, {zk.PermWrite, 'w'}, {zk.PermAdmin, 'a'}} {
		if perms&p.bit != 0 {
			b.WriteByte(p.letter)
		}
	}
	return b.String()
}

// formatACL is how getAcl prints each entry: "'world,'anyone\n: cdrwa".
func formatACL(acl []zk.ACL) string {
	var b strings.Builder
	for _, a := range acl {
		fmt.Fprintf(&b, "'%s,'%s\n: %s\n", a.Scheme, a.ID, permString(a.Perms))
	}
	return b.String()
}

// javaCodeText is KeeperException's text for the codes where it is not
// the code's name.
var javaCodeText = map[error]string{
	zk.ErrNotEmpty:                     "Directory not empty",
	zk.ErrSessionExpired:               "Session expired",
	zk.ErrInvalidCallback:              "Invalid callback",
	zk.ErrSessionMoved:                 "Session moved",
	zk.ErrNotReadOnly:                  "Not a read-only call",
	zk.ErrEphemeralOnLocalSession:      "Ephemeral node on local session",
	zk.ErrNoWatcher:                    "No such watcher",
	zk.ErrReconfigDisabled:             "Reconfig is disabled",
	zk.ErrSessionClosedRequireSASLAuth: "Session closed because client failed to authenticate",
	zk.ErrQuotaExceeded:                "Quota has exceeded",
	zk.ErrThrottled:                    "Op throttled due to high load",
	zk.ErrRequestTimeout:               "Request timeout",
}

// message is the text zkCli prints for a failed command. The common
// errors have their own sentences in zkCli; the rest are KeeperException
// messages ("KeeperErrorCode = NoWatcher for /a").
func message(err error) string {
	var ze *zk.Error
	if !errors.As(err, &ze) {
		if errors.Is(err, zk.ErrClosed) {
			return "Not connected"
		}
		return err.Error()
	}
	p := ze.Path
	switch {
	case errors.Is(err, zk.ErrNoNode):
		return "Node does not exist: " + p
	case errors.Is(err, zk.ErrNodeExists):
		return "Node already exists: " + p
	case errors.Is(err, zk.ErrNoAuth):
		return "Insufficient permission : " + p
	case errors.Is(err, zk.ErrBadVersion):
		return "version No is not valid : " + p
	case errors.Is(err, zk.ErrNotEmpty):
		return "Node not empty: " + p
	case errors.Is(err, zk.ErrNoChildrenForEphemerals):
		return "Ephemerals cannot have children: " + p
	case errors.Is(err, zk.ErrInvalidACL):
		return "Acl is not valid : " + p
	}
	return keeperMessage(ze)
}

// keeperMessage is KeeperException.getMessage().
func keeperMessage(ze *zk.Error) string {
	var code zk.Code
	text := ze.Err.Error()
	if errors.As(ze.Err, &code) {
		text = code.String()
		if t, ok := javaCodeText[error(code)]; ok {
			text = t
		}
	} else if errors.Is(ze.Err, zk.ErrClosed) {
		text = "ConnectionLoss"
	}
	if ze.Path == "" {
		return "KeeperErrorCode = " + text
	}
	return "KeeperErrorCode = " + text + " for " + ze.Path
}

// validatePath is Java's PathUtils.validatePath, with its messages, so
// that a bad path fails before it reaches the client library. A
// sequential node's path may end in "/": the server appends the number.
func validatePath(p string, sequential bool) error {
	if sequential {
		p += "1"
	}
	switch {
	case p == "":
		return failure("Path length must be > 0")
	case p[0] != '/':
		return failure("Path must start with / character")
	case p == "/":
		return nil
	case p[len(p)-1] == '/':
		return failure("Path must not end with / character")
	}
	if reason := pathReason(p); reason != "" {
		return fail("Invalid path string \"%s\" caused by %s", p, reason)
	}
	return nil
}

// pathReason finds the first bad name in an absolute path.
func pathReason(p string) string {
	for _, name := range strings.Split(p[1:], "/") {
		switch {
		case name == "":
			return fmt.Sprintf("empty node name specified @%d", strings.Index(p[1:], "//")+2)
		case name == "." || name == "..":
			return fmt.Sprintf("relative paths not allowed @%d", relativeAt(p, name))
		case strings.ContainsRune(name, 0):
			return fmt.Sprintf("null character not allowed @%d", strings.IndexByte(p, 0))
		}
	}
	return ""
}

// relativeAt is the index Java reports for a "." or ".." name: that of
// its last dot.
func relativeAt(p, name string) int {
	for i := 0; i+len(name)+1 <= len(p); i++ {
		if p[i] == '/' && p[i+1:i+1+len(name)] == name && (i+1+len(name) == len(p) || p[i+1+len(name)] == '/') {
			return i + len(name)
		}
	}
	return 0
}

// failure is a message for the user, worded as zkCli words it (so not in
// Go's error style).
type failure string

func (f failure) Error() string { return string(f) }

func fail(format string, a ...any) error { return failure(fmt.Sprintf(format, a...)) }
