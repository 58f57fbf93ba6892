// Package digestmd5 is SASL DIGEST-MD5 (RFC 2831) as ZooKeeper speaks it
// on the sasl opcode: the server side of Java's DIGEST-MD5 mechanism and a
// client like the Java client's. It is pure (tokens in, tokens out) and
// shared by the server and the zk client.
package digestmd5

import (
	"crypto/md5"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// ErrFailed marks a SASL exchange that failed: a malformed or out-of-order
// token, an unknown user, a wrong password. The server answers it with
// AuthFailed and closes the connection, as Apache does.
var ErrFailed = errors.New("digestmd5: SASL DIGEST-MD5 authentication failed")

// What Apache's ZooKeeperSaslServer passes to Sasl.createSaslServer for
// DIGEST-MD5: protocol "zookeeper", server name "zk-sasl-md5"; Java's
// DIGEST-MD5 server then uses the server name as its only realm. Clients
// (the Java client, kazoo) send digest-uri "zookeeper/zk-sasl-md5".
const (
	Service = "zookeeper"
	Host    = "zk-sasl-md5"
)

// Server is the server side of one RFC 2831 DIGEST-MD5 exchange
// (qop auth, no integrity or privacy layer), as Java's DIGEST-MD5 server
// runs it for ZooKeeper:
//
//	client: empty token
//	server: digest-challenge (realm, nonce, charset=utf-8, algorithm=md5-sess)
//	client: digest-response
//	server: rspauth=...           (the exchange is complete)
//
// It is a pure state machine: Step takes a token and returns the reply.
// Any failure is final and wraps ErrFailed.
type Server struct {
	realm, uri string
	password   func(user string) (string, bool)
	rand       io.Reader

	step   int
	nonce  string
	user   string
	authz  string
	failed bool
}

// NewServer starts an exchange for service/host (Apache:
// Service, Host), with host as the realm. password looks a
// user's password up (the JAAS Server section's user_NAME options). rand
// supplies the nonce.
func NewServer(service, host string, password func(user string) (string, bool), rand io.Reader) *Server {
	return &Server{realm: host, uri: service + "/" + host, password: password, rand: rand}
}

// Complete reports whether the client has authenticated.
func (s *Server) Complete() bool { return s.step == 2 && !s.failed }

// User returns the authenticated user name (the authentication id), once
// Complete.
func (s *Server) User() string { return s.user }

// AuthzID returns the authorization id the client asked for, if any.
func (s *Server) AuthzID() string { return s.authz }

// Step processes the client's next token and returns the server's reply.
func (s *Server) Step(token []byte) ([]byte, error) {
	if s.failed {
		return nil, fmt.Errorf("%w: exchange already failed", ErrFailed)
	}
	resp, err := s.step1or2(token)
	if err != nil {
		s.failed = true
	}
	return resp, err
}

func (s *Server) step1or2(token []byte) ([]byte, error) {
	switch s.step {
	case 0:
		// DIGEST-MD5 has no initial response. Java's server (and so
		// Apache's) ignores whatever the first token holds and answers
		// with the challenge; so does Zoo.
		var n [30]byte
		if _, err := io.ReadFull(s.rand, n[:]); err != nil {
			return nil, fmt.Errorf("%w: nonce: %v", ErrFailed, err)
		}
		s.nonce = base64.StdEncoding.EncodeToString(n[:])
		s.step = 1
		// Java's challenge, byte for byte: no qop directive, which
		// means auth alone (RFC 2831 section 2.1.1).
		return []byte(fmt.Sprintf(`realm=%s,nonce=%s,charset=utf-8,algorithm=md5-sess`,
			quote(s.realm), quote(s.nonce))), nil
	case 1:
		rsp, err := s.verify(token)
		if err != nil {
			return nil, err
		}
		s.step = 2
		return rsp, nil
	}
	return nil, fmt.Errorf("%w: DIGEST-MD5 exchange already complete", ErrFailed)
}

// verify checks a digest-response and returns the rspauth reply.
func (s *Server) verify(token []byte) ([]byte, error) {
	d, err := parseDirectives(token)
	if err != nil {
		return nil, err
	}
	for _, k := range []string{"username", "nonce", "cnonce", "nc", "digest-uri", "response"} {
		if _, ok := d[k]; !ok {
			return nil, fmt.Errorf("%w: digest-response has no %s", ErrFailed, k)
		}
	}
	utf := false
	switch cs, ok := d["charset"]; {
	case !ok:
	case strings.EqualFold(cs, "utf-8"):
		utf = true
	default:
		return nil, fmt.Errorf("%w: unsupported charset %q", ErrFailed, cs)
	}
	if d["realm"] != s.realm {
		return nil, fmt.Errorf("%w: unknown realm %q", ErrFailed, d["realm"])
	}
	if d["nonce"] != s.nonce {
		return nil, fmt.Errorf("%w: nonce does not match the challenge's", ErrFailed)
	}
	if d["nc"] != "00000001" {
		return nil, fmt.Errorf("%w: nonce-count %q, want 00000001", ErrFailed, d["nc"])
	}
	if q, ok := d["qop"]; ok && q != "auth" {
		return nil, fmt.Errorf("%w: qop %q not offered", ErrFailed, q)
	}
	if !strings.EqualFold(d["digest-uri"], s.uri) {
		return nil, fmt.Errorf("%w: digest-uri %q, want %q", ErrFailed, d["digest-uri"], s.uri)
	}
	user := decodeCharset(d["username"], utf)
	password, ok := s.password(user)
	if !ok {
		return nil, fmt.Errorf("%w: unknown user %q", ErrFailed, user)
	}
	authz := decodeCharset(d["authzid"], utf)
	k := digestKey{user: user, realm: s.realm, password: password, nonce: s.nonce,
		cnonce: d["cnonce"], nc: d["nc"], authz: authz, uri: d["digest-uri"], utf: utf}
	want := k.response("AUTHENTICATE:")
	if subtle.ConstantTimeCompare([]byte(strings.ToLower(d["response"])), []byte(want)) != 1 {
		return nil, fmt.Errorf("%w: wrong password for user %q", ErrFailed, user)
	}
	s.user, s.authz = user, authz
	return []byte("rspauth=" + k.response(":")), nil
}

// digestKey holds what RFC 2831's response-value is computed from.
type digestKey struct {
	user, realm, password, nonce, cnonce, nc, authz, uri string
	utf                                                  bool
}

// response computes a response-value (a2prefix "AUTHENTICATE:") or an
// rspauth value (a2prefix ":"), qop auth, RFC 2831 section 2.1.2.1.
func (k digestKey) response(a2prefix string) string {
	inner := md5.Sum(k.encode(k.user + ":" + k.realm + ":" + k.password))
	a1 := append(inner[:], ":"+k.nonce+":"+k.cnonce...)
	if k.authz != "" {
		a1 = append(a1, ":"+k.encodeStr(k.authz)...)
	}
	ha1 := md5.Sum(a1)
	ha2 := md5.Sum([]byte(a2prefix + k.uri))
	kd := hex.EncodeToString(ha1[:]) + ":" + k.nonce + ":" + k.nc + ":" + k.cnonce + ":auth:" + hex.EncodeToString(ha2[:])
	sum := md5.Sum([]byte(kd))
	return hex.EncodeToString(sum[:])
}

// encode renders user:realm:password as RFC 2831 hashes it: UTF-8 when
// charset=utf-8 was sent, otherwise ISO 8859-1 where every character fits.
func (k digestKey) encode(s string) []byte {
	if k.utf {
		return []byte(s)
	}
	return latin1(s)
}

func (k digestKey) encodeStr(s string) string {
	if k.utf {
		return s
	}
	return string(latin1(s))
}

// latin1 encodes s in ISO 8859-1 if every rune fits, else returns UTF-8.
func latin1(s string) []byte {
	out := make([]byte, 0, len(s))
	for _, r := range s {
		if r > 0xff {
			return []byte(s)
		}
		out = append(out, byte(r))
	}
	return out
}

// decodeCharset turns a directive's bytes into a string: UTF-8 as is,
// ISO 8859-1 otherwise.
func decodeCharset(v string, utf bool) string {
	if utf || isASCII(v) {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		b.WriteRune(rune(v[i]))
	}
	return b.String()
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
