// Package fourlw formats ZooKeeper's four-letter words ("ruok", "srvr",
// "mntr", ...) byte for byte as Apache ZooKeeper 3.8 answers them, so that
// monitoring scripts, zkServer.sh and client libraries that parse them keep
// working against Zoo.
//
// A four-letter word arrives as the first four bytes of a fresh client
// connection, where a length prefix would otherwise be. The server checks
// IsCommand on those bytes, answers with Respond (which applies the
// whitelist) and closes the connection. The package does no I/O: the server
// implements Source, and the formatting here is pure.
//
// The formats were copied from a running Apache 3.8.0 (testdata/apache holds
// its raw answers, and the golden tests reproduce them from the same values).
package fourlw

import "strings"

// telnetClose is the control sequence telnet sends when it closes a
// connection; Apache knows it as a command so the log stays clean.
const telnetClose = "\xff\xf4\xff\xfd"

// commands lists every four-letter word Apache 3.8 knows
// (FourLetterCommands.cmd2String). "*" in the whitelist enables all of them.
var commands = []string{
	"conf", "cons", "crst", "dirs", "dump", "envi", "gtmk", "ruok", "stmk",
	"srst", "srvr", "stat", "wchc", "wchp", "wchs", "mntr", "isro", "hash", telnetClose,
}

// notServing is Apache's AbstractFourLetterCommand.ZK_NOT_SERVING.
const notServing = "This ZooKeeper instance is not currently serving requests\n"

// IsCommand reports whether word, the first four bytes of a connection, is a
// four-letter word Apache 3.8 knows. Anything else is the length prefix of an
// ordinary request.
func IsCommand(word string) bool {
	for _, c := range commands {
		if c == word {
			return true
		}
	}
	return false
}

// commandName is how Apache names a command in messages.
func commandName(word string) string {
	if word == telnetClose {
		return "telnet close"
	}
	return word
}

// Whitelist is the set of enabled four-letter words
// (4lw.commands.whitelist). The zero value enables only "srvr", which is
// Apache 3.8's default.
type Whitelist struct {
	all bool
	set map[string]bool
}

// NewWhitelist builds a whitelist from the comma-separated entries of
// 4lw.commands.whitelist (already split or not: each entry is split on commas
// and trimmed). "*" enables every command. "srvr" is always enabled, as in
// Apache, because zkServer.sh status depends on it.
func NewWhitelist(entries []string) Whitelist {
	w := Whitelist{set: map[string]bool{}}
	for _, e := range entries {
		for _, c := range strings.Split(e, ",") {
			c = strings.TrimSpace(c)
			switch c {
			case "":
			case "*":
				w.all = true
			default:
				w.set[c] = true
			}
		}
	}
	return w
}

// Allows reports whether word may be executed.
func (w Whitelist) Allows(word string) bool {
	if word == "srvr" || w.all && IsCommand(word) {
		return true
	}
	return w.set[commandName(word)]
}

// NotWhitelisted is Apache's answer to a known command that the whitelist
// does not enable.
func NotWhitelisted(word string) string {
	return commandName(word) + " is not executed because it is not in the whitelist.\n"
}

// Respond answers word as Apache does: the whitelist message if the command
// is known but not enabled, otherwise Format's answer. ok is false if word is
// not a four-letter word at all; the server then treats the four bytes as a
// length prefix.
func Respond(word string, wl Whitelist, src Source) (out string, ok bool) {
	if !IsCommand(word) {
		return "", false
	}
	if !wl.Allows(word) {
		return NotWhitelisted(word), true
	}
	return Format(word, src)
}

// Format returns word's answer, ignoring the whitelist. ok is false for a word
// that is not a four-letter word. "crst" and "srst" reset statistics through
// src before answering. "stmk" answers with the current trace mask; the
// server, which reads its 8-byte argument, sets the mask first.
func Format(word string, src Source) (out string, ok bool) {
	var b strings.Builder
	switch word {
	case "ruok":
		b.WriteString("imok")
	case "isro":
		formatIsro(&b, src)
	case "envi":
		formatEnvi(&b, src)
	case "gtmk", "stmk":
		b.WriteString(itoa(src.TraceMask()))
	case telnetClose:
		// Nothing to say; the connection just closes.
	default:
		f, known := needsServing[word]
		if !known {
			return "", false
		}
		if !src.Serving() {
			return notServing, true
		}
		f(&b, src)
	}
	return b.String(), true
}

// needsServing holds the commands that answer notServing while the server is
// not serving (Apache checks isZKServerRunning in each of these).
var needsServing = map[string]func(*strings.Builder, Source){
	"srvr": func(b *strings.Builder, s Source) { formatStat(b, s, false) },
	"stat": func(b *strings.Builder, s Source) { formatStat(b, s, true) },
	"cons": formatCons,
	"conf": formatConf,
	"dirs": formatDirs,
	"dump": formatDump,
	"mntr": formatMntr,
	"wchs": formatWchs,
	"hash": formatHash,
	"wchc": func(b *strings.Builder, s Source) { formatWatches(b, s, false) },
	"wchp": func(b *strings.Builder, s Source) { formatWatches(b, s, true) },
	"crst": func(b *strings.Builder, s Source) {
		s.ResetConnectionStats()
		b.WriteString("Connection stats reset.\n")
	},
	"srst": func(b *strings.Builder, s Source) {
		s.ResetServerStats()
		b.WriteString("Server stats reset.\n")
	},
}
