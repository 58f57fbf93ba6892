package config

import (
	"errors"
	"slices"
	"testing"
)

func TestParseProperties(t *testing.T) {
	// Expectations checked against java.util.Properties.load (OpenJDK 17).
	type kv struct {
		k, v string
		line int
	}
	tests := []struct {
		name string
		in   string
		want []kv
	}{
		{"separators", "a=1\n  b = 2  \nc:3\nd 4\ne\t=\t5\nu :v\ns==t\n",
			[]kv{{"a", "1", 1}, {"b", "2  ", 2}, {"c", "3", 3}, {"d", "4", 4}, {"e", "5", 5}, {"u", "v", 6}, {"s", "=t", 7}}},
		{"empty values", "f\ng=\n", []kv{{"f", "", 1}, {"g", "", 2}}},
		{"empty keys", "=q\n:r\n", []kv{{"", "q", 1}, {"", "r", 2}}},
		{"comments", "# x=1\n  ! y=2\n\n   \nz=3\n", []kv{{"z", "3", 5}}},
		{"continuation", "h = a\\\n    b\\\n  c\nnext=1\n", []kv{{"h", "abc", 1}, {"next", "1", 4}}},
		{"even backslashes do not continue", "i=x\\\\\nj=2\n", []kv{{"i", `x\`, 1}, {"j", "2", 2}}},
		{"escapes", `j=\u0041\t\q` + "\n", []kv{{"j", "A\tq", 1}}},
		{"surrogate pair", `a=\ud83d\ude00` + "\n", []kv{{"a", "😀", 1}}},
		{"escaped separators in key", "k\\=l=m\nn\\ o=p\n", []kv{{"k=l", "m", 1}, {"n o", "p", 2}}},
		{"line endings", "a=1\r\nb=2\rc=3\n#comment\\\nd=4\n", []kv{{"a", "1", 1}, {"b", "2", 2}, {"c", "3", 3}, {"d", "4", 5}}},
		{"continuation at EOF", "a=x\\", []kv{{"a", "x", 1}}},
		{"blank line ends continuation", "a=x\\\n\n  b=2\n", []kv{{"a", "x", 1}, {"b", "2", 3}}},
		{"hash inside continuation is not a comment", "a=x\\\n#y\n", []kv{{"a", "x#y", 1}}},
		{"duplicates kept in order", "a=1\na=2\n", []kv{{"a", "1", 1}, {"a", "2", 2}}},
		{"no trailing newline", "a=1", []kv{{"a", "1", 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			props, probs := parseProperties("f", tt.in)
			if probs != nil {
				t.Fatalf("problems: %v", probs)
			}
			var got []kv
			for _, p := range props {
				got = append(got, kv{p.key, p.value, p.line})
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("got %v\nwant %v", got, tt.want)
			}
		})
	}
}

func TestParsePropertiesMalformedEscape(t *testing.T) {
	// Java: IllegalArgumentException "Malformed \uxxxx encoding."
	for _, in := range []string{"ok=1\na=\\u00\n", "ok=1\na=\\uZZZZ\n", "ok=1\n\\u12=x\n"} {
		props, probs := parseProperties("zoo.cfg", in)
		if len(probs) != 1 || !errors.Is(probs, ErrSyntax) || probs[0].Pos != (Pos{"zoo.cfg", 2}) {
			t.Errorf("%q: problems %v", in, probs)
		}
		if len(props) != 1 || props[0].key != "ok" {
			t.Errorf("%q: props %v; the good line should survive", in, props)
		}
	}
}

func TestJavaTrim(t *testing.T) {
	tests := map[string]string{
		"  a b \t":  "a b",
		"\x00x\x1f": "x",
		"":          "",
		" é ":       "é",
	}
	for in, want := range tests {
		if got := javaTrim(in); got != want {
			t.Errorf("javaTrim(%q) = %q, want %q", in, got, want)
		}
	}
}
