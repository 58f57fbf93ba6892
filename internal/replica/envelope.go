package replica

import (
	"encoding/binary"
	"errors"
)

// An entry's data is an envelope around the encoded txn:
//
//	origin uint64  id of the server that prepped the txn for a client
//	tag    uint64  that server's handle for the waiting request (0: none)
//	txn    ...     txn.Txn.Marshal()
//
// Every server applies the txn; only the origin answers a client, and it
// finds the waiting request by tag.
const envelopeHeader = 16

// ErrShortEnvelope means an entry's data is too short to hold an envelope.
var ErrShortEnvelope = errors.New("replica: entry shorter than its envelope")

// appendEnvelope appends the envelope's header to b, for the txn to be
// appended after it.
func appendEnvelope(b []byte, origin, tag uint64) []byte {
	b = binary.BigEndian.AppendUint64(b, origin)
	return binary.BigEndian.AppendUint64(b, tag)
}

// OpenEnvelope splits an entry's data into the envelope and the encoded
// txn, which aliases b. Tools that read the log use it too.
func OpenEnvelope(b []byte) (origin, tag uint64, txn []byte, err error) {
	if len(b) < envelopeHeader {
		return 0, 0, nil, ErrShortEnvelope
	}
	return binary.BigEndian.Uint64(b), binary.BigEndian.Uint64(b[8:]), b[envelopeHeader:], nil
}
