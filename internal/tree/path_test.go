package tree

import (
	"errors"
	"testing"

	"github.com/zoohq/zoo/internal/jute"
)

// TestValidatePath covers PathUtils.validatePath. The cases marked
// "Apache" were sent raw (create under an existing parent) to Apache
// 3.8.0, which answered BadArguments for the bad ones and created the
// good ones.
// Ref: programmer's guide, "ZNodes" (naming).
func TestValidatePath(t *testing.T) {
	tests := []struct {
		path string
		ok   bool
	}{
		{"/", true},
		{"/a", true},
		{"/a/b/c", true},
		{"/...", true},
		{"/a..", true},
		{"/.a", true},
		{"/a/.0000000006", true},  // Apache: sequential create of "/a/."
		{"/a/e/0000000000", true}, // Apache: sequential create of "/a/e/"
		{"/a/\u00a0", true},       // Apache: first character after \u009F
		{"/a/\u00e9\u4e2d", true},
		{"/a/\uf900", true}, // just after the refused private-use block
		{"/a/\uffef", true},
		{"", false},              // Apache
		{"a", false},             // Apache
		{"a/b", false},           // does not start with /
		{"/a/", false},           // Apache: trailing slash
		{"//", false},            // trailing slash
		{"/a//b", false},         // empty segment
		{"/a/./b", false},        // relative
		{"/a/.", false},          // relative
		{"/a/..", false},         // Apache
		{"/..", false},           // relative
		{"/a/\x00b", false},      // Apache: null character
		{"/a/\x01b", false},      // Apache
		{"/a/\x1f", false},       // control character
		{"/a/\x7f", false},       // Apache
		{"/a/\u0080", false},     // C1 control
		{"/a/\u009f", false},     // C1 control
		{"/a/\ud7ff", true},      // just before the surrogates
		{"/a/\ue000", false},     // Apache: private use
		{"/a/\uf8ff", false},     // private use
		{"/a/\ufff0", false},     // specials
		{"/a/\ufffe", false},     // Apache
		{"/a/\ufffd", false},     // replacement character
		{"/a/\U0001F600", false}, // Apache: a surrogate pair in Java
		{"/a/\xff\xfe", false},   // Apache: not UTF-8
	}
	for _, tc := range tests {
		err := ValidatePath(tc.path)
		if (err == nil) != tc.ok {
			t.Errorf("ValidatePath(%q) = %v, want ok=%v", tc.path, err, tc.ok)
		}
		if err != nil && !errors.Is(err, jute.BadArguments) {
			t.Errorf("ValidatePath(%q) = %v, want BadArguments", tc.path, err)
		}
	}
}

func TestSplitJoin(t *testing.T) {
	tests := []struct {
		path, parent, name string
		ok                 bool
	}{
		{"/a", "/", "a", true},
		{"/a/b", "/a", "b", true},
		{"/", "/", "", true},
		{"a", "", "", false},
	}
	for _, tc := range tests {
		p, n, ok := Split(tc.path)
		if p != tc.parent || n != tc.name || ok != tc.ok {
			t.Errorf("Split(%q) = %q, %q, %v", tc.path, p, n, ok)
		}
		if ok && tc.path != "/" && Join(p, n) != tc.path {
			t.Errorf("Join(%q, %q) = %q", p, n, Join(p, n))
		}
	}
}

func TestIsSpecialPath(t *testing.T) {
	for _, p := range []string{"/", "/zookeeper", "/zookeeper/quota", "/zookeeper/config"} {
		if !IsSpecialPath(p) {
			t.Errorf("IsSpecialPath(%s) = false", p)
		}
	}
	for _, p := range []string{"/a", "/zookeeper/quota/a", "/zookeeperx"} {
		if IsSpecialPath(p) {
			t.Errorf("IsSpecialPath(%s) = true", p)
		}
	}
}
