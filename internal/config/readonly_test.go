package config

import (
	"strings"
	"testing"
)

// Ref: issue 12 §4. readonlymode.enabled is a system property in Apache
// (Boolean.getBoolean): -D enables it; zoo.cfg does not, as in Apache.
func TestReadOnlyMode(t *testing.T) {
	for _, tc := range []struct {
		name, cfg, flags string
		want, local      bool
		warn             string
	}{
		{name: "off by default"},
		{name: "flag", flags: "-Xmx1g -Dreadonlymode.enabled=true", want: true},
		{name: "flag any case", flags: "-Dreadonlymode.enabled=TRUE", want: true},
		{name: "flag false", flags: "-Dreadonlymode.enabled=false"},
		{name: "flag not boolean", flags: "-Dreadonlymode.enabled=yes", warn: "-Dreadonlymode.enabled"},
		{name: "later flag wins", flags: "-Dreadonlymode.enabled=true -Dreadonlymode.enabled=false"},
		{name: "zoo.cfg ignored", cfg: "readonlymode.enabled=true\n", warn: "system property"},
		{name: "local sessions", cfg: "localSessionsEnabled=true\n", flags: "-Dreadonlymode.enabled=true", want: true, local: true, warn: "local sessions"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse("zoo.cfg", []byte("dataDir=/tmp/zoo\nclientPort=2181\n"+tc.cfg))
			if err != nil {
				t.Fatal(err)
			}
			if err := c.ApplyJVMFlags("SERVER_JVMFLAGS", tc.flags); err != nil {
				t.Fatal(err)
			}
			if c.ReadOnlyMode != tc.want || c.LocalSessionsEnabled != tc.local {
				t.Errorf("ReadOnlyMode, LocalSessionsEnabled = %v, %v; want %v, %v", c.ReadOnlyMode, c.LocalSessionsEnabled, tc.want, tc.local)
			}
			var warns []string
			for _, w := range c.Warnings {
				warns = append(warns, w.String())
			}
			if got := strings.Join(warns, "\n"); tc.warn == "" && got != "" || !strings.Contains(got, tc.warn) {
				t.Errorf("warnings %q; want one containing %q", got, tc.warn)
			}
		})
	}
}
