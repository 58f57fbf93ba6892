package main

import (
	"errors"
	"fmt"
	"io"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
)

// version is the release, set when linking a release build:
//
//	go build -ldflags "-X main.version=1.2.3" ./cmd/zoo
//
// Empty (any other build) means the module's version when the binary was
// built by "go install github.com/zoohq/zoo/cmd/zoo@v1.2.3", else
// baseVersion.
var version string

// baseVersion is the release the source tree is working towards, reported
// by builds that carry no release version of their own.
const baseVersion = "0.1.0"

// Version is the Zoo release this binary reports: in "zoo version", in
// the start-up log, and after "-zoo-" in the ZooKeeper version string that
// srvr, stat, mntr and envi print.
var Version = describeBuild(version, readBuildInfo()).Release

// buildDesc is what "zoo version" prints about the binary.
type buildDesc struct {
	Release  string // "1.2.3", without a leading v
	Revision string // the commit, shortened; "" when the build did not record it
	Time     string // the commit's time (RFC 3339), "" when unknown
	Modified bool   // built from a tree with uncommitted changes
	Go       string // the Go release it was built with
}

func readBuildInfo() *debug.BuildInfo {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return nil
	}
	return bi
}

// pseudoVersion matches the tail of a Go pseudo-version
// (v0.0.0-20261125183000-0123456789ab): Go stamps one on builds from a
// checkout, and it names a commit, not a release.
var pseudoVersion = regexp.MustCompile(`[-.]\d{14}-[0-9a-f]{12}$`)

// describeBuild works out the release and the build's provenance from the
// link-time version (ldflags) and the build info Go embeds (bi may be nil).
// The link-time version wins; then a module release tag; then baseVersion.
func describeBuild(ldflags string, bi *debug.BuildInfo) buildDesc {
	d := buildDesc{Release: baseVersion, Go: runtime.Version()}
	if bi != nil {
		if bi.GoVersion != "" {
			d.Go = bi.GoVersion
		}
		if v := bi.Main.Version; isRelease(v) {
			d.Release = strings.TrimPrefix(v, "v")
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				d.Revision = s.Value[:min(len(s.Value), 12)]
			case "vcs.time":
				d.Time = s.Value
			case "vcs.modified":
				d.Modified = s.Value == "true"
			}
		}
	}
	if v := strings.TrimSpace(ldflags); v != "" {
		d.Release = strings.TrimPrefix(v, "v")
	}
	return d
}

// isRelease reports whether a module version names a tagged release
// rather than a local build ("(devel)"), a pseudo-version or a build from
// a modified tree ("+dirty").
func isRelease(v string) bool {
	return strings.HasPrefix(v, "v") && !strings.Contains(v, "+") && !pseudoVersion.MatchString(v)
}

// String is the text of "zoo version": the release and protocol level on
// the first line (scripts read that one), then the commit and toolchain.
func (d buildDesc) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "zoo %s (ZooKeeper protocol %s)\n", d.Release, zookeeperVersion)
	if d.Revision != "" {
		fmt.Fprintf(&b, "commit %s", d.Revision)
		if d.Modified {
			b.WriteString(" (modified)")
		}
		if d.Time != "" {
			fmt.Fprintf(&b, ", %s", d.Time)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "%s %s/%s\n", d.Go, runtime.GOOS, runtime.GOARCH)
	return b.String()
}

// runVersion is "zoo version" (also "zoo --version").
func runVersion(args []string, w io.Writer) error {
	if len(args) > 0 {
		return errors.New("usage: zoo version")
	}
	_, err := io.WriteString(w, describeBuild(version, readBuildInfo()).String())
	return err
}
