// Package docs holds Zoo's documentation. Its test checks the links of
// README.md and docs/*.md: a clone of the repository is all a reader has,
// so every relative link must name a file or directory inside it (and a
// #fragment a heading of that file).
package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// link matches an inline Markdown link or image, [text](target "title"),
// capturing the target.
var link = regexp.MustCompile(`\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)

// links returns the link targets of a Markdown text, outside code.
func links(md string) []string {
	var out []string
	fenced := false
	for l := range strings.Lines(md) {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		for _, m := range link.FindAllStringSubmatch(stripCodeSpans(l), -1) {
			out = append(out, m[1])
		}
	}
	return out
}

// stripCodeSpans removes `code` from a line: brackets there are not links.
func stripCodeSpans(l string) string {
	parts := strings.Split(l, "`")
	var b strings.Builder
	for i, p := range parts {
		if i%2 == 0 {
			b.WriteString(p)
		}
	}
	return b.String()
}

// slug is the anchor GitHub gives a heading: lower case, punctuation
// other than '-' and '_' dropped, spaces turned into '-'.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors returns the anchors of a Markdown file's headings.
func anchors(md string) map[string]bool {
	out := map[string]bool{}
	fenced := false
	for l := range strings.Lines(md) {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fenced = !fenced
		}
		if h, ok := strings.CutPrefix(l, "#"); ok && !fenced {
			out[slug(strings.TrimLeft(h, "#"))] = true
		}
	}
	return out
}

func TestLinksStayInTheRepository(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, filepath.Join(root, "README.md"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name, _ := filepath.Rel(root, f)
		for _, target := range links(string(b)) {
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			if err := checkLink(root, f, string(b), target); err != "" {
				t.Errorf("%s: link %q: %s", name, target, err)
			}
		}
	}
}

// checkLink returns why target, linked from file (whose text is md), is
// broken, or "".
func checkLink(root, file, md, target string) string {
	path, frag, _ := strings.Cut(target, "#")
	dest := file
	if path != "" {
		if filepath.IsAbs(path) {
			return "absolute path"
		}
		dest = filepath.Join(filepath.Dir(file), filepath.FromSlash(path))
		if rel, err := filepath.Rel(root, dest); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return "points outside the repository"
		}
		st, err := os.Stat(dest)
		if err != nil {
			return "no such file"
		}
		if frag == "" || st.IsDir() {
			if frag != "" {
				return "fragment on a directory"
			}
			return ""
		}
		b, err := os.ReadFile(dest)
		if err != nil {
			return err.Error()
		}
		md = string(b)
	}
	if frag != "" && strings.HasSuffix(dest, ".md") && !anchors(md)[frag] {
		return "no heading #" + frag
	}
	return ""
}

func TestLinkChecker(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	ops := filepath.Join(root, "docs", "ops.md")
	if err := os.WriteFile(ops, []byte("# Ops\n\n## Data layout\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	readme := filepath.Join(root, "README.md")
	md := "# Zoo\n"
	tests := []struct {
		target string
		ok     bool
	}{
		{"docs/ops.md", true},
		{"docs/ops.md#data-layout", true},
		{"docs/", true},
		{"#zoo", true},
		{"docs/ops.md#nothing", false},
		{"docs/missing.md", false},
		{"../shared/DESIGN.md", false},
		{"/etc/passwd", false},
		{"#missing", false},
	}
	for _, tt := range tests {
		if got := checkLink(root, readme, md, tt.target); (got == "") != tt.ok {
			t.Errorf("checkLink(%q) = %q, want ok=%v", tt.target, got, tt.ok)
		}
	}
	got := links("see [a](a.md) and `[b](b.md)`\n```\n[c](c.md)\n```\n![img](i.png \"t\")\n")
	if want := []string{"a.md", "i.png"}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("links = %v, want %v", got, want)
	}
	if s := slug("Moving the data: `zoo import`"); s != "moving-the-data-zoo-import" {
		t.Errorf("slug = %q", s)
	}
}
