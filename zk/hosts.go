package zk

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
)

// HostProvider chooses the server the client tries next, each time it
// connects or reconnects (the Java client's HostProvider). Next is called
// from the client's session goroutine only.
type HostProvider interface {
	// Next returns the address (host:port) of the next server to try. An
	// error counts as a failed attempt: the client waits a moment and
	// calls Next again.
	Next(ctx context.Context) (string, error)
	// Len is the number of servers; the client divides its connect
	// timeout among them.
	Len() int
}

// WithHostProvider replaces the default host provider, which goes round
// the connect string's servers in a random order fixed at Connect.
// newProvider gets the connect string's servers (host:port, in the order
// given) and returns the provider the Client uses.
func WithHostProvider(newProvider func(hosts []string) HostProvider) Option {
	return func(c *config) { c.hostProvider = newProvider }
}

// WithDNSHostProvider makes the client resolve the connect string's host
// names again each time it has tried every address it knew, with r (nil:
// net.DefaultResolver). A name that resolves to several addresses counts
// as that many servers. So a client follows servers that are replaced
// and come back under the same name with a new address (a Kubernetes
// StatefulSet), where the Java client's StaticHostProvider keeps the
// addresses it resolved at start.
func WithDNSHostProvider(r *net.Resolver) Option {
	return WithHostProvider(func(hosts []string) HostProvider { return NewDNSHostProvider(hosts, r) })
}

func newHostProvider(cfg config, hosts []string) HostProvider {
	if cfg.hostProvider != nil {
		return cfg.hostProvider(hosts)
	}
	rand.Shuffle(len(hosts), func(i, j int) { hosts[i], hosts[j] = hosts[j], hosts[i] })
	return &staticHosts{hosts: hosts}
}

// staticHosts goes round a fixed list.
type staticHosts struct {
	hosts []string
	next  int
}

func (s *staticHosts) Next(context.Context) (string, error) {
	h := s.hosts[s.next%len(s.hosts)]
	s.next++
	return h, nil
}

func (s *staticHosts) Len() int { return len(s.hosts) }

// DNSHostProvider resolves host names to addresses afresh each round; see
// WithDNSHostProvider.
type DNSHostProvider struct {
	hosts    []string // host:port as given
	resolver *net.Resolver

	mu    sync.Mutex
	round []string // addresses left in this round
	known []string // the last successful resolution, for Len
}

// NewDNSHostProvider returns a provider over hosts (host:port each).
func NewDNSHostProvider(hosts []string, r *net.Resolver) *DNSHostProvider {
	if r == nil {
		r = net.DefaultResolver
	}
	return &DNSHostProvider{hosts: append([]string(nil), hosts...), resolver: r}
}

// Next returns the next address of the current round; when the round is
// over it resolves every host again and starts a new one, in random
// order. A name that fails to resolve is left out of the round; if every
// name fails Next returns the error.
func (p *DNSHostProvider) Next(ctx context.Context) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.round) == 0 {
		addrs, err := p.resolve(ctx)
		if len(addrs) == 0 {
			return "", err
		}
		rand.Shuffle(len(addrs), func(i, j int) { addrs[i], addrs[j] = addrs[j], addrs[i] })
		p.round, p.known = addrs, append([]string(nil), addrs...)
	}
	a := p.round[0]
	p.round = p.round[1:]
	return a, nil
}

func (p *DNSHostProvider) resolve(ctx context.Context) ([]string, error) {
	var (
		out     []string
		lastErr error
		seen    = map[string]bool{}
	)
	for _, h := range p.hosts {
		host, port, err := net.SplitHostPort(h)
		if err != nil {
			lastErr = err
			continue
		}
		ips, err := p.resolver.LookupHost(ctx, host)
		if err != nil {
			lastErr = fmt.Errorf("zk: resolve %s: %w", host, err)
			continue
		}
		for _, ip := range ips {
			if a := net.JoinHostPort(ip, port); !seen[a] {
				seen[a] = true
				out = append(out, a)
			}
		}
	}
	return out, lastErr
}

// Len is the number of addresses of the last resolution (the number of
// names before the first).
func (p *DNSHostProvider) Len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.known) > 0 {
		return len(p.known)
	}
	return len(p.hosts)
}
