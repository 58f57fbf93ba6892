package digestmd5

import (
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"io"
	"strings"
)

// Client is the client side of one DIGEST-MD5 exchange, as
// Apache's Java client runs it: an empty first token, then a
// digest-response to the server's challenge (with authzid set to the
// user, as ZooKeeperSaslClient asks), then a check of the server's
// rspauth, which proves the server knows the password too.
type Client struct {
	user, password, uri string
	rand                io.Reader

	step int
	key  digestKey
}

// NewClient starts an exchange as user for service/host (Apache:
// Service, Host). rand supplies the cnonce.
func NewClient(user, password, service, host string, rand io.Reader) *Client {
	return &Client{user: user, password: password, uri: service + "/" + host, rand: rand}
}

// Complete reports whether the server has proved itself.
func (c *Client) Complete() bool { return c.step == 3 }

// Step returns the token to send after receiving challenge (nil for the
// first step). After the server's rspauth it returns nil and the exchange
// is complete.
func (c *Client) Step(challenge []byte) ([]byte, error) {
	switch c.step {
	case 0:
		c.step = 1
		return []byte{}, nil
	case 1:
		resp, err := c.respond(challenge)
		if err != nil {
			return nil, err
		}
		c.step = 2
		return resp, nil
	case 2:
		d, err := parseDirectives(challenge)
		if err != nil {
			return nil, err
		}
		want := c.key.response(":")
		if subtle.ConstantTimeCompare([]byte(strings.ToLower(d["rspauth"])), []byte(want)) != 1 {
			return nil, fmt.Errorf("%w: server's rspauth does not match: it does not know the password", ErrFailed)
		}
		c.step = 3
		return nil, nil
	}
	return nil, fmt.Errorf("%w: DIGEST-MD5 exchange already complete", ErrFailed)
}

func (c *Client) respond(challenge []byte) ([]byte, error) {
	d, err := parseDirectives(challenge)
	if err != nil {
		return nil, err
	}
	if d["nonce"] == "" {
		return nil, fmt.Errorf("%w: challenge has no nonce", ErrFailed)
	}
	if q, ok := d["qop"]; ok && !hasQop(q, "auth") {
		return nil, fmt.Errorf("%w: server offers qop %q, not auth", ErrFailed, q)
	}
	if a := d["algorithm"]; !strings.EqualFold(a, "md5-sess") {
		return nil, fmt.Errorf("%w: algorithm %q, want md5-sess", ErrFailed, a)
	}
	realm, _, _ := strings.Cut(d["realm"], ",")
	var cn [24]byte
	if _, err := io.ReadFull(c.rand, cn[:]); err != nil {
		return nil, fmt.Errorf("%w: cnonce: %v", ErrFailed, err)
	}
	utf := strings.EqualFold(d["charset"], "utf-8")
	c.key = digestKey{user: c.user, realm: realm, password: c.password, nonce: d["nonce"],
		cnonce: base64.StdEncoding.EncodeToString(cn[:]), nc: "00000001", authz: c.user, uri: c.uri, utf: utf}
	var b strings.Builder
	if utf {
		b.WriteString("charset=utf-8,")
	}
	fmt.Fprintf(&b, "username=%s,realm=%s,nonce=%s,nc=00000001,cnonce=%s,digest-uri=%s,maxbuf=65536,response=%s,qop=auth,authzid=%s",
		quote(c.key.encodeStr(c.user)), quote(c.key.encodeStr(realm)), quote(c.key.nonce), quote(c.key.cnonce),
		quote(c.uri), c.key.response("AUTHENTICATE:"), quote(c.key.encodeStr(c.user)))
	return []byte(b.String()), nil
}

func hasQop(list, want string) bool {
	for _, q := range strings.Split(list, ",") {
		if strings.TrimSpace(q) == want {
			return true
		}
	}
	return false
}
