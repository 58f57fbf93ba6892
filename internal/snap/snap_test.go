package snap

import (
	"github.com/zoohq/zoo/internal/vfs"

	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/klauspost/compress/snappy"

	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/internal/tree"
	"github.com/zoohq/zoo/internal/txn"
)

var openACL = []jute.ACL{{Perms: jute.PermAll, ID: jute.Id{Scheme: "world", ID: "anyone"}}}

// testState builds a state with nested nodes, every kind of node, many
// ACLs (nil and empty lists among them), nil, empty and large data, a
// quota and sessions.
func testState(t testing.TB) *txn.State {
	t.Helper()
	tr := tree.New()
	zxid := int64(0x100000000)
	create := func(path string, data []byte, acl []jute.ACL, owner int64) {
		t.Helper()
		zxid++
		if _, err := tr.CreateNode(path, data, acl, owner, -1, zxid, 1_700_000_000_000+zxid); err != nil {
			t.Fatalf("create %s: %v", path, err)
		}
	}
	create("/a", nil, openACL, 0)
	create("/a/b", []byte{}, openACL, 0)
	create("/a/b/c", []byte("deep"), openACL, 0)
	create("/a/b/c/d", []byte{0, 1, 2, 0xff}, openACL, 0)
	create("/a/bb", []byte("sibling"), nil, 0)
	create("/a/empty-acl", nil, []jute.ACL{}, 0)
	for i := range 40 {
		acl := []jute.ACL{
			{Perms: int32(i%31 + 1), ID: jute.Id{Scheme: "digest", ID: fmt.Sprintf("user%d:hash%d", i%20, i)}},
			{Perms: jute.PermRead, ID: jute.Id{Scheme: "ip", ID: "10.0.0.0/8"}},
		}
		create(fmt.Sprintf("/a/acl%02d", i), []byte(fmt.Sprint(i)), acl, 0)
	}
	create("/eph", []byte("e"), openACL, 0x100)
	create("/a/eph2", nil, openACL, 0x200)
	create("/cont", nil, openACL, tree.ContainerOwner)
	create("/cont/child", nil, openACL, 0)
	create("/ttl", []byte("t"), openACL, tree.TTLOwner(5000))
	create("/big", bytes.Repeat([]byte("x"), 200_000), openACL, 0)
	create("/q", []byte("quoted"), openACL, 0)
	create("/q/x", []byte("12345"), openACL, 0)
	create("/zookeeper/quota/q", nil, openACL, 0)
	create("/zookeeper/quota/q/zookeeper_limits", []byte("count=10,bytes=-1"), openACL, 0)
	create("/zookeeper/quota/q/zookeeper_stats", []byte("count=0,bytes=0"), openACL, 0)
	zxid++
	if _, err := tr.SetData("/a/b/c", []byte("changed"), -1, zxid, 2); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.SetACL("/a/b", []jute.ACL{{Perms: jute.PermRead, ID: jute.Id{Scheme: "world", ID: "anyone"}}}, -1); err != nil {
		t.Fatal(err)
	}
	st := txn.NewState(tr)
	st.Sessions[0x100] = txn.SessionInfo{TimeoutMs: 30000, Password: []byte("0123456789abcdef")}
	st.Sessions[0x200] = txn.SessionInfo{TimeoutMs: 4000, Password: []byte{}}
	st.Sessions[0x300] = txn.SessionInfo{TimeoutMs: 6000}
	return st
}

type nodeView struct {
	Data        []byte
	ACL         []jute.ACL
	Stat        tree.StatPersisted
	NumChildren int32
}

func nodes(tr *tree.Tree) map[string]nodeView {
	m := make(map[string]nodeView)
	tr.Walk(func(path string, n tree.Node) bool {
		m[path] = nodeView{n.Data, n.ACL, n.Stat, n.NumChildren}
		return true
	})
	return m
}

// sameState fails t unless got equals want node by node (nil told from
// empty), in digest, and in sessions, and got's tree is consistent.
func sameState(t *testing.T, got, want *txn.State) {
	t.Helper()
	if err := got.Tree.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
	if g, w := got.Tree.Digest(), want.Tree.Digest(); g != w {
		t.Errorf("digest %x, want %x", g, w)
	}
	if g, w := nodes(got.Tree), nodes(want.Tree); !reflect.DeepEqual(g, w) {
		for p, wn := range w {
			if gn, ok := g[p]; !ok || !reflect.DeepEqual(gn, wn) {
				t.Errorf("%s: got %+v, want %+v", p, gn, wn)
			}
		}
		t.Errorf("%d nodes, want %d", len(g), len(w))
	}
	if !reflect.DeepEqual(got.Sessions, want.Sessions) {
		t.Errorf("sessions %v, want %v", got.Sessions, want.Sessions)
	}
}

var compressions = []struct {
	name string
	c    Compression
}{{"none", CompressNone}, {"gzip", CompressGzip}, {"snappy", CompressSnappy}}

func TestRoundTrip(t *testing.T) {
	for _, tc := range compressions {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			want := testState(t)
			meta := Meta{Index: 42, Term: 3, Zxid: 0x100000099}
			name, err := Write(osFS{}, dir, meta, want, Options{Compression: tc.c})
			if err != nil {
				t.Fatal(err)
			}
			if name != "snap.000000000000002a" {
				t.Errorf("name %q", name)
			}
			m, got, skipped, err := Load(osFS{}, dir, Options{})
			if err != nil || len(skipped) != 0 {
				t.Fatalf("load: %v, skipped %v", err, skipped)
			}
			if m != meta {
				t.Errorf("meta %+v, want %+v", m, meta)
			}
			sameState(t, got, want)
			if g, w := got.Tree.Ephemerals(0x100), want.Tree.Ephemerals(0x100); !reflect.DeepEqual(g, w) {
				t.Errorf("ephemerals %v, want %v", g, w)
			}
			if g, w := got.Tree.ExpiredTTL(1<<62), want.Tree.ExpiredTTL(1<<62); !reflect.DeepEqual(g, w) {
				t.Errorf("expired TTL nodes %v, want %v", g, w)
			}
			// The quota must be armed again: a create under /q updates its
			// stats node in both trees alike.
			for _, st := range []*txn.State{got, want} {
				if _, err := st.Tree.CreateNode("/q/y", []byte("abc"), openACL, 0, -1, 0x200000000, 5); err != nil {
					t.Fatal(err)
				}
			}
			sameState(t, got, want)
			stats, _, _ := got.Tree.Get(tree.StatPath("/q"))
			if !strings.HasPrefix(string(stats), "count=3,") {
				t.Errorf("quota stats %q after a create, want count=3", stats)
			}
		})
	}
}

// TestStream feeds a Writer by hand, as the replica does for a fuzzy
// snapshot, and reads the bytes back with Read.
func TestStream(t *testing.T) {
	for _, tc := range compressions {
		t.Run(tc.name, func(t *testing.T) {
			want := testState(t)
			var buf bytes.Buffer
			w := NewWriter(&buf, Meta{Index: 7, Term: 1, Zxid: 9}, tc.c)
			if err := AddState(w, want); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if err := w.AddSession(1, 1, nil); !errors.Is(err, ErrClosed) {
				t.Errorf("AddSession after Close: %v, want ErrClosed", err)
			}
			m, got, err := Read(bytes.NewReader(buf.Bytes()), int64(buf.Len()), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if m != (Meta{Index: 7, Term: 1, Zxid: 9}) {
				t.Errorf("meta %+v", m)
			}
			sameState(t, got, want)
		})
	}
}

// TestACLTable checks that each distinct ACL list is written once however
// many nodes use it, including a list equal to another but in a different
// slice.
func TestACLTable(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf, Meta{}, CompressNone)
	copyACL := append([]jute.ACL(nil), openACL...)
	for i, acl := range [][]jute.ACL{openACL, openACL, copyACL, nil, {}, nil, openACL} {
		p := "/"
		if i > 0 {
			p = fmt.Sprintf("/n%d", i)
		}
		if err := w.AddNode(p, nil, acl, tree.StatPersisted{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if n := len(w.byContent); n != 3 {
		t.Errorf("%d ACL definitions, want 3 (open, nil, empty)", n)
	}
	if n := bytes.Count(buf.Bytes(), []byte("anyone")); n != 1 {
		t.Errorf("the open ACL is written %d times, want once", n)
	}
	_, st, err := Read(bytes.NewReader(buf.Bytes()), int64(buf.Len()), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string][]jute.ACL{"/n2": openACL, "/n3": nil, "/n4": {}} {
		if got, _, _ := st.Tree.ACL(p); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: ACL %#v, want %#v", p, got, want)
		}
	}
}

func encode(t testing.TB, st *txn.State, c Compression) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := NewWriter(&buf, Meta{Index: 5, Term: 2, Zxid: 77}, c)
	if err := AddState(w, st); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// smallState is a few nodes and sessions, small enough to damage every byte.
func smallState(t testing.TB) *txn.State {
	tr := tree.New()
	for i, p := range []string{"/a", "/a/b", "/c"} {
		if _, err := tr.CreateNode(p, []byte(p), openACL, int64(i), -1, int64(i+1), 1000); err != nil {
			t.Fatal(err)
		}
	}
	st := txn.NewState(tr)
	st.Sessions[1] = txn.SessionInfo{TimeoutMs: 5000, Password: []byte("pw")}
	st.Sessions[2] = txn.SessionInfo{TimeoutMs: 6000, Password: []byte("pw2")}
	return st
}

// TestFlippedByte damages every bit position class of every byte: the
// result must be a checksum error, never a state.
func TestFlippedByte(t *testing.T) {
	for _, tc := range compressions {
		t.Run(tc.name, func(t *testing.T) {
			good := encode(t, smallState(t), tc.c)
			for i := range good {
				for _, bit := range []byte{0x01, 0x80} {
					b := bytes.Clone(good)
					b[i] ^= bit
					_, st, err := Read(bytes.NewReader(b), int64(len(b)), Options{})
					if !errors.Is(err, ErrChecksum) || st != nil {
						t.Fatalf("byte %d^%#x: err %v, state %v; want ErrChecksum", i, bit, err, st != nil)
					}
				}
			}
		})
	}
}

// TestFlippedByteNamesFile checks that a damaged file is reported by name.
func TestFlippedByteNamesFile(t *testing.T) {
	dir := t.TempDir()
	name, err := Write(osFS{}, dir, Meta{Index: 9}, smallState(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	damage(t, join(dir, name), func(b []byte) []byte { b[len(b)/2] ^= 4; return b })
	_, _, err = LoadFile(osFS{}, dir, name, Options{})
	if !errors.Is(err, ErrChecksum) || !strings.Contains(err.Error(), name) || !IsCorrupt(err) {
		t.Errorf("err %v, want ErrChecksum naming %s", err, name)
	}
}

func TestTruncation(t *testing.T) {
	for _, tc := range compressions {
		t.Run(tc.name, func(t *testing.T) {
			good := encode(t, smallState(t), tc.c)
			for n := range len(good) {
				_, st, err := Read(bytes.NewReader(good[:n]), int64(n), Options{})
				if err == nil || st != nil || !IsCorrupt(err) {
					t.Fatalf("cut at %d of %d: err %v, state %v; want a corruption error", n, len(good), err, st != nil)
				}
			}
		})
	}
}

func damage(t *testing.T, file string, f func([]byte) []byte) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, f(b), 0o644); err != nil {
		t.Fatal(err)
	}
}

func writeAt(t *testing.T, dir string, index uint64, st *txn.State) string {
	t.Helper()
	name, err := Write(osFS{}, dir, Meta{Index: index, Term: 1, Zxid: int64(index)}, st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return name
}

func TestLoadFallsBack(t *testing.T) {
	dir := t.TempDir()
	want := smallState(t)
	writeAt(t, dir, 10, want)
	n20 := writeAt(t, dir, 20, testState(t))
	n30 := writeAt(t, dir, 30, testState(t))
	damage(t, join(dir, n30), func(b []byte) []byte { b[100] ^= 1; return b })
	damage(t, join(dir, n20), func(b []byte) []byte { return b[:len(b)-7] })
	var logged bytes.Buffer
	m, got, skipped, err := Load(osFS{}, dir, Options{Logger: testLogger(&logged)})
	if err != nil {
		t.Fatal(err)
	}
	if m.Index != 10 {
		t.Errorf("loaded index %d, want 10", m.Index)
	}
	sameState(t, got, want)
	if len(skipped) != 2 || skipped[0].Name != n30 || skipped[1].Name != n20 ||
		!errors.Is(skipped[0].Err, ErrChecksum) || !IsCorrupt(skipped[1].Err) {
		t.Errorf("skipped %v, want %s (checksum) and %s", skipped, n30, n20)
	}
	if !strings.Contains(logged.String(), n30) || !strings.Contains(logged.String(), n20) {
		t.Errorf("log does not name the skipped files:\n%s", logged.String())
	}
}

func TestLoadNone(t *testing.T) {
	dir := t.TempDir()
	if _, _, _, err := Load(osFS{}, dir, Options{}); !errors.Is(err, ErrNoSnapshot) {
		t.Errorf("empty dir: %v, want ErrNoSnapshot", err)
	}
	n := writeAt(t, dir, 1, smallState(t))
	damage(t, join(dir, n), func(b []byte) []byte { return b[:10] })
	_, st, skipped, err := Load(osFS{}, dir, Options{})
	if !errors.Is(err, ErrNoValidSnapshot) || st != nil || len(skipped) != 1 {
		t.Errorf("only a damaged one: %v, %d skipped; want ErrNoValidSnapshot", err, len(skipped))
	}
}

// TestAccept loads only a snapshot the log refers to.
// Ref: STYLE pattern 13 (load only snapshots that the WAL refers to).
func TestAccept(t *testing.T) {
	dir := t.TempDir()
	writeAt(t, dir, 10, smallState(t))
	writeAt(t, dir, 20, smallState(t))
	m, _, skipped, err := Load(osFS{}, dir, Options{Accept: func(m Meta) bool { return m.Index <= 15 }})
	if err != nil || m.Index != 10 {
		t.Fatalf("loaded %d, %v; want 10", m.Index, err)
	}
	if len(skipped) != 1 || !errors.Is(skipped[0].Err, ErrNotAccepted) {
		t.Errorf("skipped %v", skipped)
	}
}

// TestTempFiles: a crash mid-write leaves a temp file; List ignores it and
// Load removes it.
func TestTempFiles(t *testing.T) {
	dir := t.TempDir()
	writeAt(t, dir, 10, smallState(t))
	p, err := Create(osFS{}, dir, Meta{Index: 20}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := AddState(p.Writer(), testState(t)); err != nil {
		t.Fatal(err)
	}
	p.f.Close() // the crash: no Commit
	if err := os.WriteFile(join(dir, Name(30)+tmpSuffix), []byte("junk"), 0o644); err != nil {
		t.Fatal(err)
	}
	infos, err := List(osFS{}, dir)
	if err != nil || len(infos) != 1 || infos[0].Name != Name(10) || infos[0].Err != nil {
		t.Fatalf("List: %+v, %v; want only %s", infos, err, Name(10))
	}
	m, _, skipped, err := Load(osFS{}, dir, Options{})
	if err != nil || m.Index != 10 || len(skipped) != 0 {
		t.Fatalf("Load: %d, %v, %v", m.Index, skipped, err)
	}
	entries, _ := osFS{}.List(dir)
	if !reflect.DeepEqual(entries, []string{Name(10)}) {
		t.Errorf("after Load the dir holds %v, want only %s", entries, Name(10))
	}
}

func TestAbort(t *testing.T) {
	dir := t.TempDir()
	p, err := Create(osFS{}, dir, Meta{Index: 20}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Abort(); err != nil {
		t.Fatal(err)
	}
	if entries, _ := (osFS{}).List(dir); len(entries) != 0 {
		t.Errorf("after Abort: %v", entries)
	}
	if _, err := p.Commit(); !errors.Is(err, ErrClosed) {
		t.Errorf("Commit after Abort: %v", err)
	}
}

func TestListMeta(t *testing.T) {
	dir := t.TempDir()
	writeAt(t, dir, 0x20, smallState(t))
	writeAt(t, dir, 0x3, smallState(t))
	// A file renamed by hand: its header disagrees with its name.
	if err := os.Rename(join(dir, Name(0x20)), join(dir, Name(0x21))); err != nil {
		t.Fatal(err)
	}
	infos, err := List(osFS{}, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) != 2 || infos[0].Meta != (Meta{Index: 3, Term: 1, Zxid: 3}) || infos[0].Err != nil {
		t.Errorf("infos %+v", infos)
	}
	if !errors.Is(infos[1].Err, ErrMalformed) {
		t.Errorf("renamed file: %v, want ErrMalformed", infos[1].Err)
	}
	if _, _, err := LoadFile(osFS{}, dir, Name(0x21), Options{}); !errors.Is(err, ErrMalformed) {
		t.Errorf("load renamed file: %v, want ErrMalformed", err)
	}
}

func TestPurge(t *testing.T) {
	for _, tc := range []struct {
		files, keep, left int
	}{
		{files: 7, keep: 5, left: 5},
		{files: 7, keep: 1, left: MinRetain}, // autopurge.snapRetainCount is at least 3
		{files: 2, keep: 3, left: 2},
		{files: 4, keep: 10, left: 4},
	} {
		t.Run(fmt.Sprint(tc), func(t *testing.T) {
			dir := t.TempDir()
			st := smallState(t)
			for i := range tc.files {
				writeAt(t, dir, uint64(i*100+5), st)
			}
			tmp := join(dir, Name(1)+tmpSuffix)
			if err := os.WriteFile(tmp, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := Purge(osFS{}, dir, tc.keep); err != nil {
				t.Fatal(err)
			}
			infos, _ := List(osFS{}, dir)
			if len(infos) != tc.left || infos[len(infos)-1].Meta.Index != uint64((tc.files-1)*100+5) {
				t.Errorf("left %+v, want the newest %d", infos, tc.left)
			}
			if _, err := os.Stat(tmp); err != nil {
				t.Errorf("Purge removed a temp file (a snapshot may be being written): %v", err)
			}
		})
	}
}

// TestWriteFaults fails every operation of Write in turn: Write must
// report it, and Load must then find the old snapshot or the complete new
// one, never a damaged or partial one.
// Ref: STYLE pattern 14 (fail at op i for every i).
func TestWriteFaults(t *testing.T) {
	for _, tc := range compressions {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			old := smallState(t)
			writeAt(t, dir, 10, old)
			next := testState(t)
			for i := 0; ; i++ {
				fs := &faultFS{failAt: i}
				_, err := Write(fs, dir, Meta{Index: 20}, next, Options{Compression: tc.c})
				if err == nil {
					if i == 0 {
						t.Fatal("no operation was failed")
					}
					break
				}
				if !errors.Is(err, errInjected) {
					t.Fatalf("op %d: %v, want the injected error", i, err)
				}
				m, st, skipped, err := Load(osFS{}, dir, Options{})
				if err != nil || len(skipped) != 0 {
					t.Fatalf("op %d: load: %v, skipped %v", i, err, skipped)
				}
				switch m.Index {
				case 10:
					sameState(t, st, old)
				case 20: // failed at the directory sync: the file is complete
					sameState(t, st, next)
					if err := os.Remove(join(dir, Name(20))); err != nil {
						t.Fatal(err)
					}
				default:
					t.Fatalf("op %d: loaded index %d", i, m.Index)
				}
			}
		})
	}
}

// seal wraps body in a header and a correct trailer, to test what the
// decoder does with bad content that no checksum catches.
func seal(body []byte, flags uint32, version uint32) []byte {
	h := header{meta: Meta{Index: 1}, flags: flags}
	b := h.append(nil)
	binary.BigEndian.PutUint32(b[8:], version)
	b = append(b, body...)
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

func uv(vs ...uint64) []byte {
	var b []byte
	for _, v := range vs {
		b = binary.AppendUvarint(b, v)
	}
	return b
}

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// rootNode is a node record for "/" with ACL 1, nil data and a zero stat.
var (
	aclDef   = cat([]byte{tagACL}, uv(1, 1)) // ACL 1: the empty list
	rootNode = cat([]byte{tagNode}, uv(0, 1), []byte("/"), uv(0, 1), make([]byte, 9))
	minimal  = cat(aclDef, rootNode, []byte{tagEnd}, uv(1, 1, 0)) // the smallest valid body
)

// compressed returns body as c stores it.
func compressed(t testing.TB, c Compression, body []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := newCompressor(&buf, c)
	if _, err := w.Write(body); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// snappyChunkCRC damages the CRC of a Snappy stream's first data chunk,
// which follows the 10-byte stream identifier and a 4-byte chunk header.
func snappyChunkCRC(b []byte) []byte {
	b = bytes.Clone(b)
	b[14] ^= 1
	return b
}

func TestMalformed(t *testing.T) {
	for _, tc := range []struct {
		name string
		file []byte
		want error
	}{
		{"version", seal(cat(aclDef, rootNode, []byte{tagEnd}, uv(1, 1, 0)), 0, 2), ErrVersion},
		{"flags", seal(nil, 7, 1), ErrMalformed},
		{"empty body", seal(nil, 0, 1), ErrMalformed},
		{"unknown tag", seal([]byte{'Z'}, 0, 1), ErrMalformed},
		{"undefined ACL", seal(cat(rootNode, []byte{tagEnd}, uv(1, 0, 0)), 0, 1), ErrMalformed},
		{"ACL defined twice", seal(cat(aclDef, aclDef), 0, 1), ErrMalformed},
		{"missing parent", seal(cat(aclDef, []byte{tagNode}, uv(0, 5), []byte("/x/y"), uv(0, 1), make([]byte, 9)), 0, 1), ErrMalformed},
		{"bad path", seal(cat(aclDef, []byte{tagNode}, uv(0, 2), []byte("x"), uv(0, 1), make([]byte, 9)), 0, 1), ErrMalformed},
		{"prefix longer than the last path", seal(cat(aclDef, []byte{tagNode}, uv(3, 1), []byte("a")), 0, 1), ErrMalformed},
		{"version over int32", seal(cat(aclDef, []byte{tagNode}, uv(0, 1), []byte("/"), uv(0, 1), make([]byte, 4), binary.AppendVarint(nil, 1<<40)), 0, 1), ErrMalformed},
		{"counts", seal(cat(aclDef, rootNode, []byte{tagEnd}, uv(2, 1, 0)), 0, 1), ErrMalformed},
		{"no end", seal(cat(aclDef, rootNode), 0, 1), ErrMalformed},
		{"after end", seal(cat(aclDef, rootNode, []byte{tagEnd}, uv(1, 1, 0), []byte{0}), 0, 1), ErrMalformed},
		{"flags past snappy", seal(nil, 3, 1), ErrMalformed},
		{"not gzip", seal(minimal, 1, 1), ErrMalformed},
		{"not snappy", seal(minimal, 2, 1), ErrMalformed},
		{"empty snappy stream", seal(nil, 2, 1), ErrMalformed},
		{"data after the gzip body", seal(cat(compressed(t, CompressGzip, minimal), []byte{0}), 1, 1), ErrMalformed},
		{"data after the snappy body", seal(cat(compressed(t, CompressSnappy, minimal), []byte{0}), 2, 1), ErrMalformed},
		{"snappy chunk checksum", seal(snappyChunkCRC(compressed(t, CompressSnappy, minimal)), 2, 1), ErrMalformed},
		{"gzip body, snappy flag", seal(compressed(t, CompressGzip, minimal), 2, 1), ErrMalformed},
		{"snappy body, gzip flag", seal(compressed(t, CompressSnappy, minimal), 1, 1), ErrMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, st, err := Read(bytes.NewReader(tc.file), int64(len(tc.file)), Options{})
			if !errors.Is(err, tc.want) || st != nil {
				t.Errorf("err %v, want %v", err, tc.want)
			}
			if errors.Is(err, ErrChecksum) {
				t.Errorf("checksum error for a file with a good checksum: %v", err)
			}
		})
	}
	// The minimal valid file in each method, to show the cases above fail
	// for their reason only.
	for _, tc := range compressions {
		body := minimal
		if tc.c != CompressNone {
			body = compressed(t, tc.c, minimal)
		}
		ok := seal(body, uint32(tc.c), 1)
		if _, _, err := Read(bytes.NewReader(ok), int64(len(ok)), Options{}); err != nil {
			t.Errorf("minimal %s file: %v", tc.name, err)
		}
	}
}

// TestCompressedBody checks that a compressed body is a standard stream of
// its method (gzip, RFC 1952; Snappy framing format) holding exactly the
// uncompressed body, and that it is smaller for a compressible tree.
func TestCompressedBody(t *testing.T) {
	body := func(b []byte) []byte { return b[headerLen : len(b)-trailerLen] }
	plain := encode(t, testState(t), CompressNone)
	for _, tc := range []struct {
		name   string
		c      Compression
		prefix string
		open   func(io.Reader) (io.Reader, error)
	}{
		{"gzip", CompressGzip, "\x1f\x8b", func(r io.Reader) (io.Reader, error) { return gzip.NewReader(r) }},
		{"snappy", CompressSnappy, "\xff\x06\x00\x00sNaPpY", func(r io.Reader) (io.Reader, error) { return snappy.NewReader(r), nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := encode(t, testState(t), tc.c)
			if !bytes.HasPrefix(body(file), []byte(tc.prefix)) {
				t.Errorf("body starts % x, want the %s stream header % x", body(file)[:10], tc.name, tc.prefix)
			}
			r, err := tc.open(bytes.NewReader(body(file)))
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(r)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, body(plain)) {
				t.Errorf("the %s stream holds %d bytes, not the %d of the uncompressed body", tc.name, len(got), len(body(plain)))
			}
			// testState's 200 kB node of one repeated byte dominates.
			if len(file) >= len(plain)/2 {
				t.Errorf("%s snapshot is %d bytes, uncompressed %d: want under half", tc.name, len(file), len(plain))
			}
		})
	}
}

// TestLyingLength: a length far beyond what the file holds must fail
// without allocating it.
func TestLyingLength(t *testing.T) {
	for _, tc := range []struct {
		name   string
		body   []byte
		maxLen int
	}{
		{"data over MaxLen", cat(aclDef, []byte{tagNode}, uv(0, 1), []byte("/"), uv(1<<40)), 0},
		{"data under a huge MaxLen", cat(aclDef, []byte{tagNode}, uv(0, 1), []byte("/"), uv(1<<40), []byte("short")), 1 << 50},
		{"path", cat([]byte{tagNode}, uv(0, 1<<40), []byte("/")), 1 << 50},
		{"ACL entries", cat([]byte{tagACL}, uv(1, 1<<40), binary.AppendVarint(nil, 1), uv(1), []byte("w")), 1 << 50},
		{"password", cat([]byte{tagSession}, binary.AppendVarint(nil, 1), binary.AppendVarint(nil, 1), uv(1<<40)), 1 << 50},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := seal(tc.body, 0, 1)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, _, err := Read(bytes.NewReader(file), int64(len(file)), Options{MaxLen: tc.maxLen})
			runtime.ReadMemStats(&after)
			if !errors.Is(err, ErrMalformed) {
				t.Errorf("err %v, want ErrMalformed", err)
			}
			if n := after.TotalAlloc - before.TotalAlloc; n > 8<<20 {
				t.Errorf("allocated %d bytes for a %d-byte file", n, len(file))
			}
		})
	}
}

func TestUnknownCompression(t *testing.T) {
	w := NewWriter(&bytes.Buffer{}, Meta{}, Compression(9))
	if err := w.Close(); !errors.Is(err, ErrCompression) {
		t.Errorf("err %v, want ErrCompression", err)
	}
}

// A vfs.FS is what the replica will pass: it must satisfy FS.
var _ FS = vfs.Default
