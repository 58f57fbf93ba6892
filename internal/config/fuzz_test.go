package config

import (
	"errors"
	"strings"
	"testing"
)

// FuzzParse checks that any input parses without panicking, that every
// problem points into the file, and that server lines survive a round trip
// through String.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"tickTime=2000\ndataDir=/d\nclientPort=2181\n",
		"server.1=[::1]:2888:3888:observer;[::2]:2181\nserver.2=h:1:2;3\n",
		"a=\\u0041\\\n  b\r\n# c\n! d\n=\n:\n\\\n",
		"4lw.commands.whitelist=*, ruok\njute.maxbuffer=0x10\nversion=ff\n",
		"dataDir=/d\ndynamicConfigFile=/x\nserver.1=h:1:2\ngroup.1=1\n",
		"x=\\ud83d\n\\u=1\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		c, err := Parse("f.cfg", []byte(text))
		if c == nil {
			t.Fatal("nil config")
		}
		lines := len(naturalLines(text))
		if err != nil {
			var ps Problems
			if !errors.As(err, &ps) || len(ps) == 0 {
				t.Fatalf("error %T %v is not Problems", err, err)
			}
			for _, p := range ps {
				if p.Pos.File != "f.cfg" || p.Pos.Line < 1 || p.Pos.Line > lines {
					t.Fatalf("problem %v points outside the %d-line file", p, lines)
				}
				if !strings.HasPrefix(p.Error(), p.Pos.String()+": ") {
					t.Fatalf("problem %q does not start with its position", p.Error())
				}
			}
		}
		for _, w := range c.Warnings {
			if w.Pos.Line < 1 || w.Pos.Line > lines {
				t.Fatalf("warning %v points outside the %d-line file", w, lines)
			}
		}
		for _, s := range c.Servers {
			back, err := ParseServer(s.ID, s.String())
			back.Pos = s.Pos
			if err != nil || back != s {
				t.Fatalf("server %+v -> %q -> %+v, %v", s, s.String(), back, err)
			}
		}
		c.EnsureDefaults()
		_ = c.Validate()
	})
}
