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
	return func(c *config) { c.sasl = &saslCreds{user: user, password: password} }
}

type saslCreds struct{ user, password string }

// saslXid is the xid of the sasl requests, which go before any other.
const saslXid = 1

// saslLogin runs a DIGEST-MD5 exchange on a connection that has just
// completed its handshake, before its reader and writer start. deadline
// bounds it.
func saslLogin(nc interface {
	io.ReadWriter
	SetDeadline(time.Time) error
}, creds *saslCreds, maxFrame int, deadline time.Time) error {
	if err := nc.SetDeadline(deadline); err != nil {
		return err
	}
	defer func() { _ = nc.SetDeadline(time.Time{}) }()
	cl := digestmd5.NewClient(creds.user, creds.password, digestmd5.Service, digestmd5.Host, rand.Reader)
	var challenge []byte
	for {
		tok, err := cl.Step(challenge)
		if err != nil {
			return fmt.Errorf("sasl: %w: %w", ErrAuthFailed, err)
		}
		if cl.Complete() {
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
			return fmt.Errorf("sasl: server refused the credentials of %q: %w", creds.user, Code(h.Err))
		}
		var resp jute.SASLResponse
		resp.Decode(r)
		if r.Err() != nil {
			return fmt.Errorf("%w: sasl reply: %v", ErrProtocol, r.Err())
		}
		if resp.Token == nil && len(challenge) == 0 {
			// No SASL on the server: Apache answers a null token.
			return nil
		}
		challenge = resp.Token
	}
}
