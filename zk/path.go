package zk

import (
	"fmt"
	"net"
	"strings"
	"unicode/utf8"
)

// defaultPort is the port of a server named without one.
const defaultPort = "2181"

// parseConnectString splits "host1:2181,host2/app" into host:port
// addresses and a chroot ("" for none).
func parseConnectString(s string) (hosts []string, chroot string, err error) {
	hostPart := s
	if i := strings.IndexByte(s, '/'); i >= 0 {
		hostPart, chroot = s[:i], s[i:]
		if err := validatePath(chroot, false); err != nil {
			return nil, "", fmt.Errorf("%w: chroot %q: %w", ErrInvalidConnectString, chroot, err)
		}
		if chroot == "/" {
			chroot = ""
		}
	}
	for _, h := range strings.Split(hostPart, ",") {
		h = strings.TrimSpace(h)
		if h == "" {
			continue
		}
		addr, err := withPort(h)
		if err != nil {
			return nil, "", fmt.Errorf("%w: %q: %w", ErrInvalidConnectString, h, err)
		}
		hosts = append(hosts, addr)
	}
	if len(hosts) == 0 {
		return nil, "", fmt.Errorf("%w: %q names no server", ErrInvalidConnectString, s)
	}
	return hosts, chroot, nil
}

// withPort adds the default port to a host given without one; an IPv6
// address must be bracketed ("[::1]:2181" or "[::1]").
func withPort(h string) (string, error) {
	if host, port, err := net.SplitHostPort(h); err == nil {
		if host == "" || port == "" {
			return "", fmt.Errorf("empty host or port")
		}
		return h, nil
	}
	host := strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	if strings.ContainsAny(host, "[]") || (strings.Contains(host, ":") && !strings.HasPrefix(h, "[")) {
		return "", fmt.Errorf("malformed host")
	}
	return net.JoinHostPort(host, defaultPort), nil
}

// validatePath checks a znode path as Apache's PathUtils.validatePath
// does: absolute, no empty, "." or ".." components, no trailing slash
// unless it is "/" or the prefix of a sequential node, and none of the
// characters Apache refuses (NUL, controls, and the ranges below, judged
// as Java judges UTF-16 units: everything from U+D800 to U+F8FF and from
// U+FFF0, which includes every character outside the BMP).
func validatePath(p string, sequential bool) error {
	switch {
	case p == "":
		return fmt.Errorf("%w: empty", ErrInvalidPath)
	case p[0] != '/':
		return fmt.Errorf("%w: %q does not start with /", ErrInvalidPath, p)
	case p == "/":
		return nil
	case p[len(p)-1] == '/' && !sequential:
		return fmt.Errorf("%w: %q ends with /", ErrInvalidPath, p)
	case !utf8.ValidString(p):
		return fmt.Errorf("%w: %q is not UTF-8", ErrInvalidPath, p)
	}
	comps := strings.Split(p[1:], "/")
	for i, c := range comps {
		last := i == len(comps)-1
		switch {
		case c == "" && !(last && sequential):
			return fmt.Errorf("%w: %q has an empty component", ErrInvalidPath, p)
		case c == "." || c == "..":
			return fmt.Errorf("%w: %q has a relative component", ErrInvalidPath, p)
		}
	}
	for _, r := range p {
		if badPathRune(r) {
			return fmt.Errorf("%w: %q contains character %U", ErrInvalidPath, p, r)
		}
	}
	return nil
}

func badPathRune(r rune) bool {
	return r == 0 ||
		(r > 0 && r <= 0x1f) ||
		(r >= 0x7f && r <= 0x9f) ||
		(r >= 0xd800 && r <= 0xf8ff) ||
		r >= 0xfff0
}

// serverPath prefixes a client path with the chroot.
func (c *Client) serverPath(p string) string {
	if c.chroot == "" {
		return p
	}
	if p == "/" {
		return c.chroot
	}
	return c.chroot + p
}

// clientPath strips the chroot from a path the server sent.
func (c *Client) clientPath(p string) string {
	if c.chroot == "" {
		return p
	}
	if p == c.chroot {
		return "/"
	}
	if strings.HasPrefix(p, c.chroot+"/") {
		return p[len(c.chroot):]
	}
	return p
}
