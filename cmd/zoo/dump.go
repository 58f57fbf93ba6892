package main

import (
	"bufio"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"time"
	"unicode/utf8"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/internal/replica"
	"github.com/zoohq/zoo/internal/snap"
	"github.com/zoohq/zoo/internal/tree"
	"github.com/zoohq/zoo/internal/txn"
	"github.com/zoohq/zoo/internal/vfs"
	"github.com/zoohq/zoo/internal/wal"
)

// The dump tools read a stopped server's files and print them, as Apache's
// SnapshotFormatter and TxnLogToolkit do. They only read: unlike a server
// start they cut no torn tail and load nothing into a server.

// dumpUsage is the usage text of the dump tools, for main's usage.
const dumpUsage = `  snap dump [--json] FILE
                     print a snapshot file: header, znodes, ACLs, sessions
  log dump [--json] DIR
                     print the log's records (DIR is <dataLogDir>/log); exit
                     1 on a torn tail or corruption, naming file and offset
`

// runDump runs "zoo snap ARGS" (cmd "snap") or "zoo log ARGS" (cmd
// "log"): the only subcommand is dump. It returns the exit status.
func runDump(cmd string, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "dump" {
		fmt.Fprintf(stderr, "usage:\n%s", dumpUsage)
		return 2
	}
	if cmd == "snap" {
		return snapDump(args[1:], stdout, stderr)
	}
	return logDump(args[1:], stdout, stderr)
}

// parseDumpArgs parses "[--json] PATH" for the dump named name.
func parseDumpArgs(name string, args []string, stderr io.Writer) (path string, asJSON bool, ok bool) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.BoolVar(&asJSON, "json", false, "print one JSON document")
	fs.Usage = func() {
		what := map[string]string{"snap dump": "FILE", "log dump": "DIR"}[name]
		fmt.Fprintf(stderr, "usage: zoo %s [--json] %s\n", name, what)
	}
	if err := fs.Parse(args); err != nil {
		return "", false, false
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return "", false, false
	}
	return fs.Arg(0), asJSON, true
}

// snapDump prints the snapshot file named by args: its header, every
// znode with its stat, data and ACL id, the ACL lists and the sessions.
// It returns the exit status: 1 if the file cannot be read or verified,
// 2 on a usage error.
func snapDump(args []string, stdout, stderr io.Writer) int {
	path, asJSON, ok := parseDumpArgs("snap dump", args, stderr)
	if !ok {
		return 2
	}
	d, err := loadSnapDump(path)
	if err != nil {
		fmt.Fprintf(stderr, "zoo snap dump: %v\n", err)
		return 1
	}
	bw := bufio.NewWriter(stdout)
	if asJSON {
		err = writeJSON(bw, d)
	} else {
		d.writeText(bw)
	}
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		fmt.Fprintf(stderr, "zoo snap dump: %v\n", err)
		return 1
	}
	return 0
}

// snapDoc is a snapshot as the dump shows it; its JSON form is --json's.
type snapDoc struct {
	File     string         `json:"file"`
	Index    uint64         `json:"index"`
	Term     uint64         `json:"term"`
	Zxid     string         `json:"zxid"`
	Nodes    []nodeDoc      `json:"nodes"`
	ACLs     []aclListDoc   `json:"acls"`
	Sessions []sessionDoc   `json:"sessions"`
	aclIndex map[uint64]int // tree ACL id -> index in ACLs
}

type nodeDoc struct {
	Path           string `json:"path"`
	Czxid          string `json:"cZxid"`
	Ctime          int64  `json:"ctime"`
	Mzxid          string `json:"mZxid"`
	Mtime          int64  `json:"mtime"`
	Pzxid          string `json:"pZxid"`
	Cversion       int32  `json:"cversion"`
	DataVersion    int32  `json:"dataVersion"`
	ACLVersion     int32  `json:"aclVersion"`
	EphemeralOwner string `json:"ephemeralOwner"`
	Kind           string `json:"kind"`
	DataLength     int    `json:"dataLength"`
	NumChildren    int32  `json:"numChildren"`
	// Data is the data as a string when it is printable UTF-8, else
	// base64; nil data (as opposed to empty) is JSON null.
	Data     *string `json:"data"`
	Encoding string  `json:"dataEncoding,omitempty"` // "utf8" or "base64"
	ACL      int     `json:"acl"`                    // index in snapDoc.ACLs
	raw      []byte
}

type aclListDoc struct {
	ID      int      `json:"id"`
	Entries []aclDoc `json:"entries"`
}

type aclDoc struct {
	Perms  string `json:"perms"`
	Scheme string `json:"scheme"`
	ID     string `json:"id"`
}

type sessionDoc struct {
	ID         string   `json:"id"`
	TimeoutMs  int32    `json:"timeoutMs"`
	Ephemerals []string `json:"ephemerals"`
}

func loadSnapDump(path string) (*snapDoc, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	var m snap.Meta
	var st *txn.State
	if isApacheSnapshot(f) {
		m, st, err = readApacheSnapshot(f, path)
	} else {
		m, st, err = snap.Read(f, fi.Size(), snap.Options{})
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	d := &snapDoc{File: path, Index: m.Index, Term: m.Term, Zxid: hex64(m.Zxid), aclIndex: map[uint64]int{}}
	st.Tree.Walk(func(p string, n tree.Node) bool {
		d.Nodes = append(d.Nodes, d.node(p, n))
		return true
	})
	for _, id := range slices.Sorted(maps.Keys(st.Sessions)) {
		eph := st.Tree.Ephemerals(id)
		if eph == nil {
			eph = []string{}
		}
		d.Sessions = append(d.Sessions, sessionDoc{ID: hex64(id), TimeoutMs: st.Sessions[id].TimeoutMs, Ephemerals: eph})
	}
	if d.Sessions == nil {
		d.Sessions = []sessionDoc{}
	}
	return d, nil
}

func (d *snapDoc) node(p string, n tree.Node) nodeDoc {
	s := n.Stat
	nd := nodeDoc{
		Path: p, Czxid: hex64(s.Czxid), Ctime: s.Ctime, Mzxid: hex64(s.Mzxid), Mtime: s.Mtime,
		Pzxid: hex64(s.Pzxid), Cversion: s.Cversion, DataVersion: s.Version, ACLVersion: s.Aversion,
		EphemeralOwner: hex64(s.EphemeralOwner), Kind: tree.KindOf(s.EphemeralOwner).String(),
		DataLength: len(n.Data), NumChildren: n.NumChildren, raw: n.Data,
	}
	if n.Data != nil {
		v, enc := encodeData(n.Data)
		nd.Data, nd.Encoding = &v, enc
	}
	i, ok := d.aclIndex[n.ACLID]
	if !ok {
		i = len(d.ACLs)
		d.aclIndex[n.ACLID] = i
		entries := make([]aclDoc, 0, len(n.ACL))
		for _, a := range n.ACL {
			entries = append(entries, aclDoc{Perms: perms(a.Perms), Scheme: a.ID.Scheme, ID: a.ID.ID})
		}
		d.ACLs = append(d.ACLs, aclListDoc{ID: i, Entries: entries})
	}
	nd.ACL = i
	return nd
}

func (d *snapDoc) writeText(w io.Writer) {
	fmt.Fprintf(w, "Zoo snapshot %s\nindex = %d\nterm = %d\nzxid = %s\n", d.File, d.Index, d.Term, d.Zxid)
	fmt.Fprintf(w, "\nZNodes (%d):\n", len(d.Nodes))
	for _, n := range d.Nodes {
		fmt.Fprintf(w, "----\n%s\n", n.Path)
		fmt.Fprintf(w, "  cZxid = %s\n  ctime = %s\n  mZxid = %s\n  mtime = %s\n  pZxid = %s\n",
			n.Czxid, msTime(n.Ctime), n.Mzxid, msTime(n.Mtime), n.Pzxid)
		fmt.Fprintf(w, "  cversion = %d\n  dataVersion = %d\n  aclVersion = %d\n",
			n.Cversion, n.DataVersion, n.ACLVersion)
		fmt.Fprintf(w, "  ephemeralOwner = %s (%s)\n  dataLength = %d\n  numChildren = %d\n",
			n.EphemeralOwner, n.Kind, n.DataLength, n.NumChildren)
		fmt.Fprintf(w, "  data = %s\n  acl = #%d\n", textData(n.raw), n.ACL)
	}
	fmt.Fprintf(w, "----\n\nACL lists (%d):\n", len(d.ACLs))
	for _, l := range d.ACLs {
		fmt.Fprintf(w, "  #%d:", l.ID)
		for _, a := range l.Entries {
			fmt.Fprintf(w, " %s:%s:%s", a.Scheme, a.ID, a.Perms)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "\nSessions (%d):\n", len(d.Sessions))
	for _, s := range d.Sessions {
		fmt.Fprintf(w, "  %s timeout=%dms ephemerals=%d %v\n", s.ID, s.TimeoutMs, len(s.Ephemerals), s.Ephemerals)
	}
}

// logDump prints every record of the log directory named by args: per
// entry its index, term, type and decoded txn (with the replica envelope's
// origin and tag), and the HardStates and snapshot markers, each with its
// file and offset. A torn tail or corruption is reported with file and
// offset (after the good records) and the status is 1, as it is if an
// entry's txn does not decode; 2 is a usage error.
func logDump(args []string, stdout, stderr io.Writer) int {
	dir, asJSON, ok := parseDumpArgs("log dump", args, stderr)
	if !ok {
		return 2
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		fmt.Fprintf(stderr, "zoo log dump: %s: not a log directory (%v)\n", dir, err)
		return 1
	}
	bw := bufio.NewWriter(stdout)
	doc := logDoc{Dir: dir, Records: []logRecordDoc{}}
	bad := 0
	scanErr := wal.Scan(vfs.Default, dir, func(r wal.Record) error {
		rd := describeRecord(r)
		if rd.Error != "" {
			bad++
		}
		if asJSON {
			doc.Records = append(doc.Records, rd)
		} else {
			rd.writeText(bw)
		}
		return nil
	})
	status := 0
	if scanErr != nil {
		doc.Error = errorDoc(scanErr)
		fmt.Fprintf(stderr, "zoo log dump: %v\n", scanErr)
		status = 1
	}
	if bad > 0 {
		fmt.Fprintf(stderr, "zoo log dump: %d entries whose txn does not decode\n", bad)
		status = 1
	}
	var err error
	if asJSON {
		err = writeJSON(bw, doc)
	}
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		fmt.Fprintf(stderr, "zoo log dump: %v\n", err)
		return 1
	}
	return status
}

type logDoc struct {
	Dir     string         `json:"dir"`
	Records []logRecordDoc `json:"records"`
	Error   *logErrorDoc   `json:"error,omitempty"`
}

type logErrorDoc struct {
	Kind   string `json:"kind"` // "torn-tail", "corruption" or "io"
	File   string `json:"file,omitempty"`
	Offset int64  `json:"offset"`
	Reason string `json:"reason"`
}

type logRecordDoc struct {
	File   string `json:"file"`
	Offset int64  `json:"offset"`
	Kind   string `json:"kind"` // entry, hard-state, snapshot-marker

	// Entries.
	Index     uint64  `json:"index,omitempty"`
	Term      uint64  `json:"term,omitempty"`
	EntryType string  `json:"entryType,omitempty"`
	Zxid      string  `json:"zxid,omitempty"`
	Origin    *uint64 `json:"origin,omitempty"`
	Tag       *uint64 `json:"tag,omitempty"`
	Txn       *txnDoc `json:"txn,omitempty"`
	Detail    string  `json:"detail,omitempty"` // no-op, conf change
	Error     string  `json:"error,omitempty"`  // the txn did not decode

	// HardStates.
	Vote   *uint64 `json:"vote,omitempty"`
	Commit *uint64 `json:"commit,omitempty"`
}

type txnDoc struct {
	Session string `json:"session"`
	Cxid    int32  `json:"cxid"`
	Time    int64  `json:"time"`
	Op      string `json:"op"`
	Text    string `json:"text"` // txn.Txn.String
}

func describeRecord(r wal.Record) logRecordDoc {
	rd := logRecordDoc{File: r.File, Offset: r.Offset, Kind: r.Kind()}
	switch {
	case r.HardState != nil:
		hs := r.HardState
		rd.Term, rd.Vote, rd.Commit = hs.Term, &hs.Vote, &hs.Commit
	case r.Snapshot != nil:
		rd.Index, rd.Term = r.Snapshot.Index, r.Snapshot.Term
		rd.Detail = fmt.Sprintf("voters=%v", r.Snapshot.ConfState.Voters)
	case r.Entry != nil:
		describeEntry(&rd, r.Entry)
	}
	return rd
}

func describeEntry(rd *logRecordDoc, e *raftpb.Entry) {
	rd.Index, rd.Term, rd.EntryType, rd.Zxid = e.Index, e.Term, e.Type.String(), hex64(int64(e.Index))
	switch {
	case e.Type != raftpb.EntryNormal:
		rd.Detail = describeConfChange(e)
	case len(e.Data) == 0:
		rd.Detail = "no-op (a new leader's empty entry)"
	default:
		origin, tag, body, err := replica.OpenEnvelope(e.Data)
		if err != nil {
			rd.Error = fmt.Sprintf("%d bytes: %v", len(e.Data), err)
			return
		}
		rd.Origin, rd.Tag = &origin, &tag
		t, err := txn.Unmarshal(body)
		if err != nil {
			rd.Error = fmt.Sprintf("%v (data %s)", err, hex.EncodeToString(body))
			return
		}
		rd.Txn = &txnDoc{Session: hex64(t.SessionID), Cxid: t.Cxid, Time: t.Time, Op: t.Type.String(), Text: t.String()}
	}
}

func describeConfChange(e *raftpb.Entry) string {
	if e.Type == raftpb.EntryConfChange {
		var cc raftpb.ConfChange
		if err := cc.Unmarshal(e.Data); err == nil {
			return fmt.Sprintf("conf change %v node=%d", cc.Type, cc.NodeID)
		}
	}
	if e.Type == raftpb.EntryConfChangeV2 {
		var cc raftpb.ConfChangeV2
		if err := cc.Unmarshal(e.Data); err == nil {
			return fmt.Sprintf("conf change v2 %v", cc.Changes)
		}
	}
	return fmt.Sprintf("%d bytes", len(e.Data))
}

func (rd *logRecordDoc) writeText(w io.Writer) {
	fmt.Fprintf(w, "%s:%d %s", rd.File, rd.Offset, rd.Kind)
	switch rd.Kind {
	case "hard-state":
		fmt.Fprintf(w, " term=%d vote=%d commit=%d\n", rd.Term, *rd.Vote, *rd.Commit)
		return
	case "snapshot-marker":
		fmt.Fprintf(w, " index=%d term=%d %s\n", rd.Index, rd.Term, rd.Detail)
		return
	}
	fmt.Fprintf(w, " index=%d term=%d type=%s zxid=%s", rd.Index, rd.Term, rd.EntryType, rd.Zxid)
	if rd.Origin != nil {
		fmt.Fprintf(w, " origin=%d tag=%d", *rd.Origin, *rd.Tag)
	}
	switch {
	case rd.Txn != nil:
		fmt.Fprintf(w, " time=%s txn: %s\n", msTime(rd.Txn.Time), rd.Txn.Text)
	case rd.Error != "":
		fmt.Fprintf(w, " UNDECODABLE: %s\n", rd.Error)
	default:
		fmt.Fprintf(w, " %s\n", rd.Detail)
	}
}

func errorDoc(err error) *logErrorDoc {
	var te *wal.TornTailError
	var ce *wal.CorruptionError
	switch {
	case errors.As(err, &te):
		return &logErrorDoc{Kind: "torn-tail", File: te.File, Offset: te.Offset, Reason: te.Reason.Error()}
	case errors.As(err, &ce):
		return &logErrorDoc{Kind: "corruption", File: ce.File, Offset: ce.Offset, Reason: ce.Reason.Error()}
	}
	return &logErrorDoc{Kind: "io", Reason: err.Error()}
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// hex64 formats a zxid or session id as Apache's tools do.
func hex64(v int64) string { return fmt.Sprintf("0x%x", uint64(v)) }

// msTime formats ms since the epoch with the raw value, which is what a
// reader compares.
func msTime(ms int64) string {
	return fmt.Sprintf("%s (%d)", time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z"), ms)
}

// printable reports whether data reads as text: valid UTF-8 with no
// control characters other than tab and newline.
func printable(data []byte) bool {
	if !utf8.Valid(data) {
		return false
	}
	for _, r := range string(data) {
		if (r < 0x20 && r != '\t' && r != '\n') || r == 0x7f {
			return false
		}
	}
	return true
}

// encodeData returns data for JSON: itself if printable, else base64.
func encodeData(data []byte) (string, string) {
	if printable(data) {
		return string(data), "utf8"
	}
	return base64.StdEncoding.EncodeToString(data), "base64"
}

// textData returns data for the text dump: quoted if printable, else hex.
func textData(data []byte) string {
	switch {
	case data == nil:
		return "null"
	case printable(data):
		return fmt.Sprintf("%q", data)
	}
	return "hex:" + hex.EncodeToString(data)
}

// perms spells ACL permission bits as zkCli does ("cdrwa").
func perms(p int32) string {
	s := ""
	for _, b := range []struct {
		bit int32
		c   string
	}{{jute.PermCreate, "c"}, {jute.PermDelete, "d"}, {jute.PermRead, "r"}, {jute.PermWrite, "w"}, {jute.PermAdmin, "a"}} {
		if p&b.bit != 0 {
			s += b.c
		}
	}
	return s
}
