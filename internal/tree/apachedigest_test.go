package tree

import (
	"encoding/binary"
	"hash/crc32"
	"testing"

	"github.com/zoohq/zoo/internal/jute"
)

// refDigest is DigestCalculator.calculateDigest written out field by field
// from Apache's source, for one node.
func refDigest(path string, data []byte, s StatPersisted) int64 {
	b := []byte(path)
	b = append(b, data...)
	for _, v := range []int64{s.Czxid, s.Mzxid, s.Pzxid, s.Ctime, s.Mtime} {
		b = binary.BigEndian.AppendUint64(b, uint64(v))
	}
	for _, v := range []int32{s.Version, s.Cversion, s.Aversion} {
		b = binary.BigEndian.AppendUint32(b, uint32(v))
	}
	b = binary.BigEndian.AppendUint64(b, uint64(s.EphemeralOwner))
	return int64(crc32.ChecksumIEEE(b))
}

// A fresh tree's digest counts the root (as "") and /zookeeper, and
// leaves out everything under /zookeeper/, as Apache does.
// Ref: Apache DigestCalculator.calculateDigest, NodeHashMapImpl.
func TestApacheDigestFreshTree(t *testing.T) {
	tr := New()
	want := refDigest("", nil, StatPersisted{}) + refDigest("/zookeeper", nil, StatPersisted{})
	if got := tr.ApacheDigest(); got != want {
		t.Fatalf("fresh tree digest %d, want %d", got, want)
	}
}

// Every kind of change keeps the running digest equal to a full walk, and
// undoing the changes' effect on the tree restores the digest; changes
// under /zookeeper/ leave it alone.
func TestApacheDigestFollowsChanges(t *testing.T) {
	tr := New()
	start := tr.ApacheDigest()
	mustCreate(t, tr, "/a", []byte("x"), 0, 2)
	afterA := tr.ApacheDigest()
	if afterA == start {
		t.Fatal("creating /a left the digest unchanged")
	}
	a, _ := tr.Stat("/a")
	rootStat := tr.nodes.at(rootID).stat
	want := refDigest("", nil, rootStat) + refDigest("/zookeeper", nil, StatPersisted{}) +
		refDigest("/a", []byte("x"), StatPersisted{Czxid: a.Czxid, Mzxid: a.Mzxid, Pzxid: a.Pzxid, Ctime: a.Ctime, Mtime: a.Mtime})
	if afterA != want {
		t.Fatalf("digest after create %d, want %d", afterA, want)
	}
	mustCreate(t, tr, "/a/b", nil, 0x77, 3)
	if _, err := tr.SetData("/a", []byte("yy"), 1, 4, 4000); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.SetACL("/a", worldRead, 1); err != nil {
		t.Fatal(err)
	}
	if err := tr.SetCversionPzxid("/a", 5, 5); err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, tr)
	before := tr.ApacheDigest()
	mustCreate(t, tr, "/zookeeper/quota/q", []byte("ignored"), 0, 6)
	if _, err := tr.SetData("/zookeeper/config", []byte("server.1=x"), 1, 7, 7000); err != nil {
		t.Fatal(err)
	}
	if got := tr.ApacheDigest(); got != before {
		t.Fatalf("a change under /zookeeper/ moved the digest: %d -> %d", before, got)
	}
	if err := tr.DeleteNode("/a", 8); err != nil && err != jute.NoNode {
		t.Fatal(err)
	}
	checkInvariants(t, tr)
	r := New()
	if err := r.Restore("/a", []byte("r"), openACL, StatPersisted{Czxid: 9, Mzxid: 9}); err != nil {
		t.Fatal(err)
	}
	if err := r.Restore("/", []byte{}, openACL, StatPersisted{Pzxid: 9, Cversion: 1}); err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, r)
}

// A node's digest is Apache's whatever the data's size: small data is
// hashed in one buffer with the path and stat, large data on its own.
func TestNodeApacheDigestAnySize(t *testing.T) {
	st := StatPersisted{Czxid: 1 << 40, Mzxid: 7, Pzxid: 9, Ctime: 1_700_000_000_000, Mtime: -1,
		Version: 3, Cversion: -4, Aversion: 5, EphemeralOwner: 0x1234}
	for _, path := range []string{"/", "/a", "/zkperf/fill/d00000/n00000000"} {
		for _, size := range []int{0, 1, 63, 64, 100, digestCopyMax, digestCopyMax + 1, 5000} {
			data := make([]byte, size)
			for i := range data {
				data[i] = byte(i*7 + size)
			}
			want := refDigest(path, data, st)
			if path == Root {
				want = refDigest("", data, st)
			}
			if got := NodeApacheDigest(path, data, &st); got != want {
				t.Errorf("digest of %s with %d bytes: %d, want %d", path, size, got, want)
			}
		}
	}
}
