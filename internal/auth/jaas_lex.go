package auth

import (
	"errors"
	"fmt"
	"strings"
)

type tokKind int

const (
	tokEOF tokKind = iota
	tokWord
	tokString
	tokLBrace
	tokRBrace
	tokSemi
	tokEquals
)

type token struct {
	kind tokKind
	text string
	line int
}

func (t token) String() string {
	switch t.kind {
	case tokEOF:
		return "end of file"
	case tokString:
		return fmt.Sprintf("string %q", t.text)
	case tokWord:
		return fmt.Sprintf("%q", t.text)
	}
	return fmt.Sprintf("%q", t.text)
}

// jaasLexer splits a JAAS file into tokens, tracking the line.
type jaasLexer struct {
	src  string
	pos  int
	line int
}

var (
	errUnterminatedComment = errors.New("unterminated /* comment")
	errUnterminatedString  = errors.New("unterminated quoted string")
)

func (l *jaasLexer) next() (token, error) {
	if err := l.skipSpace(); err != nil {
		return token{}, err
	}
	if l.pos >= len(l.src) {
		return token{kind: tokEOF, line: l.line}, nil
	}
	line := l.line
	switch c := l.src[l.pos]; c {
	case '{', '}', ';', '=':
		l.pos++
		kind := map[byte]tokKind{'{': tokLBrace, '}': tokRBrace, ';': tokSemi, '=': tokEquals}[c]
		return token{kind: kind, text: string(c), line: line}, nil
	case '"', '\'':
		s, err := l.quoted(c)
		return token{kind: tokString, text: s, line: line}, err
	}
	start := l.pos
	for l.pos < len(l.src) && !isJAASDelim(l.src[l.pos]) && !l.atComment() {
		l.pos++
	}
	return token{kind: tokWord, text: l.src[start:l.pos], line: line}, nil
}

func isJAASDelim(c byte) bool {
	return strings.IndexByte("{};=\"' \t\r\n\f", c) >= 0
}

func (l *jaasLexer) atComment() bool {
	return strings.HasPrefix(l.src[l.pos:], "//") || strings.HasPrefix(l.src[l.pos:], "/*")
}

// skipSpace skips white space and comments.
func (l *jaasLexer) skipSpace() error {
	for l.pos < len(l.src) {
		switch rest := l.src[l.pos:]; {
		case rest[0] == '\n':
			l.line++
			l.pos++
		case rest[0] == ' ' || rest[0] == '\t' || rest[0] == '\r' || rest[0] == '\f':
			l.pos++
		case strings.HasPrefix(rest, "//"):
			end := strings.IndexByte(rest, '\n')
			if end < 0 {
				end = len(rest)
			}
			l.pos += end
		case strings.HasPrefix(rest, "/*"):
			end := strings.Index(rest[2:], "*/")
			if end < 0 {
				return errUnterminatedComment
			}
			l.line += strings.Count(rest[:end+4], "\n")
			l.pos += end + 4
		default:
			return nil
		}
	}
	return nil
}

// quoted reads a string quoted with q, with the backslash escapes of
// Java's StreamTokenizer (\n, \t, \r, \b, \f, \\, \", \', and \ before
// any other character meaning that character). A quoted string may not
// span lines, as in StreamTokenizer.
func (l *jaasLexer) quoted(q byte) (string, error) {
	l.pos++
	var b strings.Builder
	for l.pos < len(l.src) {
		c := l.src[l.pos]
		l.pos++
		switch c {
		case q:
			return b.String(), nil
		case '\n':
			l.line++
			return "", errUnterminatedString
		case '\\':
			if l.pos >= len(l.src) {
				return "", errUnterminatedString
			}
			e := l.src[l.pos]
			l.pos++
			switch e {
			case 'n':
				e = '\n'
			case 't':
				e = '\t'
			case 'r':
				e = '\r'
			case 'b':
				e = '\b'
			case 'f':
				e = '\f'
			case '\n':
				l.line++
				return "", errUnterminatedString
			}
			b.WriteByte(e)
		default:
			b.WriteByte(c)
		}
	}
	return "", errUnterminatedString
}
