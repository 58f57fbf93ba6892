package config

import (
	"errors"
	"strings"
	"testing"
)

func TestParseServer(t *testing.T) {
	// Accepted forms, checked against Apache 3.8's QuorumPeerConfig.
	tests := []struct {
		in   string
		want Server
		str  string // String(), Apache's QuorumServer.toString for these
	}{
		{"h1:2888:3888", Server{ID: 1, Host: "h1", QuorumPort: 2888, ElectionPort: 3888},
			"h1:2888:3888:participant"},
		{"h1:2888:3888:", Server{ID: 1, Host: "h1", QuorumPort: 2888, ElectionPort: 3888},
			"h1:2888:3888:participant"},
		{"[::1]:2889:3889:observer;[::2]:2182",
			Server{ID: 1, Host: "::1", QuorumPort: 2889, ElectionPort: 3889, Type: Observer, ClientHost: "::2", ClientPort: 2182},
			"[::1]:2889:3889:observer;[::2]:2182"},
		{"h3:2890:3890:PARTICIPANT;2183",
			Server{ID: 1, Host: "h3", QuorumPort: 2890, ElectionPort: 3890, ClientHost: "0.0.0.0", ClientPort: 2183},
			"h3:2890:3890:participant;0.0.0.0:2183"},
		{"h4:2891:3891;10.0.0.1:2184",
			Server{ID: 1, Host: "h4", QuorumPort: 2891, ElectionPort: 3891, ClientHost: "10.0.0.1", ClientPort: 2184},
			"h4:2891:3891:participant;10.0.0.1:2184"},
		{"[fe80::1%eth0]:2888:3888", Server{ID: 1, Host: "fe80::1%eth0", QuorumPort: 2888, ElectionPort: 3888},
			"[fe80::1%eth0]:2888:3888:participant"},
		{"h:1:2;", Server{ID: 1, Host: "h", QuorumPort: 1, ElectionPort: 2}, "h:1:2:participant"},
		// Apache does not trim the value and fails on this; Zoo trims.
		{"h2:2888:3888 ", Server{ID: 1, Host: "h2", QuorumPort: 2888, ElectionPort: 3888}, "h2:2888:3888:participant"},
	}
	for _, tt := range tests {
		got, err := ParseServer(1, tt.in)
		if err != nil {
			t.Errorf("ParseServer(%q): %v", tt.in, err)
			continue
		}
		if got != tt.want {
			t.Errorf("ParseServer(%q) = %+v, want %+v", tt.in, got, tt.want)
		}
		if s := got.String(); s != tt.str {
			t.Errorf("ParseServer(%q).String() = %q, want %q", tt.in, s, tt.str)
		}
	}
}

func TestParseServerErrors(t *testing.T) {
	// Each rejected by Apache 3.8 too (its message in the comment), except
	// where noted.
	tests := []struct {
		in, msg string
	}{
		{"h1:2888", "does not have the form"},                 // same
		{"h1:2888:2888", "must be different"},                 // "Client and election port must be different!"
		{"h1:2888:3888:foo", "unrecognised peer type"},        // "Unrecognised peertype: foo"
		{"h1:2888:70000", "not a port number"},                // "port out of range:70000"
		{"h1:x:3888", "not a port number"},                    // "Address unresolved: h1:x"
		{"h1:2888:3888|h2:2888:3888", "multiple addresses"},   // "Multiple address feature is disabled"
		{"[::1:2888:3888", "no matching"},                     // "starts with '[' but has no matching ']:'"
		{"h1:2888:3888;a;b", "does not have the form"},        // same
		{"h1:2888:3888;h:1:2", "does not have the form"},      // same
		{"h1:2888:3888;x", "not a port number"},               // "Address unresolved: h1:x"
		{"h1:2888:3888;[::1]", "not a port number"},           // "Address unresolved"
		{"h1:2888:3888:observer:x", "does not have the form"}, // same
		{":2888:3888", "empty host"},                          // Apache accepts an empty host
		{"h1:0:3888", "not a port number"},                    // Apache accepts port 0
		{"[::1]x2888:3888", "want a port"},                    // Apache skips the character
		{"", "does not have the form"},                        // same
		{";2181", "does not have the form"},                   // same
	}
	for _, tt := range tests {
		_, err := ParseServer(1, tt.in)
		if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("ParseServer(%q) = %v, want ErrInvalid containing %q", tt.in, err, tt.msg)
		}
	}
}

func TestServerAddrs(t *testing.T) {
	s, err := ParseServer(2, "[::1]:2888:3888;127.0.0.1:2181")
	if err != nil {
		t.Fatal(err)
	}
	if s.QuorumAddr() != "[::1]:2888" || s.ElectionAddr() != "[::1]:3888" || s.ClientAddr() != "127.0.0.1:2181" {
		t.Fatalf("addrs %q %q %q", s.QuorumAddr(), s.ElectionAddr(), s.ClientAddr())
	}
	s, _ = ParseServer(2, "h:1:2")
	if s.ClientAddr() != "" {
		t.Fatalf("ClientAddr without a client part = %q", s.ClientAddr())
	}
}
