package zk

import (
	"crypto/rand"
	"fmt"
	"io"
	"time"

	"github.com/zoohq/zoo/internal/auth/digestmd5"
	"github.com/zoohq/zoo/internal/jute"
)

// WithSASL authenticates every connection with SASL DIGEST-MD5 as user,
// as Apache's Java client does with a JAAS Client section
// (DigestLoginModule username/password): the server's JAAS Server section
// must list the user. The session then holds the id sasl:user. The
// exchange runs right after the handshake, before any request; a server
// that rejects the credentials ends the Client with ErrAuthFailed
// (or ErrSessionClosedRequireSASLAuth when it requires SASL). A server
// without SASL answers with no challenge and the Client goes on
// unauthenticated, as the Java client does.
func WithSASL(user, password string) Option {
	return func(c *config) {
		c.sasl = func(string) (saslMechanism, string, error) {
			return &digestMech{c: digestmd5.NewClient(user, password, digestmd5.Service, digestmd5.Host, rand.Reader)}, user, nil
		}
	}
}

// saslMechanism is the client side of one SASL exchange. Step returns
// the next token to send, given the server's last one (nil at first);
// last reports that no more follow once this one is accepted, and a nil
// token with last means the exchange is complete without sending more.
type saslMechanism interface {
	Step(challenge []byte) (token []byte, last bool, err error)
}

// saslStarter starts a mechanism for a connection to host, returning it
// and the name it logs in as.
type saslStarter func(host string) (saslMechanism, string, error)

type digestMech struct{ c *digestmd5.Client }

func (m *digestMech) Step(challenge []byte) ([]byte, bool, error) {
	tok, err := m.c.Step(challenge)
	return tok, m.c.Complete(), err
}

// saslXid is the xid of the sasl requests, which go before any other.
const saslXid = 1

// saslLogin runs a SASL exchange on a connection to host that has just
// completed its handshake, before its reader and writer start. deadline
// bounds it.
func saslLogin(nc interface {
	io.ReadWriter
	SetDeadline(time.Time) error
}, start saslStarter, host string, maxFrame int, deadline time.Time) error {
	mech, who, err := start(host)
	if err != nil {
		return fmt.Errorf("sasl: %w: %w", ErrAuthFailed, err)
	}
	if c, ok := mech.(interface{ Close() }); ok {
		defer c.Close()
	}
	if err := nc.SetDeadline(deadline); err != nil {
		return err
	}
	defer func() { _ = nc.SetDeadline(time.Time{}) }()
	var challenge []byte
	for first := true; ; first = false {
		tok, last, err := mech.Step(challenge)
		if err != nil {
			return fmt.Errorf("sasl: %w: %w", ErrAuthFailed, err)
		}
		if last && tok == nil {
			return nil
		}
		frame := jute.AppendFrame(nil, &jute.RequestHeader{Xid: saslXid, Type: jute.OpSASL}, &jute.SASLRequest{Token: tok})
		if _, err := nc.Write(frame); err != nil {
			return err
		}
		reply, err := jute.ReadFrame(nc, nil, maxFrame)
		if err != nil {
			return err
		}
		r := jute.NewReader(reply)
		var h jute.ReplyHeader
		h.Decode(r)
		if r.Err() != nil {
			return fmt.Errorf("%w: sasl reply: %v", ErrProtocol, r.Err())
		}
		if h.Err != jute.OK {
			return fmt.Errorf("sasl: server refused the credentials of %q: %w", who, Code(h.Err))
		}
		var resp jute.SASLResponse
		resp.Decode(r)
		if r.Err() != nil {
			return fmt.Errorf("%w: sasl reply: %v", ErrProtocol, r.Err())
		}
		if last {
			return nil
		}
		if resp.Token == nil && first {
			// No SASL on the server: Apache answers a null token.
			return nil
		}
		challenge = resp.Token
	}
}
