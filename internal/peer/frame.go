package peer

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/zoohq/zoo/internal/bufpool"
)

const (
	frameHeaderLen  = 5 // length (4) + kind (1)
	frameTrailerLen = 4 // CRC32C of kind + payload

	// FrameOverhead is what a frame adds to its payload on the wire.
	FrameOverhead = frameHeaderLen + frameTrailerLen

	// kindHeartbeat is reserved on links: it keeps an idle link's read
	// deadline from expiring and is never delivered to the Handler.
	kindHeartbeat uint8 = 0
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func frameCRC(kind uint8, payload []byte) uint32 {
	k := [1]byte{kind}
	return crc32.Update(crc32.Update(0, castagnoli, k[:]), castagnoli, payload)
}

// appendFrame appends the encoding of one frame to dst.
func appendFrame(dst []byte, kind uint8, payload []byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(payload)+1))
	dst = append(dst, kind)
	dst = append(dst, payload...)
	return binary.BigEndian.AppendUint32(dst, frameCRC(kind, payload))
}

// writeFrame writes one frame without copying the payload, so a large
// payload goes straight from the caller's slice to a bufio.Writer.
func writeFrame(w io.Writer, kind uint8, payload []byte) error {
	var hdr [frameHeaderLen]byte
	binary.BigEndian.PutUint32(hdr[:4], uint32(len(payload)+1))
	hdr[4] = kind
	if _, err := w.Write(hdr[:]); err != nil {
		return err
	}
	if _, err := w.Write(payload); err != nil {
		return err
	}
	var trl [frameTrailerLen]byte
	binary.BigEndian.PutUint32(trl[:], frameCRC(kind, payload))
	_, err := w.Write(trl[:])
	return err
}

// frameReader decodes frames from r. It keeps its scratch space in the
// struct so that reading a frame allocates at most the payload.
type frameReader struct {
	r   io.Reader
	max int // largest payload accepted
	hdr [frameHeaderLen]byte
	trl [frameTrailerLen]byte
}

func newFrameReader(r io.Reader, max int) *frameReader {
	return &frameReader{r: r, max: max}
}

// next reads one frame. The payload is read into buf when it fits, into a
// slice the caller owns otherwise: a large one is a buffer from bufpool,
// which owner is (nil: none), for a caller that may give it back once
// nothing refers to the payload (Message.Buf). A caller that keeps the
// payload just never does.
//
// It returns io.EOF only for a clean end between frames. A frame cut short
// yields an error wrapping io.ErrUnexpectedEOF (or the reader's own error,
// such as a deadline); a zero length or a bad CRC wraps ErrCorrupt; a length
// above max wraps ErrFrameTooLarge. The length is checked before anything is
// allocated, so a hostile length cannot make us allocate more than max.
func (fr *frameReader) next(buf []byte) (kind uint8, payload []byte, owner *[]byte, err error) {
	if _, err := io.ReadFull(fr.r, fr.hdr[:]); err != nil {
		if errors.Is(err, io.EOF) {
			return 0, nil, nil, io.EOF
		}
		return 0, nil, nil, fmt.Errorf("peer: frame header: %w", err)
	}
	n := binary.BigEndian.Uint32(fr.hdr[:4])
	kind = fr.hdr[4]
	if n == 0 {
		return 0, nil, nil, fmt.Errorf("%w: zero length", ErrCorrupt)
	}
	if uint64(n-1) > uint64(fr.max) {
		return 0, nil, nil, fmt.Errorf("%w: %d bytes, limit %d", ErrFrameTooLarge, n-1, fr.max)
	}
	switch size := int(n - 1); {
	case cap(buf) >= size:
		payload = buf[:size]
	default:
		if owner = bufpool.Get(size); owner != nil {
			payload = *owner
		} else {
			payload = make([]byte, size)
		}
	}
	if _, err := io.ReadFull(fr.r, payload); err != nil {
		return 0, nil, nil, fmt.Errorf("peer: frame payload: %w", unexpected(err))
	}
	if _, err := io.ReadFull(fr.r, fr.trl[:]); err != nil {
		return 0, nil, nil, fmt.Errorf("peer: frame crc: %w", unexpected(err))
	}
	if got, want := binary.BigEndian.Uint32(fr.trl[:]), frameCRC(kind, payload); got != want {
		return 0, nil, nil, fmt.Errorf("%w: crc %08x, want %08x", ErrCorrupt, got, want)
	}
	return kind, payload, owner, nil
}

// unexpected turns io.EOF inside a frame into io.ErrUnexpectedEOF: the
// stream ended where a frame said more was coming.
func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// connType says what a connection is for; it is the hello's type byte.
type connType uint8

const (
	connLink   connType = 1
	connStream connType = 2
)

func (c connType) String() string {
	switch c {
	case connLink:
		return "link"
	case connStream:
		return "stream"
	}
	return fmt.Sprintf("type(%d)", uint8(c))
}

const (
	helloMagic   = "ZOOP"
	protoVersion = 2
	helloLen     = 4 + 1 + 1 + 8 + 8 + 1
	ackLen       = 2
)

// flagEstablished, in a hello's or an ack's flags, says the sender is a
// member of a running ensemble (Config.Established): a fresh server that
// hears it must join that ensemble rather than start one.
const flagEstablished uint8 = 1

// hello is the dialer's opening of every connection.
type hello struct {
	version uint8
	typ     connType
	from    uint64 // dialer's id
	to      uint64 // the id the dialer expects to reach
	flags   uint8
}

func (h hello) append(dst []byte) []byte {
	dst = append(dst, helloMagic...)
	dst = append(dst, h.version, uint8(h.typ))
	dst = binary.BigEndian.AppendUint64(dst, h.from)
	dst = binary.BigEndian.AppendUint64(dst, h.to)
	return append(dst, h.flags)
}

// parseHello decodes a hello. It checks only the magic: version and type
// are judged by the acceptor, which answers with a reason the dialer can log.
func parseHello(b []byte) (hello, error) {
	if len(b) < helloLen {
		return hello{}, fmt.Errorf("%w: %d bytes, want %d", ErrBadHandshake, len(b), helloLen)
	}
	if string(b[:4]) != helloMagic {
		return hello{}, fmt.Errorf("%w: magic %q", ErrBadHandshake, b[:4])
	}
	return hello{
		version: b[4],
		typ:     connType(b[5]),
		from:    binary.BigEndian.Uint64(b[6:14]),
		to:      binary.BigEndian.Uint64(b[14:22]),
		flags:   b[22],
	}, nil
}

func readHello(r io.Reader) (hello, error) {
	var b [helloLen]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return hello{}, fmt.Errorf("%w: %w", ErrBadHandshake, err)
	}
	return parseHello(b[:])
}

// ackStatus is the acceptor's answer to a hello: a status byte, then its
// flags byte.
type ackStatus uint8

const (
	ackOK             ackStatus = 0
	ackWrongID        ackStatus = 1 // the hello's "to" is not the acceptor's id
	ackUnknownPeer    ackStatus = 2 // the dialer is not among the acceptor's peers
	ackWrongDirection ackStatus = 3 // a link must be dialed by the larger id
	ackBadVersion     ackStatus = 4
	ackBadType        ackStatus = 5
	ackNoStreams      ackStatus = 6 // the acceptor has no OnStream
	ackAuthRequired   ackStatus = 7 // the acceptor requires quorum SASL
)

func (s ackStatus) String() string {
	switch s {
	case ackOK:
		return "accepted"
	case ackWrongID:
		return "wrong server id: dialed server has a different id"
	case ackUnknownPeer:
		return "unknown peer: dialer is not in the acceptor's server list"
	case ackWrongDirection:
		return "wrong direction: the larger id must dial the smaller"
	case ackBadVersion:
		return "unsupported protocol version"
	case ackBadType:
		return "unsupported connection type"
	case ackNoStreams:
		return "streams not accepted"
	case ackAuthRequired:
		return "quorum SASL authentication required (quorum.auth.serverRequireSasl=true)"
	}
	return fmt.Sprintf("status %d", uint8(s))
}
