package apache

import (
	"errors"
	"fmt"
	"io"

	"github.com/zoohq/zoo/internal/jute"
	"github.com/zoohq/zoo/internal/txn"
)

// TxnHeader is the header of a logged txn.
type TxnHeader struct {
	ClientID int64
	Cxid     int32
	Zxid     int64
	Time     int64
	Type     jute.Op
}

// Entry is one txn of a log: Apache's header, the txn as Zoo applies it,
// and the tree digest Apache logged after it (nil if none).
type Entry struct {
	Header TxnHeader
	Txn    *txn.Txn
	Digest *TxnDigest
	Offset int64 // of the record in its file
}

// TxnDigest is the digest of the tree after a txn (TxnDigest).
type TxnDigest struct {
	Version int32
	Tree    int64
}

// LogReader reads the records of one Apache txn log.
type LogReader struct {
	r    *rd
	DBID int64
	// Torn, after Next returned io.EOF, describes a record cut short that
	// ended the file (nil at a clean end); Apache too stops there.
	Torn error
	done bool
}

// NewLogReader reads the log's file header. name is for errors.
func NewLogReader(r io.Reader, name string, opts Options) (*LogReader, error) {
	l := &LogReader{r: newRd(r, name, opts.maxLen())}
	if err := readFileHeader(l.r, logMagic, "txn log"); err != nil {
		return nil, err
	}
	dbid, err := l.r.int64("dbid")
	if err != nil {
		return nil, err
	}
	l.DBID = dbid
	return l, nil
}

// Next returns the next txn, or io.EOF at the end of the records: the end
// of the file, the zero padding after the last record, or a torn record
// (then Torn says where).
func (l *LogReader) Next() (*Entry, error) {
	if l.done {
		return nil, io.EOF
	}
	e, err := l.next()
	if err != nil {
		l.done = true
	}
	return e, err
}

func (l *LogReader) next() (*Entry, error) {
	r := l.r
	start := r.off
	if r.atEOF() {
		return nil, io.EOF
	}
	torn := func(what string) (*Entry, error) {
		l.Torn = &FileError{File: r.name, Offset: start, Err: fmt.Errorf("torn record: %s", what)}
		return nil, io.EOF
	}
	sum, err := r.int64("txn checksum")
	if err != nil {
		return torn("cut short in its checksum")
	}
	n, err := r.int32("txn length")
	if err != nil {
		return torn("cut short in its length")
	}
	if n == 0 {
		return nil, io.EOF // preallocated zeros: the end
	}
	if n < 0 || int(n) > r.max {
		return nil, r.corrupt("txn length %d out of range [1, %d]", n, r.max)
	}
	b := make([]byte, 0, min(int(n), 64<<10))
	for len(b) < int(n) {
		if len(b) == cap(b) {
			b = append(b[:cap(b)], make([]byte, min(int(n)-len(b), cap(b)))...)[:len(b)]
		}
		k := min(int(n)-len(b), cap(b)-len(b))
		if err := r.full(b[len(b):len(b)+k], "txn"); err != nil {
			return torn(fmt.Sprintf("%d of its %d bytes are in the file", r.off-start-12, n))
		}
		b = b[:len(b)+k]
	}
	var eor [1]byte
	if err := r.full(eor[:], "end of record"); err != nil || eor[0] != 'B' {
		return torn("no end-of-record mark after it")
	}
	if got := adler(b); int64(got) != sum {
		return nil, &FileError{File: r.name, Offset: start,
			Err: fmt.Errorf("%w: txn checksum %#x, computed %#x", ErrCorrupt, sum, got)}
	}
	e, err := DecodeTxn(b)
	if err != nil {
		return nil, &FileError{File: r.name, Offset: start, Err: err}
	}
	e.Offset = start
	return e, nil
}

// DecodeTxn decodes a txn's bytes (header, record, optional digest) into
// the txn Zoo applies. A createSession gets the password Apache would
// have given the session, so that its client can reconnect.
func DecodeTxn(b []byte) (*Entry, error) {
	r := jute.NewReader(b)
	h := TxnHeader{ClientID: r.Long(), Cxid: r.Int(), Zxid: r.Long(), Time: r.Long(), Type: jute.Op(r.Int())}
	if err := r.Err(); err != nil {
		return nil, fmt.Errorf("%w: txn header: %w", ErrCorrupt, err)
	}
	t := &txn.Txn{SessionID: h.ClientID, Cxid: h.Cxid, Time: h.Time, Type: h.Type}
	body := b[r.Offset():]
	rest, err := decodeBody(t, body)
	if err != nil {
		return nil, fmt.Errorf("txn %#x (%v): %w", h.Zxid, h.Type, err)
	}
	e := &Entry{Header: h, Txn: t}
	switch {
	case len(rest) == 0:
	case len(rest) == 12:
		dr := jute.NewReader(rest)
		e.Digest = &TxnDigest{Version: dr.Int(), Tree: dr.Long()}
	default:
		return nil, fmt.Errorf("%w: txn %#x (%v): %d bytes after the record", ErrUnsupported, h.Zxid, h.Type, len(rest))
	}
	return e, nil
}

// decodeBody decodes the record of t.Type from b into t.Body and returns
// the bytes after it.
func decodeBody(t *txn.Txn, b []byte) ([]byte, error) {
	r := jute.NewReader(b)
	switch t.Type {
	case jute.OpCreateSession:
		timeout := r.Int()
		t.Body = &txn.CreateSessionTxn{TimeoutMs: timeout, Password: Password(t.SessionID)}
	case jute.OpCloseSession:
		// Before 3.6 a closeSession had no record.
		if len(b) == 0 {
			return nil, nil
		}
		c := new(txn.CloseSessionTxn)
		c.Decode(r)
		t.Body = c
	case jute.OpCreate, jute.OpCreate2:
		c := new(txn.CreateTxn)
		c.Decode(r)
		if t.Type == jute.OpCreate && errors.Is(r.Err(), jute.ErrShort) {
			// A 3.3 CreateTxnV0: no parentCVersion, -1 means "one more".
			r = jute.NewReader(b)
			c.Path, c.Data, c.ACL, c.Ephemeral = r.String(), r.Buffer(), jute.DecodeACLs(r), r.Bool()
			c.ParentCVersion = -1
		}
		t.Body = c
	case jute.OpReconfig, jute.OpSetData:
		// A reconfig is logged as the SetDataTxn of /zookeeper/config.
		t.Type = jute.OpSetData
		t.Body = decode(r, new(txn.SetDataTxn))
	case jute.OpCreateTTL:
		t.Body = decode(r, new(txn.CreateTTLTxn))
	case jute.OpCreateContainer:
		t.Body = decode(r, new(txn.CreateContainerTxn))
	case jute.OpDelete, jute.OpDeleteContainer:
		t.Body = decode(r, new(txn.DeleteTxn))
	case jute.OpSetACL:
		t.Body = decode(r, new(txn.SetACLTxn))
	case jute.OpError:
		t.Body = decode(r, new(txn.ErrorTxn))
	case jute.OpMulti:
		m := decode(r, new(txn.MultiTxn))
		t.Body = m
	default:
		return nil, fmt.Errorf("%w: txn type %d", ErrUnsupported, t.Type)
	}
	if err := r.Err(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	return b[r.Offset():], nil
}

func decode[T jute.Record](r *jute.Reader, rec T) T {
	rec.Decode(r)
	return rec
}
