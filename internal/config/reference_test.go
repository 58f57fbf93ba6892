package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReferenceListsEveryKey keeps docs/configuration.md complete: every
// key Zoo reads, and every Apache key it warns about, has a row there.
func TestReferenceListsEveryKey(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "configuration.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	var keys []string
	for k := range handlers {
		keys = append(keys, k)
	}
	for k := range unsupported {
		keys = append(keys, k)
	}
	for _, p := range unsupportedPrefixes {
		keys = append(keys, p+"*")
	}
	keys = append(keys, "server.N", "group.N", "weight.N", "myid", "metricsProvider.*")
	for _, k := range keys {
		if !strings.Contains(doc, "`"+k+"`") {
			t.Errorf("docs/configuration.md does not list `%s`", k)
		}
	}
}
