package archtest

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The pure core: no networking, no files, no raft, no goroutines, no clock.
// config may read files (Load); its parsing stays pure.
var pure = map[string][]string{
	"internal/jute":    {"net", "os", "syscall", "go.etcd.io/raft/v3"},
	"internal/tree":    {"net", "os", "syscall", "go.etcd.io/raft/v3"},
	"internal/txn":     {"net", "os", "syscall", "go.etcd.io/raft/v3"},
	"internal/watch":   {"net", "os", "syscall", "go.etcd.io/raft/v3"},
	"internal/session": {"net", "os", "syscall", "go.etcd.io/raft/v3"},
	"internal/acl":     {"net", "os", "syscall", "go.etcd.io/raft/v3"},
	"internal/config":  {"net", "syscall", "go.etcd.io/raft/v3"},
	// member turns membership into raft conf changes: raftpb, not raft.
	"internal/member": {"net", "os", "syscall", "go.etcd.io/raft/v3"},
}

const module = "github.com/zoohq/zoo/"

type pkg struct {
	ImportPath string
	Dir        string
	Imports    []string
	GoFiles    []string
}

func list(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", module+"...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// Ref: shared/DESIGN.md, "Packages": tree, txn, watch, session and acl
// import no networking and start no goroutines.
func TestPureCoreImports(t *testing.T) {
	for _, p := range list(t) {
		rel := strings.TrimPrefix(p.ImportPath, module)
		banned, ok := pure[rel]
		if !ok {
			continue
		}
		for _, imp := range p.Imports {
			if slices.Contains(banned, imp) {
				t.Errorf("%s imports %s", rel, imp)
			}
		}
		for _, f := range p.GoFiles {
			src, err := os.ReadFile(filepath.Join(p.Dir, f))
			if err != nil {
				t.Fatal(err)
			}
			for _, bad := range []string{"time.Now(", "go func("} {
				if bytes.Contains(src, []byte(bad)) {
					t.Errorf("%s/%s uses %s: the pure core takes time as input and starts no goroutines", rel, f, bad)
				}
			}
		}
	}
}

// Ref: shared/STYLE.md, "Proposed package layout": the public client
// imports only jute (and the SASL mechanism both sides share, which holds
// no server code), so it never links server code.
func TestClientImportsNoServer(t *testing.T) {
	for _, p := range list(t) {
		rel := strings.TrimPrefix(p.ImportPath, module)
		if rel != "zk" && !strings.HasPrefix(rel, "recipe") {
			continue
		}
		for _, imp := range p.Imports {
			if strings.HasPrefix(imp, module+"internal/") && imp != module+"internal/jute" && imp != module+"internal/auth/digestmd5" {
				t.Errorf("%s imports %s", rel, imp)
			}
		}
	}
}
