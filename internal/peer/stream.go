package peer

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"time"
)

// Frame kinds on a stream connection.
const (
	streamHeader uint8 = 1
	streamData   uint8 = 2
	streamEnd    uint8 = 3
	streamResult uint8 = 4

	streamChunk = 256 << 10

	resultOK   = 0
	resultFail = 1
)

// errEarlyResult: the receiver answered before the body was all sent.
var errEarlyResult = errors.New("peer: receiver answered early")

// SendStream sends header and the body read from r to peer to over a new
// connection of its own, so the link stays free for raft traffic, and waits
// for the receiver's OnStream to return. The receiver's error comes back
// wrapped in ErrRemote; a receiver without OnStream yields ErrRejected.
// Cancelling ctx abandons the stream and returns ctx.Err().
func (t *Transport) SendStream(ctx context.Context, to uint64, header []byte, r io.Reader) error {
	if len(header) > t.cfg.MaxFrame {
		return fmt.Errorf("%w: stream header of %d bytes", ErrFrameTooLarge, len(header))
	}
	t.mu.RLock()
	p, closed := t.peers[to], t.closed
	var addr string
	if p != nil {
		addr = p.addr
	}
	t.mu.RUnlock()
	switch {
	case closed:
		return ErrClosed
	case p == nil:
		return fmt.Errorf("%w: %d", ErrUnknownPeer, to)
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stopOnClose := context.AfterFunc(t.ctx, cancel)
	defer stopOnClose()

	c, err := t.dialConn(ctx, to, addr, connStream)
	if err != nil {
		return t.streamErr(ctx, err)
	}
	// Closing the connection is how ctx interrupts a blocked write or the
	// wait for the result.
	stopOnCancel := context.AfterFunc(ctx, func() { c.Close() })
	defer stopOnCancel()

	res := t.awaitResult(c)
	defer func() {
		c.Close()
		<-res.done
	}()

	werr := t.writeStream(c, header, r, res.done)
	if werr != nil && werr != errEarlyResult {
		select {
		case <-res.done:
			if errors.Is(res.err, ErrRemote) {
				return res.err // the receiver's reason beats our broken pipe
			}
		default:
		}
		return t.streamErr(ctx, werr)
	}
	<-res.done // ends with the result, or when ctx closes c
	if res.err != nil {
		return t.streamErr(ctx, res.err)
	}
	return nil
}

// streamErr prefers the reason the stream was abandoned over the I/O error
// that abandoning it caused.
func (t *Transport) streamErr(ctx context.Context, err error) error {
	if ctx.Err() == nil {
		return err
	}
	if t.ctx.Err() != nil {
		return ErrClosed
	}
	return ctx.Err()
}

// result is the receiver's answer, read concurrently with sending the body
// so that an early answer stops the sender.
type result struct {
	done chan struct{}
	err  error // valid once done is closed
}

func (t *Transport) awaitResult(c net.Conn) *result {
	res := &result{done: make(chan struct{})}
	go func() {
		defer close(res.done)
		res.err = readResult(c)
	}()
	return res
}

func readResult(c net.Conn) error {
	kind, p, _, err := newFrameReader(c, 1<<20).next(nil)
	switch {
	case err != nil:
		return fmt.Errorf("peer: stream result: %w", unexpected(err))
	case kind != streamResult || len(p) == 0:
		return fmt.Errorf("%w: stream result of kind %d, %d bytes", ErrCorrupt, kind, len(p))
	case p[0] == resultOK:
		return nil
	}
	return fmt.Errorf("%w: %s", ErrRemote, p[1:])
}

// writeStream sends the header, the body in chunks and the end frame,
// stopping early if the receiver has already answered (stop closed).
func (t *Transport) writeStream(c net.Conn, header []byte, r io.Reader, stop <-chan struct{}) error {
	bw := bufio.NewWriterSize(timedConn{Conn: c, write: t.cfg.WriteTimeout}, streamChunk+FrameOverhead)
	if err := writeFrame(bw, streamHeader, header); err != nil {
		return err
	}
	buf := make([]byte, streamChunk)
	for {
		select {
		case <-stop:
			return errEarlyResult
		default:
		}
		n, rerr := r.Read(buf)
		if n > 0 {
			if err := writeFrame(bw, streamData, buf[:n]); err != nil {
				return err
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return fmt.Errorf("peer: read stream body: %w", rerr)
		}
	}
	if err := writeFrame(bw, streamEnd, nil); err != nil {
		return err
	}
	return bw.Flush()
}

// serveStream is the receiver: it reads the header, runs OnStream over the
// body and sends back its result.
func (t *Transport) serveStream(from uint64, c net.Conn) {
	tc := timedReader(c, t.cfg.StreamTimeout)
	sr := &streamReader{br: bufio.NewReaderSize(tc, streamChunk+FrameOverhead)}
	sr.fr = newFrameReader(sr.br, t.cfg.MaxFrame)
	header, err := sr.header()
	if err != nil {
		t.log.Warn("peer: bad stream", "peer", from, "err", err)
		return
	}
	herr := t.cfg.OnStream(from, header, sr)
	t.log.Info("peer: stream received", "peer", from, "bytes", sr.n, "err", herr)
	if err := t.replyStream(c, herr); err != nil {
		t.log.Warn("peer: stream result not sent", "peer", from, "err", err)
		return
	}
	// Read until the sender hangs up: closing with unread data would reset
	// the connection and could destroy the result before the sender reads it.
	// The drain has a fixed bound: a sender that never hangs up must not
	// hold this goroutine.
	_, _ = sr.br.Discard(sr.br.Buffered())
	if c.SetReadDeadline(time.Now().Add(t.cfg.HandshakeTimeout)) == nil {
		_, _ = io.Copy(io.Discard, c)
	}
}

func (t *Transport) replyStream(c net.Conn, herr error) error {
	p := []byte{resultOK}
	if herr != nil {
		p = append([]byte{resultFail}, herr.Error()...)
		if len(p) > 1<<20 {
			p = p[:1<<20]
		}
	}
	_, err := timedConn{Conn: c, write: t.cfg.WriteTimeout}.Write(appendFrame(nil, streamResult, p))
	return err
}

// streamReader is the body reader OnStream gets. Errors are sticky.
type streamReader struct {
	br  *bufio.Reader
	fr  *frameReader
	buf []byte // payload buffer reused across frames
	cur []byte // unread part of the current data frame
	n   int64  // body bytes delivered
	err error
}

func (s *streamReader) frame() (uint8, []byte, error) {
	kind, p, _, err := s.fr.next(s.buf)
	if err != nil {
		return 0, nil, fmt.Errorf("peer: stream: %w", unexpected(err))
	}
	if cap(p) > cap(s.buf) {
		s.buf = p[:0]
	}
	return kind, p, nil
}

func (s *streamReader) header() ([]byte, error) {
	kind, p, _, err := s.fr.next(nil) // the header is OnStream's to keep
	if err != nil {
		return nil, fmt.Errorf("peer: stream header: %w", unexpected(err))
	}
	if kind != streamHeader {
		return nil, fmt.Errorf("%w: stream opened with frame kind %d", ErrCorrupt, kind)
	}
	return p, nil
}

func (s *streamReader) Read(p []byte) (int, error) {
	for len(s.cur) == 0 {
		if s.err != nil {
			return 0, s.err
		}
		kind, data, err := s.frame()
		switch {
		case err != nil:
			s.err = err
		case kind == streamData:
			s.cur = data
		case kind == streamEnd:
			s.err = io.EOF
		default:
			s.err = fmt.Errorf("%w: frame kind %d inside a stream", ErrCorrupt, kind)
		}
	}
	n := copy(p, s.cur)
	s.cur = s.cur[n:]
	s.n += int64(n)
	return n, nil
}
