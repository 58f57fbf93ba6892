package config

import (
	"fmt"
	"strings"
	"unicode/utf16"
)

// prop is one key/value pair of a Java properties file, with the line its
// logical line starts on.
type prop struct {
	key, value string
	line       int
}

// isPropSpace is the whitespace of java.util.Properties: space, tab and
// form feed.
func isPropSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\f' }

// naturalLines splits data into lines ended by \n, \r or \r\n, as
// Properties.LineReader does.
func naturalLines(data string) []string {
	var lines []string
	for len(data) > 0 {
		i := strings.IndexAny(data, "\r\n")
		if i < 0 {
			lines = append(lines, data)
			break
		}
		lines = append(lines, data[:i])
		if data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n' {
			i++
		}
		data = data[i+1:]
	}
	return lines
}

func trimLeftPropSpace(s string) string {
	i := 0
	for i < len(s) && isPropSpace(s[i]) {
		i++
	}
	return s[i:]
}

// continues reports whether a line ends with an odd number of backslashes,
// which joins it to the next line.
func continues(s string) bool {
	n := 0
	for i := len(s) - 1; i >= 0 && s[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

// parseProperties reads data with the rules of java.util.Properties.load:
// '#' and '!' comment lines, a key ending at the first unescaped '=', ':' or
// whitespace, whitespace around the separator skipped, a trailing odd
// backslash continuing the line (the next line's leading whitespace
// dropped), and \t \n \r \f \uXXXX escapes. Duplicate keys are all returned,
// in order. The bytes are read as UTF-8 where Java reads ISO-8859-1; the two
// agree on ASCII, which is what zoo.cfg files hold.
func parseProperties(name, data string) ([]prop, Problems) {
	lines := naturalLines(data)
	var props []prop
	var probs Problems
	for i := 0; i < len(lines); i++ {
		start := i + 1
		l := trimLeftPropSpace(lines[i])
		if l == "" || l[0] == '#' || l[0] == '!' {
			continue
		}
		for continues(l) {
			l = l[:len(l)-1]
			if i+1 >= len(lines) {
				break
			}
			i++
			l += trimLeftPropSpace(lines[i])
		}
		rawKey, rawValue := splitKeyValue(l)
		key, err1 := unescape(rawKey)
		value, err2 := unescape(rawValue)
		if err := firstErr(err1, err2); err != nil {
			probs = append(probs, &Problem{Pos: Pos{name, start}, Err: err})
			continue
		}
		props = append(props, prop{key: key, value: value, line: start})
	}
	return props, probs
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// splitKeyValue splits a logical line into its raw (still escaped) key and
// value.
func splitKeyValue(l string) (key, value string) {
	keyLen, valueStart := 0, len(l)
	hasSep, escaped := false, false
	for ; keyLen < len(l); keyLen++ {
		c := l[keyLen]
		if !escaped && (c == '=' || c == ':') {
			valueStart, hasSep = keyLen+1, true
			break
		}
		if !escaped && isPropSpace(c) {
			valueStart = keyLen + 1
			break
		}
		escaped = c == '\\' && !escaped
	}
	for ; valueStart < len(l); valueStart++ {
		c := l[valueStart]
		if isPropSpace(c) {
			continue
		}
		if !hasSep && (c == '=' || c == ':') {
			hasSep = true
			continue
		}
		break
	}
	return l[:keyLen], l[valueStart:]
}

// unescape applies Properties.loadConvert: \t \n \r \f, \uXXXX (surrogate
// pairs joined), and a backslash before any other character stands for that
// character.
func unescape(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	var units []uint16 // pending \u escapes, to join surrogate pairs
	flush := func() {
		if len(units) > 0 {
			b.WriteString(string(utf16.Decode(units)))
			units = units[:0]
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			if c != '\\' { // a lone trailing backslash is dropped
				flush()
				b.WriteByte(c)
			}
			continue
		}
		i++
		c = s[i]
		if c == 'u' {
			if i+5 > len(s) {
				return "", fmt.Errorf("%w: malformed \\uxxxx encoding", ErrSyntax)
			}
			var u uint16
			for _, h := range []byte(s[i+1 : i+5]) {
				d, ok := hexDigit(h)
				if !ok {
					return "", fmt.Errorf("%w: malformed \\uxxxx encoding", ErrSyntax)
				}
				u = u<<4 | uint16(d)
			}
			units = append(units, u)
			i += 4
			continue
		}
		flush()
		switch c {
		case 't':
			c = '\t'
		case 'r':
			c = '\r'
		case 'n':
			c = '\n'
		case 'f':
			c = '\f'
		}
		b.WriteByte(c)
	}
	flush()
	return b.String(), nil
}

func hexDigit(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// javaTrim is String.trim: it strips every character up to and including
// space from both ends. QuorumPeerConfig trims keys and values with it.
func javaTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
}
