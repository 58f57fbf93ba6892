package zk

import (
	"encoding/binary"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/zoohq/zoo/internal/jute"
)

// proxy sits between a client and a server and breaks the link on
// demand: Cut closes every connection, Refuse turns new ones away, and
// HoldUp/HoldDown stop forwarding one direction (the bytes wait in the
// proxy, as they would in a stalled network). It parses the client's
// frames, so tests can wait for a request to arrive and count pings.
type proxy struct {
	t      *testing.T
	ln     net.Listener
	target string

	mu       sync.Mutex
	cond     *sync.Cond
	links    map[*link]bool
	refuse   bool
	holdUp   bool
	holdDown bool
	upRead   int // client requests read, pings excepted (after the handshake)
	upSent   int // client frames forwarded (after the handshake)
	pings    int // pings forwarded
	accepted int
	lastDown time.Time // when bytes last went to a client
	closed   bool
	changed  chan struct{}
	wg       sync.WaitGroup
}

type link struct{ client, server net.Conn }

func newProxy(t *testing.T, target string) *proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("proxy listen: %v", err)
	}
	p := &proxy{t: t, ln: ln, target: target, links: map[*link]bool{}, changed: make(chan struct{})}
	p.cond = sync.NewCond(&p.mu)
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.close)
	return p
}

func (p *proxy) addr() string { return p.ln.Addr().String() }

func (p *proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		refuse := p.refuse || p.closed
		p.mu.Unlock()
		if refuse {
			_ = c.Close()
			continue
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = c.Close()
			continue
		}
		l := &link{client: c, server: s}
		p.update(func() { p.links[l] = true; p.accepted++ })
		p.wg.Add(2)
		go p.pumpUp(l)
		go p.pumpDown(l)
	}
}

// update changes the proxy's state and wakes everyone waiting on it.
func (p *proxy) update(f func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f()
	close(p.changed)
	p.changed = make(chan struct{})
	p.cond.Broadcast()
}

// gate waits while the direction is held; false if the link is gone.
func (p *proxy) gate(l *link, held func() bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for held() && p.links[l] {
		p.cond.Wait()
	}
	return p.links[l]
}

// pumpUp reads the client's frames as they come, held or not, and hands
// them to forwardUp, so a test can see requests arrive while they are held.
func (p *proxy) pumpUp(l *link) {
	defer p.wg.Done()
	defer p.drop(l)
	frames := make(chan []byte, 4096)
	p.wg.Add(1)
	go p.forwardUp(l, frames)
	defer close(frames)
	for first := true; ; first = false {
		frame, err := jute.ReadFrame(l.client, nil, jute.MaxFrame)
		if err != nil {
			return
		}
		if !first && !isPing(frame) {
			p.update(func() { p.upRead++ })
		}
		frames <- frame
	}
}

func (p *proxy) forwardUp(l *link, frames <-chan []byte) {
	defer p.wg.Done()
	defer p.drop(l)
	first := true
	for frame := range frames {
		if !p.gate(l, func() bool { return p.holdUp }) {
			return
		}
		out := binary.BigEndian.AppendUint32(nil, uint32(len(frame)))
		if _, err := l.server.Write(append(out, frame...)); err != nil {
			return
		}
		if !first {
			ping := isPing(frame)
			p.update(func() {
				p.upSent++
				if ping {
					p.pings++
				}
			})
		}
		first = false
	}
}

func isPing(frame []byte) bool {
	return len(frame) >= 4 && int32(binary.BigEndian.Uint32(frame)) == jute.XidPing
}

func (p *proxy) pumpDown(l *link) {
	defer p.wg.Done()
	defer p.drop(l)
	buf := make([]byte, 32<<10)
	for {
		n, err := l.server.Read(buf)
		if n > 0 {
			if !p.gate(l, func() bool { return p.holdDown }) {
				return
			}
			if _, werr := l.client.Write(buf[:n]); werr != nil {
				return
			}
			p.update(func() { p.lastDown = time.Now() })
		}
		if err != nil {
			return
		}
	}
}

func (p *proxy) drop(l *link) {
	_ = l.client.Close()
	_ = l.server.Close()
	p.update(func() { delete(p.links, l) })
}

// cut closes every connection through the proxy.
func (p *proxy) cut() {
	p.mu.Lock()
	links := make([]*link, 0, len(p.links))
	for l := range p.links {
		links = append(links, l)
	}
	p.mu.Unlock()
	for _, l := range links {
		p.drop(l)
	}
}

func (p *proxy) setRefuse(v bool)   { p.update(func() { p.refuse = v }) }
func (p *proxy) setHoldUp(v bool)   { p.update(func() { p.holdUp = v }) }
func (p *proxy) setHoldDown(v bool) { p.update(func() { p.holdDown = v }) }

// stall holds both directions: the connection stays open but silent.
func (p *proxy) stall(v bool) { p.update(func() { p.holdUp, p.holdDown = v, v }) }

func (p *proxy) active() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.links)
}

// waitUntil waits for cond (evaluated with the proxy locked) to hold.
func (p *proxy) waitUntil(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		p.mu.Lock()
		ok, changed := cond(), p.changed
		p.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-changed:
		case <-deadline.C:
			t.Fatalf("proxy: %s: not within %v", what, timeout)
		}
	}
}

func (p *proxy) close() {
	p.update(func() { p.closed = true })
	_ = p.ln.Close()
	p.cut()
	p.wg.Wait()
}
