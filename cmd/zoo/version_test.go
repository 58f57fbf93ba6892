package main

import (
	"bytes"
	"os/exec"
	"runtime/debug"
	"strings"
	"testing"
)

func TestDescribeBuild(t *testing.T) {
	vcs := []debug.BuildSetting{
		{Key: "vcs.revision", Value: "37528e2a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e"},
		{Key: "vcs.time", Value: "2026-11-25T18:00:00Z"},
		{Key: "vcs.modified", Value: "true"},
	}
	info := func(v string, s ...debug.BuildSetting) *debug.BuildInfo {
		return &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/zoohq/zoo", Version: v}, Settings: s}
	}
	tests := []struct {
		name    string
		ldflags string
		bi      *debug.BuildInfo
		want    string
	}{
		{"no build info", "", nil, baseVersion},
		{"local build", "", info("(devel)"), baseVersion},
		{"go install of a tag", "", info("v1.4.2"), "1.4.2"},
		{"pre-release tag", "", info("v1.5.0-rc.1"), "1.5.0-rc.1"},
		{"pseudo-version of a checkout", "", info("v0.0.0-20261125180000-37528e2a0b1c"), baseVersion},
		{"pseudo-version after a tag", "", info("v1.4.3-0.20261125180000-37528e2a0b1c"), baseVersion},
		{"modified tree", "", info("v1.4.2+dirty"), baseVersion},
		{"ldflags win over the module", "2.0.0", info("v1.4.2"), "2.0.0"},
		{"ldflags with a v", "v2.0.1", nil, "2.0.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := describeBuild(tt.ldflags, tt.bi).Release; got != tt.want {
				t.Errorf("release = %q, want %q", got, tt.want)
			}
		})
	}

	d := describeBuild("", info("(devel)", vcs...))
	if d.Revision != "37528e2a0b1c" || !d.Modified || d.Time != "2026-11-25T18:00:00Z" || d.Go != "go1.26.8" {
		t.Errorf("provenance = %+v", d)
	}
	out := d.String()
	for _, want := range []string{
		"zoo 0.1.0 (ZooKeeper protocol 3.9.2)\n",
		"commit 37528e2a0b1c (modified), 2026-11-25T18:00:00Z\n",
		"go1.26.8 ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output %q lacks %q", out, want)
		}
	}
	if out := describeBuild("", info("v1.4.2")).String(); strings.Contains(out, "commit") {
		t.Errorf("a build without vcs info prints a commit line: %q", out)
	}
}

func TestRunVersionRejectsArguments(t *testing.T) {
	var b bytes.Buffer
	if err := runVersion([]string{"extra"}, &b); err == nil {
		t.Fatal("zoo version extra: no error")
	}
	if b.Len() != 0 {
		t.Errorf("printed %q with an error", b.String())
	}
}

// TestVersionCommand builds the binary with a link-time version, as a
// release build does, and runs both spellings of the command.
func TestVersionCommand(t *testing.T) {
	bin := buildZoo(t, "-ldflags", "-X main.version=9.8.7")
	for _, arg := range []string{"version", "--version"} {
		out, err := exec.Command(bin, arg).Output()
		if err != nil {
			t.Fatalf("zoo %s: %v", arg, err)
		}
		first, _, _ := strings.Cut(string(out), "\n")
		if want := "zoo 9.8.7 (ZooKeeper protocol 3.9.2)"; first != want {
			t.Errorf("zoo %s: first line %q, want %q", arg, first, want)
		}
	}
}
