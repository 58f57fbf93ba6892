package peer

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
)

// received is what an OnStream saw.
type received struct {
	from   uint64
	header string
	sum    [32]byte
	n      int64
	err    error // the body reader's error, if not clean
}

// streamNodes starts servers 1 and 2; onStream serves both.
func streamNodes(t *testing.T, onStream func(from uint64, header []byte, r io.Reader) error) (*node, *node) {
	t.Helper()
	nodes := mesh(t, 2, func(c *Config) { c.OnStream = onStream })
	return nodes[0], nodes[1]
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	r := rand.NewChaCha8([32]byte{1})
	r.Read(b)
	return b
}

func TestSendStreamIntact(t *testing.T) {
	checkLeaks(t)
	got := make(chan received, 2)
	a, b := streamNodes(t, func(from uint64, header []byte, r io.Reader) error {
		h := sha256.New()
		n, err := io.Copy(h, r)
		got <- received{from: from, header: string(header), sum: [32]byte(h.Sum(nil)), n: n, err: err}
		return err
	})
	body := randomBytes(6<<20 + 12345)
	// Both directions: streams do not follow the link's dial rule.
	for _, tt := range []struct{ src, dst *node }{{a, b}, {b, a}} {
		err := tt.src.tr.SendStream(context.Background(), tt.dst.id, []byte("snap@42"), bytes.NewReader(body))
		if err != nil {
			t.Fatalf("%d->%d: %v", tt.src.id, tt.dst.id, err)
		}
		r := <-got
		if r.err != nil || r.from != tt.src.id || r.header != "snap@42" || r.n != int64(len(body)) || r.sum != sha256.Sum256(body) {
			t.Fatalf("%d->%d: received from %d header %q, %d bytes, err %v; sum match %v",
				tt.src.id, tt.dst.id, r.from, r.header, r.n, r.err, r.sum == sha256.Sum256(body))
		}
	}
	// An empty body is a valid stream.
	if err := a.tr.SendStream(context.Background(), 2, nil, strings.NewReader("")); err != nil {
		t.Fatal(err)
	}
	if r := <-got; r.n != 0 || r.header != "" || r.err != nil {
		t.Fatalf("empty stream: %+v", r)
	}
}

func TestSendStreamRemoteError(t *testing.T) {
	tests := []struct {
		name    string
		handler func(from uint64, header []byte, r io.Reader) error
		size    int
	}{
		{"after reading all", func(_ uint64, _ []byte, r io.Reader) error {
			if _, err := io.Copy(io.Discard, r); err != nil {
				return err
			}
			return errors.New("disk full")
		}, 1 << 20},
		// The handler gives up without reading a large body: the sender
		// must stop and report the reason, not fail on a broken pipe.
		{"without reading", func(uint64, []byte, io.Reader) error {
			return errors.New("disk full")
		}, 256 << 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkLeaks(t)
			a, _ := streamNodes(t, tt.handler)
			body := io.LimitReader(zeros{}, int64(tt.size))
			err := a.tr.SendStream(context.Background(), 2, []byte("h"), body)
			if !errors.Is(err, ErrRemote) || !strings.Contains(err.Error(), "disk full") {
				t.Fatalf("got %v, want ErrRemote with the handler's text", err)
			}
		})
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

func TestSendStreamCancel(t *testing.T) {
	checkLeaks(t)
	started := make(chan struct{})
	handlerErr := make(chan error, 1)
	a, _ := streamNodes(t, func(_ uint64, _ []byte, r io.Reader) error {
		close(started)
		_, err := io.Copy(io.Discard, r) // the body never ends
		handlerErr <- err
		return err
	})
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- a.tr.SendStream(ctx, 2, []byte("h"), zeros{}) }()
	<-started
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("SendStream after cancel: %v", err)
	}
	if err := <-handlerErr; err == nil {
		t.Fatal("receiver saw a clean end of an abandoned stream")
	}
}

// Close interrupts a stream in progress on both ends.
func TestSendStreamClose(t *testing.T) {
	checkLeaks(t)
	started := make(chan struct{})
	a, _ := streamNodes(t, func(_ uint64, _ []byte, r io.Reader) error {
		close(started)
		_, err := io.Copy(io.Discard, r)
		return err
	})
	errc := make(chan error, 1)
	go func() { errc <- a.tr.SendStream(context.Background(), 2, nil, zeros{}) }()
	<-started
	a.tr.Close()
	if err := <-errc; !errors.Is(err, ErrClosed) {
		t.Fatalf("SendStream after Close: %v", err)
	}
}

func TestSendStreamRefused(t *testing.T) {
	checkLeaks(t)
	nodes := mesh(t, 2, nil) // no OnStream
	err := nodes[0].tr.SendStream(context.Background(), 2, nil, strings.NewReader("x"))
	if !errors.Is(err, ErrRejected) || !strings.Contains(err.Error(), ackNoStreams.String()) {
		t.Fatalf("got %v, want ErrRejected (streams not accepted)", err)
	}
	if err := nodes[0].tr.SendStream(context.Background(), 9, nil, strings.NewReader("x")); !errors.Is(err, ErrUnknownPeer) {
		t.Fatalf("unknown peer: %v", err)
	}
}

// A body reader failing on the sender's side fails both ends.
func TestSendStreamBodyError(t *testing.T) {
	checkLeaks(t)
	handlerErr := make(chan error, 1)
	a, _ := streamNodes(t, func(_ uint64, _ []byte, r io.Reader) error {
		_, err := io.Copy(io.Discard, r)
		handlerErr <- err
		return err
	})
	boom := errors.New("boom")
	body := io.MultiReader(io.LimitReader(zeros{}, 1<<20), errReader{boom})
	if err := a.tr.SendStream(context.Background(), 2, nil, body); !errors.Is(err, boom) {
		t.Fatalf("got %v, want the body's error", err)
	}
	if err := <-handlerErr; !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("receiver got %v, want io.ErrUnexpectedEOF", err)
	}
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }
