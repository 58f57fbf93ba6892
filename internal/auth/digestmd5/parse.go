package digestmd5

import (
	"fmt"
	"strings"
)

// maxDigestToken bounds a DIGEST-MD5 challenge or response: RFC 2831
// says both are under 2048 and 4096 bytes.
const maxDigestToken = 4096

// parseDirectives reads an RFC 2831 digest-challenge or digest-response:
// comma-separated key=value pairs, values bare tokens or quoted strings
// with \-escapes, linear white space around the separators, empty
// elements allowed ("a=b,,c=d"). Keys are folded to lower case. A
// directive given twice is an error (each may occur at most once).
func parseDirectives(b []byte) (map[string]string, error) {
	if len(b) > maxDigestToken {
		return nil, fmt.Errorf("%w: token of %d bytes exceeds %d", ErrFailed, len(b), maxDigestToken)
	}
	s := string(b)
	out := map[string]string{}
	i := 0
	for {
		i = skipLWS(s, i)
		for i < len(s) && s[i] == ',' {
			i = skipLWS(s, i+1)
		}
		if i >= len(s) {
			return out, nil
		}
		start := i
		for i < len(s) && isTokenChar(s[i]) {
			i++
		}
		key := strings.ToLower(s[start:i])
		if key == "" {
			return nil, fmt.Errorf("%w: malformed directive at byte %d", ErrFailed, start)
		}
		i = skipLWS(s, i)
		if i >= len(s) || s[i] != '=' {
			return nil, fmt.Errorf("%w: directive %q has no value", ErrFailed, key)
		}
		i = skipLWS(s, i+1)
		var val string
		var err error
		if i < len(s) && s[i] == '"' {
			val, i, err = quotedValue(s, i+1)
			if err != nil {
				return nil, fmt.Errorf("%w: directive %q: %v", ErrFailed, key, err)
			}
		} else {
			start := i
			for i < len(s) && isTokenChar(s[i]) {
				i++
			}
			val = s[start:i]
		}
		if _, dup := out[key]; dup {
			return nil, fmt.Errorf("%w: directive %q given twice", ErrFailed, key)
		}
		out[key] = val
		i = skipLWS(s, i)
		if i < len(s) && s[i] != ',' {
			return nil, fmt.Errorf("%w: unexpected %q after directive %q", ErrFailed, s[i], key)
		}
	}
}

func skipLWS(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n') {
		i++
	}
	return i
}

// isTokenChar is RFC 2616's token: printable ASCII but separators.
func isTokenChar(c byte) bool {
	return c > 32 && c < 127 && !strings.ContainsRune("()<>@,;:\\\"/[]?={}", rune(c))
}

// quotedValue reads a quoted string whose opening quote is before s[i],
// returning the value and the index after the closing quote.
func quotedValue(s string, i int) (string, int, error) {
	var b strings.Builder
	for i < len(s) {
		switch c := s[i]; c {
		case '"':
			return b.String(), i + 1, nil
		case '\\':
			if i+1 >= len(s) {
				return "", i, fmt.Errorf("unterminated quoted string")
			}
			b.WriteByte(s[i+1])
			i += 2
		default:
			b.WriteByte(c)
			i++
		}
	}
	return "", i, fmt.Errorf("unterminated quoted string")
}

// quote renders v as a quoted string.
func quote(v string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(v) + `"`
}
