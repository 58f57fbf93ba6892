package snap

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"testing/iotest"

	"github.com/zoohq/zoo/internal/vfs"
)

func TestReceiveStoresAVerifiedFile(t *testing.T) {
	fs, dir := vfs.Default, t.TempDir()
	src := t.TempDir()
	st := testState(t)
	name, err := Write(fs, src, Meta{Index: 42, Term: 3, Zxid: 42}, st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	file, err := os.ReadFile(filepath.Join(src, name))
	if err != nil {
		t.Fatal(err)
	}

	m, got, err := Receive(fs, dir, 42, bytes.NewReader(file), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Index != 42 || m.Term != 3 || got.Tree.NodeCount() != st.Tree.NodeCount() {
		t.Fatalf("received %+v with %d nodes; want index 42 term 3, %d nodes", m, got.Tree.NodeCount(), st.Tree.NodeCount())
	}
	lm, _, _, err := Load(fs, dir, Options{})
	if err != nil || lm != m {
		t.Fatalf("Load after Receive: %+v, %v", lm, err)
	}
}

func TestReceiveLeavesNothingOnABadStream(t *testing.T) {
	fs := vfs.Default
	src := t.TempDir()
	name, err := Write(fs, src, Meta{Index: 7, Term: 1, Zxid: 7}, smallState(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	file, err := os.ReadFile(filepath.Join(src, name))
	if err != nil {
		t.Fatal(err)
	}
	flipped := bytes.Clone(file)
	flipped[len(flipped)/2] ^= 0x40
	broken := errors.New("stream broke")
	cases := []struct {
		name  string
		index uint64
		r     io.Reader
	}{
		{"truncated", 7, bytes.NewReader(file[:len(file)-3])},
		{"corrupt", 7, bytes.NewReader(flipped)},
		{"another index", 8, bytes.NewReader(file)},
		{"stream error", 7, io.MultiReader(bytes.NewReader(file[:100]), iotest.ErrReader(broken))},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if _, _, err := Receive(fs, dir, tc.index, tc.r, Options{}); err == nil {
				t.Fatal("Receive accepted a bad stream")
			}
			if names, _ := fs.List(dir); len(names) != 0 {
				t.Fatalf("left %v behind", names)
			}
		})
	}
}
