package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/zoohq/zoo/internal/apache"
	"github.com/zoohq/zoo/internal/snap"
	"github.com/zoohq/zoo/internal/tree"
	"github.com/zoohq/zoo/internal/txn"
)

// isApacheSnapshot reports whether f starts like one of Apache's snapshot
// files (plain, gzip or snappy-java), so that `zoo snap dump` prints it
// rather than report a checksum mismatch.
func isApacheSnapshot(f io.ReaderAt) bool {
	var b [8]byte
	n, _ := f.ReadAt(b[:], 0)
	h := b[:n]
	return bytes.HasPrefix(h, []byte("ZKSN")) || bytes.HasPrefix(h, []byte{0x1f, 0x8b}) ||
		bytes.HasPrefix(h, []byte("\x82SNAPPY\x00"))
}

// readApacheSnapshot loads an Apache snapshot file as a state, labelled
// with the zxid its name carries.
func readApacheSnapshot(f io.ReaderAt, path string) (snap.Meta, *txn.State, error) {
	name := filepath.Base(path)
	c := apache.Plain
	switch {
	case strings.HasSuffix(name, ".gz"):
		c = apache.Gzip
	case strings.HasSuffix(name, ".snappy"):
		c = apache.Snappy
	}
	var zxid int64
	if hex, ok := strings.CutPrefix(strings.TrimSuffix(strings.TrimSuffix(name, ".gz"), ".snappy"), "snapshot."); ok {
		z, _ := strconv.ParseUint(hex, 16, 64)
		zxid = int64(z)
	}
	st := txn.NewState(tree.New())
	s, err := apache.ReadSnapshot(bufio.NewReader(io.NewSectionReader(f, 0, 1<<62)), name, c, apache.Options{}, func(n *apache.Node) error {
		return st.Tree.Restore(n.Path, n.Data, n.ACL, n.Stat)
	})
	if err != nil {
		return snap.Meta{}, nil, fmt.Errorf("reading it as an Apache snapshot: %w", err)
	}
	st.Tree.RebuildQuotas()
	for _, se := range s.Sessions {
		st.Sessions[se.ID] = txn.SessionInfo{TimeoutMs: se.TimeoutMs, Password: apache.Password(se.ID)}
	}
	return snap.Meta{Index: uint64(zxid), Term: uint64(zxid >> 32), Zxid: zxid}, st, nil
}
