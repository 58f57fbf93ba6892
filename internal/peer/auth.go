package peer

import (
	"errors"
	"fmt"
	"io"
	"net"
)

// Quorum SASL (Apache's quorum.auth.*): servers prove who they are to each
// other before a connection carries anything. As in Apache, the dialling
// side is the learner, which logs in with its credentials, and the
// accepting side is the server, which checks them; every server plays both
// parts, since it dials some peers and accepts others. The mechanism is
// the caller's (DIGEST-MD5 from the JAAS QuorumLearner and QuorumServer
// sections); peer only carries its tokens.
//
// A hello with flagSASL announces a dialer that will authenticate; an
// ack with flagSASL, an acceptor that checks. When both do, the exchange
// follows the ack, under the handshake deadline:
//
//	dialer:   token frame (the mechanism's first token, maybe empty)
//	acceptor: token frame (challenge)             } as many rounds as
//	dialer:   token frame (response)              } the mechanism needs
//	acceptor: result frame: status byte + data
//
// status 0 means authenticated, data the mechanism's last token (DIGEST-MD5's
// rspauth, with which the dialer checks that the acceptor knows the
// password too); 1 means failed but let through (serverRequireSasl=false),
// data the reason; 2 means refused, data the reason, and the acceptor
// closes the connection.
//
// What is required decides what a failure costs. ServerRequired: an
// acceptor refuses a dialer that does not authenticate or fails. Without
// it, such a dialer is logged and let in: Apache's rolling-upgrade mode.
// LearnerRequired: a dialer refuses an acceptor that does not check
// credentials, lets it through after a failure, or cannot prove itself.

// ClientMechanism is the dialling side of a SASL mechanism: Step takes the
// acceptor's last token (nil at first) and returns the next one to send.
type ClientMechanism interface {
	Step(challenge []byte) ([]byte, error)
	Complete() bool
}

// ServerMechanism is the accepting side: Step takes the dialer's token and
// returns the reply; once Complete, User names who authenticated.
type ServerMechanism interface {
	Step(token []byte) ([]byte, error)
	Complete() bool
	User() string
}

// Auth turns on quorum SASL (quorum.auth.enableSasl).
type Auth struct {
	// Learner starts the dialling side of one exchange (the QuorumLearner
	// login). Required.
	Learner func() ClientMechanism
	// Server starts the accepting side of one exchange (the QuorumServer
	// login). Required.
	Server func() ServerMechanism
	// LearnerRequired is quorum.auth.learnerRequireSasl.
	LearnerRequired bool
	// ServerRequired is quorum.auth.serverRequireSasl.
	ServerRequired bool
}

// ErrAuth marks a connection ended because quorum SASL failed or was
// required and not done.
var ErrAuth = errors.New("peer: quorum SASL authentication failed")

// flagSASL, in a hello or an ack, says the sender runs quorum SASL.
const flagSASL uint8 = 2

// Frame kinds of the exchange.
const (
	kindSASLToken  uint8 = 1
	kindSASLResult uint8 = 2

	saslOK      = 0
	saslAllowed = 1
	saslRefused = 2

	maxSASLToken = 64 << 10
)

// authAccept runs the acceptor's side after an accepted hello. It reports
// whether the connection may go on; every outcome but plain success is
// logged here.
func (t *Transport) authAccept(c net.Conn, h hello) bool {
	a := t.cfg.Auth
	remote := c.RemoteAddr()
	if h.flags&flagSASL == 0 {
		// Refused before the ack when required (checkHello).
		t.log.Warn("peer: quorum peer did not authenticate with SASL; letting it in (quorum.auth.serverRequireSasl=false)",
			"from", h.from, "remote", remote)
		return true
	}
	fr := newFrameReader(c, maxSASLToken)
	mech := a.Server()
	var reason error
	for {
		kind, tok, _, err := fr.next(nil)
		if err != nil {
			t.log.Warn("peer: quorum SASL exchange broke off", "from", h.from, "remote", remote, "err", err)
			return false
		}
		if kind != kindSASLToken {
			reason = fmt.Errorf("unexpected frame kind %d", kind)
			break
		}
		reply, err := mech.Step(tok)
		if err != nil {
			reason = err
			break
		}
		if mech.Complete() {
			if err := writeFrame(c, kindSASLResult, append([]byte{saslOK}, reply...)); err != nil {
				return false
			}
			t.log.Info("peer: quorum peer authenticated", "from", h.from, "remote", remote, "user", mech.User())
			return true
		}
		if err := writeFrame(c, kindSASLToken, reply); err != nil {
			return false
		}
	}
	if a.ServerRequired {
		t.log.Error("peer: quorum SASL authentication failed; refusing the peer (quorum.auth.serverRequireSasl=true)",
			"from", h.from, "remote", remote, "err", reason)
		_ = writeFrame(c, kindSASLResult, append([]byte{saslRefused}, reason.Error()...))
		return false
	}
	t.log.Warn("peer: quorum SASL authentication failed; letting the peer in (quorum.auth.serverRequireSasl=false)",
		"from", h.from, "remote", remote, "err", reason)
	return writeFrame(c, kindSASLResult, append([]byte{saslAllowed}, reason.Error()...)) == nil
}

// authDial runs the dialer's side once the hello is accepted; ackFlags
// are the acceptor's. An error means the connection must not be used.
func (t *Transport) authDial(c net.Conn, to uint64, ackFlags uint8) error {
	a := t.cfg.Auth
	if ackFlags&flagSASL == 0 {
		if a.LearnerRequired {
			return fmt.Errorf("%w: peer %d does not run quorum SASL and quorum.auth.learnerRequireSasl=true", ErrAuth, to)
		}
		t.log.Warn("peer: quorum peer does not check SASL credentials; connecting anyway (quorum.auth.learnerRequireSasl=false)",
			"peer", to, "remote", c.RemoteAddr())
		return nil
	}
	mech := a.Learner()
	tok, err := mech.Step(nil)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrAuth, err)
	}
	fr := newFrameReader(c, maxSASLToken)
	for {
		if err := writeFrame(c, kindSASLToken, tok); err != nil {
			return err
		}
		kind, msg, _, err := fr.next(nil)
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return fmt.Errorf("quorum SASL exchange with %d: %w", to, err)
		}
		switch kind {
		case kindSASLToken:
			if tok, err = mech.Step(msg); err != nil {
				return fmt.Errorf("%w: %w", ErrAuth, err)
			}
			continue
		case kindSASLResult:
			return t.authResult(mech, to, msg, c)
		}
		return fmt.Errorf("%w: unexpected frame kind %d from peer %d", ErrBadHandshake, kind, to)
	}
}

// authResult judges the acceptor's result frame.
func (t *Transport) authResult(mech ClientMechanism, to uint64, msg []byte, c net.Conn) error {
	a := t.cfg.Auth
	if len(msg) == 0 {
		return fmt.Errorf("%w: empty result from peer %d", ErrBadHandshake, to)
	}
	status, data := msg[0], msg[1:]
	switch status {
	case saslOK:
		_, err := mech.Step(data)
		if err == nil && mech.Complete() {
			return nil
		}
		if err == nil {
			err = errors.New("the exchange did not complete")
		}
		if a.LearnerRequired {
			return fmt.Errorf("%w: peer %d did not prove itself: %w", ErrAuth, to, err)
		}
		t.log.Warn("peer: quorum peer did not prove itself; connecting anyway (quorum.auth.learnerRequireSasl=false)",
			"peer", to, "remote", c.RemoteAddr(), "err", err)
		return nil
	case saslAllowed:
		if a.LearnerRequired {
			return fmt.Errorf("%w: peer %d refused our credentials: %s", ErrAuth, to, data)
		}
		t.log.Warn("peer: quorum peer refused our SASL credentials but lets us in (check quorum.auth.learner.saslLoginContext)",
			"peer", to, "remote", c.RemoteAddr(), "reason", string(data))
		return nil
	case saslRefused:
		return fmt.Errorf("%w: peer %d refused our credentials: %s", ErrAuth, to, data)
	}
	return fmt.Errorf("%w: result status %d from peer %d", ErrBadHandshake, status, to)
}
