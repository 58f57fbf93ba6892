package auth

import (
	"bytes"
	"crypto/sha256"
	"crypto/tls"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// ServerTLS is a server's TLS configuration whose stores can be reloaded
// while it serves: every handshake takes the current configuration, so
// connections already open keep theirs and new ones get the new
// certificates (Apache's client.certReload, sslQuorumReloadCertFiles).
type ServerTLS struct {
	settings TLS
	log      *slog.Logger
	cur      atomic.Pointer[tls.Config]

	// onReload, if set, builds what else depends on the stores (the
	// quorum's dialling configuration); a failure keeps everything as
	// it was.
	onReload func() error

	mu    sync.Mutex // serializes reloads and guards sums
	sums  [2][sha256.Size]byte
	stop  chan struct{}
	done  chan struct{}
	watch sync.Once
	close sync.Once
}

// NewServerTLS loads the stores of t.
func NewServerTLS(t TLS, log *slog.Logger) (*ServerTLS, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &ServerTLS{settings: t, log: log, stop: make(chan struct{}), done: make(chan struct{})}
	c, err := t.ServerConfig()
	if err != nil {
		return nil, err
	}
	s.cur.Store(c)
	s.sums = s.fingerprint()
	return s, nil
}

// Settings returns the settings the configuration was built from.
func (s *ServerTLS) Settings() TLS { return s.settings }

// Config returns the configuration to give tls.Server: it hands each
// handshake the configuration current at that moment.
func (s *ServerTLS) Config() *tls.Config {
	return &tls.Config{
		MinVersion: s.settings.MinVersion,
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			return s.cur.Load(), nil
		},
	}
}

// Reload reads the stores again. If they cannot be read, the current
// configuration stays and the error is returned: a half-written file must
// not take TLS down.
func (s *ServerTLS) Reload() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	// The files as read now are the ones tried: a failure is retried
	// only when they change again, not on every check.
	s.sums = s.fingerprint()
	c, err := s.settings.ServerConfig()
	if err != nil {
		return err
	}
	if s.onReload != nil {
		if err := s.onReload(); err != nil {
			return err
		}
	}
	s.cur.Store(c)
	return nil
}

// fingerprint hashes the key and trust store files; a file that cannot be
// read hashes as empty.
func (s *ServerTLS) fingerprint() [2][sha256.Size]byte {
	var out [2][sha256.Size]byte
	for i, p := range []string{s.settings.KeyStore.Path, s.settings.TrustStore.Path} {
		if p == "" {
			continue
		}
		b, _ := os.ReadFile(p)
		out[i] = sha256.Sum256(b)
	}
	return out
}

// changed reports whether a store file's contents differ from the loaded
// ones.
func (s *ServerTLS) changed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.fingerprint()
	return !bytes.Equal(now[0][:], s.sums[0][:]) || !bytes.Equal(now[1][:], s.sums[1][:])
}

// Watch reloads the stores whenever their files change, checking every
// interval, until Close. Contents are compared rather than modification
// times, which a copy can preserve. A failed reload is logged and retried
// at the next change.
func (s *ServerTLS) Watch(interval time.Duration) {
	s.watch.Do(func() {
		go func() {
			defer close(s.done)
			t := time.NewTicker(interval)
			defer t.Stop()
			for {
				select {
				case <-s.stop:
					return
				case <-t.C:
				}
				if !s.changed() {
					continue
				}
				if err := s.Reload(); err != nil {
					s.log.Error("TLS: reloading the key or trust store failed; keeping the previous certificates", "err", err)
					continue
				}
				s.log.Info("TLS: key and trust stores reloaded", "keyStore", s.settings.KeyStore.Path,
					"trustStore", s.settings.TrustStore.Path)
			}
		}()
	})
}

// Close stops Watch and waits for it.
func (s *ServerTLS) Close() {
	s.close.Do(func() {
		close(s.stop)
		started := true
		s.watch.Do(func() { started = false })
		if started {
			<-s.done
		}
	})
}
