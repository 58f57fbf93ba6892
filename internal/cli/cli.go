// Package cli is "zoo cli", a ZooKeeper shell that behaves like Apache's
// zkCli.sh (3.8): the same commands, flags, output and error messages, so
// that scripts and habits written for zkCli.sh carry over. It is built on
// the public client library (package zk) only.
package cli

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/term"

	"github.com/zoohq/zoo/zk"
)

// Version is what the "version" command reports, after zkCli's
// "ZooKeeper CLI version: ". The protocol level is Apache 3.8's.
const Version = "3.8.0-zoo"

// Exit statuses, as zkCli.sh returns them.
const (
	exitOK       = 0
	exitError    = 1
	exitNotFound = 127 // an unknown command (zkCli's help is one)
)

// shell is one zkCli session: the connection, the history and the output
// streams. Watch events arrive on other goroutines, so every write goes
// through mu.
type shell struct {
	mu sync.Mutex
	// done, under mu, is set when Main returns: a client's state callback
	// may still run after Close (as the Java client's event thread may),
	// and must not write to the caller's streams then.
	done   bool
	out    io.Writer // results, as zkCli's System.out
	errw   io.Writer // errors and "Created ...", as zkCli's System.err
	client *zk.Client
	server string
	// timeout is the session timeout (-timeout, zkCli's default 30 s).
	timeout time.Duration

	history map[int]string
	count   int         // commands run so far; the next one's number
	quiet   atomic.Bool // "printwatches off"
	quit    bool
	// watches are the channels of the watches the commands set; drain
	// prints their events.
	wmu     sync.Mutex
	watches []<-chan zk.Event
	// lost tells the state callback that a connection was lost,
	// so that the next SyncConnected is news worth printing.
	lost atomic.Bool
	// tls, if not nil, is the TLS the client configuration asks for.
	tls *tls.Config
	// opts are extra options of every connection (SASL).
	opts []zk.Option
}

// Main runs "zoo cli" with args (without the "cli" itself) and returns
// the exit status.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("zoo cli", flag.ContinueOnError)
	fs.SetOutput(stderr)
	server := fs.String("server", "localhost:2181", "`host:port[,host:port...]` of the servers")
	timeout := fs.Int("timeout", 30000, "session timeout in `ms`")
	clientConf := fs.String("client-configuration", "", "a Java properties `file` of Apache client settings (zookeeper.client.secure, zookeeper.ssl.*)")
	jaas := fs.String("jaas", jaasFromEnv(), "JAAS `file` whose Client section logs in with SASL DIGEST-MD5 (default: -Djava.security.auth.login.config in CLIENT_JVMFLAGS or JVMFLAGS)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	opts, err := saslOptions(*jaas)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	var tlsConf *tls.Config
	if *clientConf != "" {
		if tlsConf, err = clientTLS(*clientConf); err != nil {
			fmt.Fprintf(stderr, "%v\n", err)
			return exitError
		}
	}
	s := &shell{
		tls:     tlsConf,
		out:     stdout,
		errw:    stderr,
		server:  *server,
		timeout: time.Duration(*timeout) * time.Millisecond,
		history: map[int]string{},
		opts:    opts,
	}
	defer func() {
		s.mu.Lock()
		s.done = true
		s.mu.Unlock()
	}()
	defer s.closeClient()
	if fs.NArg() > 0 {
		return s.oneShot(fs.Args())
	}
	if f, ok := stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		return s.interactiveLoop(f, stdout)
	}
	return s.scriptLoop(stdin)
}

// oneShot runs the command given on the command line. Unlike zkCli it
// prints no connection event, so that output can be used by scripts.
func (s *shell) oneShot(args []string) int {
	// zkCli gives up at once when every server refuses the connection
	// (0.65 s), rather than waiting out the session timeout.
	if err := anyListening(s.server, refusedDialTimeout); err != nil {
		s.errorf("%v\n", err)
		return exitError
	}
	if err := s.connect(s.server); err != nil {
		s.errorf("%v\n", err)
		return exitError
	}
	// zkCli does not record the one-shot command in its history.
	return s.execute(tokenize(strings.Join(quoteArgs(args), " ")))
}

// scriptLoop reads commands from a non-terminal stdin, one a line, and
// exits with the last command's status, as zkCli does in that mode
// ("quit" keeps the status of the command before it).
func (s *shell) scriptLoop(stdin io.Reader) int {
	s.greet()
	st := exitOK
	sc := bufio.NewScanner(stdin)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for !s.quit && sc.Scan() {
		if r, ok := s.runLine(sc.Text()); ok && !s.quit {
			st = r
		}
	}
	return st
}

// interactiveLoop is the terminal mode: a line editor with history and
// tab completion, and the zkCli prompt.
func (s *shell) interactiveLoop(f *os.File, stdout io.Writer) int {
	old, err := term.MakeRaw(int(f.Fd()))
	if err != nil {
		s.errorf("%v\n", err)
		return exitError
	}
	defer func() { _ = term.Restore(int(f.Fd()), old) }()
	t := term.NewTerminal(struct {
		io.Reader
		io.Writer
	}{f, stdout}, "")
	t.AutoCompleteCallback = func(line string, pos int, key rune) (string, int, bool) {
		if key != '\t' {
			return "", 0, false
		}
		return s.complete(line, pos)
	}
	// The terminal redraws the prompt around asynchronous output such as
	// watch events, so everything goes through it.
	s.out, s.errw = t, t
	stop := s.pollWatches()
	defer stop()
	s.greet()
	st := exitOK
	for !s.quit {
		t.SetPrompt(s.prompt())
		line, err := t.ReadLine()
		if err != nil {
			break
		}
		if r, ok := s.runLine(line); ok && !s.quit {
			st = r
		}
	}
	return st
}

// greet connects and prints what zkCli prints on start in the stdin modes.
func (s *shell) greet() {
	s.printf("Connecting to %s\n", s.server)
	err := s.connect(s.server)
	s.printf("Welcome to ZooKeeper!\n")
	if err != nil {
		s.errorf("%v\n", err)
		return
	}
	s.connected()
}

// runLine records and runs one input line; ok is false for a blank line,
// which zkCli neither counts nor lets change the exit status.
func (s *shell) runLine(line string) (status int, ok bool) {
	args := tokenize(line)
	if len(args) == 0 {
		return 0, false
	}
	s.record(line)
	st := s.execute(args)
	s.drain()
	return st, true
}

func (s *shell) record(line string) {
	s.history[s.count] = line
	s.count++
}

// prompt is zkCli's "[zk: host:port(STATE) N] ".
func (s *shell) prompt() string {
	return fmt.Sprintf("[zk: %s(%s) %d] ", s.server, s.stateName(), s.count)
}

// stateName is the Java ZooKeeper.States name of the connection.
func (s *shell) stateName() string {
	if s.client == nil {
		return "CLOSED"
	}
	switch s.client.State() {
	case zk.StateConnected:
		return "CONNECTED"
	case zk.StateConnectedReadOnly:
		return "CONNECTEDREADONLY"
	case zk.StateAuthFailed:
		return "AUTH_FAILED"
	case zk.StateExpired, zk.StateClosed:
		return "CLOSED"
	}
	return "CONNECTING"
}

// connect replaces the session with a new one to addr. zkCli connects in
// the background; we wait up to the session timeout so that the next
// command does not race the handshake.
func (s *shell) connect(addr string) error {
	s.closeClient()
	s.server = addr
	s.lost.Store(false)
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	opts := []zk.Option{zk.WithSessionTimeout(s.timeout), zk.WithStateCallback(s.onState)}
	if s.tls != nil {
		opts = append(opts, zk.WithTLS(s.tls))
	}
	opts = append(opts, s.opts...)
	c, err := zk.Connect(ctx, addr, opts...)
	if err != nil {
		return err
	}
	s.client = c
	return nil
}

// connected prints the event zkCli's watcher prints for a new session.
func (s *shell) connected() { s.event("SyncConnected", "None", "null") }

// onState prints session events the way zkCli's default watcher does. The
// first SyncConnected is printed by the caller of connect, in order with
// the commands.
func (s *shell) onState(st zk.State) {
	switch st {
	case zk.StateDisconnected:
		s.lost.Store(true)
		s.event("Disconnected", "None", "null")
	case zk.StateConnected, zk.StateConnectedReadOnly:
		if s.lost.Swap(false) {
			s.event(javaState(st), "None", "null")
		}
	case zk.StateExpired, zk.StateAuthFailed:
		s.event(javaState(st), "None", "null")
	}
}

// closeClient ends the session. Its watches end without a change to
// report, so they are dropped unprinted.
func (s *shell) closeClient() {
	if s.client == nil {
		return
	}
	s.drain()
	_ = s.client.Close()
	s.client = nil
	s.wmu.Lock()
	s.watches = nil
	s.wmu.Unlock()
}

// ctx bounds one command; the client has its own request timeouts, this
// only guards against waiting forever.
func (s *shell) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 2*s.timeout+time.Second)
}

func (s *shell) printf(format string, a ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.done {
		fmt.Fprintf(s.out, format, a...)
	}
}

func (s *shell) errorf(format string, a ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.done {
		fmt.Fprintf(s.errw, format, a...)
	}
}

// event prints a WatchedEvent as zkCli's watcher does, unless
// "printwatches off".
func (s *shell) event(state, typ, path string) {
	if s.quiet.Load() {
		return
	}
	s.printf("\nWATCHER::\n\nWatchedEvent state:%s type:%s path:%s\n", state, typ, path)
}

// javaState is the Watcher.Event.KeeperState name of a session state.
func javaState(st zk.State) string {
	switch st {
	case zk.StateConnected:
		return "SyncConnected"
	case zk.StateConnectedReadOnly:
		return "ConnectedReadOnly"
	case zk.StateDisconnected, zk.StateConnecting:
		return "Disconnected"
	case zk.StateExpired:
		return "Expired"
	case zk.StateAuthFailed:
		return "AuthFailed"
	}
	return "Closed"
}

// errUsage marks a command line that does not fit the command's syntax;
// the caller prints the command's usage.
var errUsage = errors.New("cli: usage")

// refusedDialTimeout bounds the probe of each server before a one-shot
// command.
const refusedDialTimeout = 2 * time.Second

// anyListening returns nil if some server of the connect string accepts a
// TCP connection, or says why none did. A server that only times out is
// given the benefit of the doubt: the client's own connect waits for it.
func anyListening(connect string, timeout time.Duration) error {
	hosts, _, _ := strings.Cut(connect, "/") // a chroot suffix
	var errs []string
	for _, addr := range strings.Split(hosts, ",") {
		addr = strings.TrimSpace(addr)
		if _, _, err := net.SplitHostPort(addr); err != nil {
			addr = net.JoinHostPort(addr, "2181")
		}
		c, err := net.DialTimeout("tcp", addr, timeout)
		if err == nil {
			c.Close()
			return nil
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return nil
		}
		errs = append(errs, err.Error())
	}
	return fmt.Errorf("KeeperErrorCode = ConnectionLoss: no server of %s accepts connections (%s)", connect, strings.Join(errs, "; "))
}
