//go:build linux

package server

import (
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/zoohq/zoo/internal/shrink"
)

// idlePoller holds the readers of resting plaintext connections without a
// goroutine each (rest.go). A parked connection's socket is in an epoll
// set of the poller's own, one-shot; when it turns readable (or the
// client hangs up), the poller starts a reader goroutine for it, which
// goes on as resume does.
//
// Why: the Go runtime never frees a goroutine's descriptor. With one
// goroutine per idle session, a wave of 10,000 sessions left about 5 MB
// of descriptors behind after they closed, on a server that held 31 MB
// before them (issue 17 asks for the memory back, within 20%). Parked
// sessions have no goroutine, so the descriptors are those of the readers
// busy at once, not of every session.
//
// A TLS connection is never parked: its layer may hold bytes read from the
// socket and not yet decrypted, which epoll cannot see. Neither is any
// connection but a *net.TCPConn read directly (a wrapper may buffer too).
//
// Ownership: a parked connection's reader role belongs to whoever takes
// it out of parked: the poller, when its socket turns readable, or close,
// which then finishes the reader (finishReading) itself. Everything in
// parked is under mu.
type idlePoller struct {
	mu      sync.Mutex
	parked  map[uint64]*conn // by token, the epoll event's data
	peak    int              // parked's, for shrink.Map
	next    uint64           // tokens: 0 is the wake pipe
	closed  bool             // Shutdown, or the poller failed: park refuses
	started bool             // the first park made the set and started the poller
	epfd    int
	wakeR   int
	wakeW   int // a byte here wakes the poller to see closed
}

// parkable reports whether c's socket is all there is to read (see
// idlePoller).
func parkable(c *conn) bool {
	_, ok := c.nc.(*net.TCPConn)
	return ok && c.wire == c.nc
}

// pollEvent is an epoll event whose data is tok; eventToken reads it back.
func pollEvent(events uint32, tok uint64) syscall.EpollEvent {
	return syscall.EpollEvent{Events: events, Fd: int32(uint32(tok)), Pad: int32(uint32(tok >> 32))}
}

func eventToken(ev *syscall.EpollEvent) uint64 {
	return uint64(uint32(ev.Fd)) | uint64(uint32(ev.Pad))<<32
}

// park hands c's reader to the poller. It reports false if it cannot (the
// caller rests c in a goroutine instead); true means the reader role is
// the poller's, or close's.
func (p *idlePoller) park(c *conn) bool {
	if !parkable(c) {
		return false
	}
	raw, err := c.nc.(*net.TCPConn).SyscallConn()
	if err != nil {
		return false
	}
	p.mu.Lock()
	if p.closed || p.start(c.srv) != nil {
		p.mu.Unlock()
		return false
	}
	p.next++
	tok := p.next
	p.parked[tok] = c
	c.idleTok = tok
	c.restMark = c.rest.wait(true) // a scan sees the rest, as resume's
	c.parkedAt = time.Now()
	op := syscall.EPOLL_CTL_MOD
	if !c.idleAdded {
		op = syscall.EPOLL_CTL_ADD
	}
	// Under mu, so that the set is never closed in between. The socket
	// may turn readable, and the poller take c, as soon as this returns.
	var ctlErr error
	err = raw.Control(func(fd uintptr) {
		ev := pollEvent(syscall.EPOLLIN|syscall.EPOLLRDHUP|syscall.EPOLLONESHOT, tok)
		ctlErr = syscall.EpollCtl(p.epfd, op, int(fd), &ev)
	})
	if err == nil && ctlErr == nil {
		c.idleAdded = true
		p.mu.Unlock()
		return true
	}
	// Not in the set (the socket was closed, say): the reader rests in a
	// goroutine, which finds out.
	p.remove(tok, c)
	p.mu.Unlock()
	return false
}

// start makes the epoll set and starts the poller, once. p.mu is held.
func (p *idlePoller) start(s *Server) error {
	if p.started {
		return nil
	}
	p.started = true
	err := p.open()
	if err != nil {
		p.closed = true
		s.log.Warn("cannot park idle connections; their readers wait in goroutines", "err", err)
		return err
	}
	s.goroutine(func() { p.run(s) })
	return nil
}

// open makes the epoll set and the wake pipe. p.mu is held.
func (p *idlePoller) open() error {
	epfd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return err
	}
	var pipe [2]int
	if err := syscall.Pipe2(pipe[:], syscall.O_CLOEXEC|syscall.O_NONBLOCK); err != nil {
		syscall.Close(epfd)
		return err
	}
	ev := pollEvent(syscall.EPOLLIN, 0)
	if err := syscall.EpollCtl(epfd, syscall.EPOLL_CTL_ADD, pipe[0], &ev); err != nil {
		syscall.Close(epfd)
		syscall.Close(pipe[0])
		syscall.Close(pipe[1])
		return err
	}
	p.epfd, p.wakeR, p.wakeW = epfd, pipe[0], pipe[1]
	p.parked = make(map[uint64]*conn)
	return nil
}

// take removes the connection parked under tok, if it is still there.
func (p *idlePoller) take(tok uint64) *conn {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.parked[tok]
	if c != nil {
		p.remove(tok, c)
	}
	return c
}

// remove takes c, parked under tok, out of parked. p.mu is held.
func (p *idlePoller) remove(tok uint64, c *conn) {
	delete(p.parked, tok)
	c.idleTok = 0
	p.parked = shrink.Map(p.parked, &p.peak) // a wave's 10,000 sessions leave
}

// unpark takes c out of the poller for close; true means the caller now
// holds its reader role.
func (p *idlePoller) unpark(c *conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c.idleTok == 0 || p.parked[c.idleTok] != c {
		return false
	}
	p.remove(c.idleTok, c)
	return true
}

// stop makes park refuse and wakes the poller, which ends.
func (p *idlePoller) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	if p.wakeW != 0 { // under mu: the poller closes it under mu
		_, _ = syscall.Write(p.wakeW, []byte{1})
	}
}

// run waits for parked sockets to turn readable and starts their readers.
// When stopped, or if epoll fails, the connections still parked get reader
// goroutines back, which read on (or find their sockets closed).
func (p *idlePoller) run(s *Server) {
	events := make([]syscall.EpollEvent, 256)
	for {
		n, err := syscall.EpollWait(p.epfd, events, -1)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			s.log.Error("idle connections' poller failed; their readers go back to goroutines", "err", err)
			break
		}
		if p.wake(s, events[:n]) {
			break
		}
	}
	p.mu.Lock()
	p.closed = true
	left := make([]*conn, 0, len(p.parked))
	for _, c := range p.parked {
		c.idleTok = 0
		left = append(left, c)
	}
	p.parked = nil // closed: nothing is parked again
	syscall.Close(p.epfd)
	syscall.Close(p.wakeR)
	syscall.Close(p.wakeW)
	p.wakeW = 0
	p.mu.Unlock()
	for _, c := range left {
		s.goroutine(c.wakeFromIdle)
	}
}

// wake starts the readers of the sockets events name, and reports whether
// the poller was stopped. Each reader is started with the token of the
// global outstanding limit its first request needs, so the poller waits
// while the server is at the limit: were it to start them anyway, 10,000
// clients closing their sessions at once would have 9,000 readers wait
// for a token at once, and the runtime keeps every goroutine descriptor
// it ever made. The sockets wait in the set meanwhile, as Apache's wait
// in its selector.
func (p *idlePoller) wake(s *Server, events []syscall.EpollEvent) (stopped bool) {
	for i := range events {
		tok := eventToken(&events[i])
		if tok == 0 {
			p.mu.Lock()
			stopped = p.closed
			p.mu.Unlock()
			continue
		}
		if !s.takeToken(s.quit) {
			return true // Shutdown: run hands what is parked back
		}
		c := p.take(tok)
		if c == nil {
			<-s.tokens // closed since the event
			continue
		}
		c.token = true
		s.goroutine(c.wakeFromIdle)
	}
	return stopped
}
