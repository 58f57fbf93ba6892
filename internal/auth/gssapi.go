package auth

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/jcmturner/gofork/encoding/asn1"
	"github.com/jcmturner/gokrb5/v8/asn1tools"
	"github.com/jcmturner/gokrb5/v8/crypto"
	"github.com/jcmturner/gokrb5/v8/gssapi"
	"github.com/jcmturner/gokrb5/v8/iana/asnAppTag"
	"github.com/jcmturner/gokrb5/v8/iana/flags"
	"github.com/jcmturner/gokrb5/v8/iana/keyusage"
	"github.com/jcmturner/gokrb5/v8/iana/msgtype"
	"github.com/jcmturner/gokrb5/v8/keytab"
	"github.com/jcmturner/gokrb5/v8/messages"
	"github.com/jcmturner/gokrb5/v8/service"
	"github.com/jcmturner/gokrb5/v8/spnego"
	"github.com/jcmturner/gokrb5/v8/types"
)

// ErrGSSAPI marks a failed SASL GSSAPI exchange: a token that does not
// parse, a ticket the keytab cannot decrypt, a bad checksum, a step out
// of order.
var ErrGSSAPI = errors.New("auth: SASL GSSAPI authentication failed")

// tokAPRep is the GSS-API token id of an AP-REP (RFC 1964 section 1.1).
var tokAPRep = [2]byte{0x02, 0x00}

// GSSAPIServer is the server side of one SASL GSSAPI exchange (RFC 4752)
// over Kerberos 5, as Java's GSSAPI SASL server runs it for ZooKeeper:
//
//	client: GSS InitialContextToken holding an AP-REQ
//	server: an AP-REP when the client asked for mutual authentication
//	        (then the client sends an empty token)
//	server: a wrap token: no security layer offered, max buffer size
//	client: a wrap token: the layer it chose and its authorization id
//
// Only the "auth" quality of protection is offered: no integrity or
// confidentiality layer follows. Any failure is final and wraps
// ErrGSSAPI.
type GSSAPIServer struct {
	kt        *keytab.Keytab
	principal string // the keytab principal to use ("zookeeper/host"); "" for any
	now       func() time.Time

	step   int
	key    types.EncryptionKey // the key of wrap tokens: the initiator's subkey, or the session key
	seq    uint64              // our sequence number, from the AP-REP
	user   string              // client principal, name@REALM
	authz  string
	failed bool
}

// NewGSSAPIServer starts an exchange accepting tickets for principal
// (without realm, as Java's Krb5LoginModule principal minus "@REALM"; ""
// accepts any principal of the keytab).
func NewGSSAPIServer(kt *keytab.Keytab, principal string, now func() time.Time) *GSSAPIServer {
	return &GSSAPIServer{kt: kt, principal: principal, now: now}
}

// Complete reports whether the client has authenticated.
func (s *GSSAPIServer) Complete() bool { return s.step == 3 && !s.failed }

// User returns the client's principal (name@REALM), once Complete.
func (s *GSSAPIServer) User() string { return s.user }

// Step processes the client's next token and returns the server's reply.
func (s *GSSAPIServer) Step(token []byte) (out []byte, err error) {
	if s.failed {
		return nil, fmt.Errorf("%w: exchange already failed", ErrGSSAPI)
	}
	// The tokens come from the network and are parsed by gokrb5's ASN.1
	// decoder; whatever it does with hostile bytes, a bad token must fail
	// this exchange, never the server.
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("%w: malformed token: %v", ErrGSSAPI, r)
		}
		if err != nil {
			s.failed = true
		}
	}()
	return s.step1(token)
}

func (s *GSSAPIServer) step1(token []byte) ([]byte, error) {
	switch s.step {
	case 0:
		rep, mutual, err := s.accept(token)
		if err != nil {
			return nil, err
		}
		if mutual {
			s.step = 1 // the client answers the AP-REP with an empty token
			return rep, nil
		}
		s.step = 2
		return s.offer()
	case 1:
		if len(token) != 0 {
			return nil, fmt.Errorf("%w: expected an empty token after the AP-REP, got %d bytes", ErrGSSAPI, len(token))
		}
		s.step = 2
		return s.offer()
	case 2:
		if err := s.choose(token); err != nil {
			return nil, err
		}
		s.step = 3
		return nil, nil
	}
	return nil, fmt.Errorf("%w: GSSAPI exchange already complete", ErrGSSAPI)
}

// accept verifies the AP-REQ and builds the AP-REP if the client asked
// for mutual authentication.
func (s *GSSAPIServer) accept(token []byte) (rep []byte, mutual bool, err error) {
	var tok spnego.KRB5Token
	if err := tok.Unmarshal(token); err != nil {
		return nil, false, fmt.Errorf("%w: %v", ErrGSSAPI, err)
	}
	if !tok.IsAPReq() {
		return nil, false, fmt.Errorf("%w: first token is not an AP-REQ", ErrGSSAPI)
	}
	opts := []func(*service.Settings){service.DecodePAC(false)}
	if s.principal != "" {
		opts = append(opts, service.KeytabPrincipal(s.principal))
	}
	ok, creds, err := service.VerifyAPREQ(&tok.APReq, service.NewSettings(s.kt, opts...))
	if err != nil || !ok {
		return nil, false, fmt.Errorf("%w: AP-REQ rejected: %v", ErrGSSAPI, err)
	}
	s.user = creds.UserName() + "@" + creds.Domain()
	auth := tok.APReq.Authenticator
	sessionKey := tok.APReq.Ticket.DecryptedEncPart.Key
	s.key = sessionKey
	if auth.SubKey.KeyType != 0 {
		s.key = auth.SubKey
	}
	var seq [4]byte
	if _, err := rand.Read(seq[:]); err != nil {
		return nil, false, fmt.Errorf("%w: %v", ErrGSSAPI, err)
	}
	s.seq = uint64(binary.BigEndian.Uint32(seq[:]) & 0x3fffffff)
	if !types.IsFlagSet(&tok.APReq.APOptions, flags.APOptionMutualRequired) && !gssMutual(auth) {
		// Without an AP-REP the acceptor's sequence numbers start where
		// the initiator's do (RFC 4121 section 4.2.6.2; Java does so).
		s.seq = uint64(uint32(auth.SeqNumber))
		return nil, false, nil
	}
	rep, err = apRep(auth, sessionKey, s.seq)
	return rep, true, err
}

// gssMutual reports whether the authenticator's GSS checksum (RFC 4121
// section 4.1.1) carries GSS_C_MUTUAL_FLAG.
func gssMutual(a types.Authenticator) bool {
	c := a.Cksum.Checksum
	return a.Cksum.CksumType == 0x8003 && len(c) >= 24 && binary.LittleEndian.Uint32(c[20:24])&uint32(gssapi.ContextFlagMutual) != 0
}

// apRep builds the GSS token holding the KRB_AP_REP that proves the server
// could read the authenticator (RFC 4120 section 3.2.4).
func apRep(auth types.Authenticator, sessionKey types.EncryptionKey, seq uint64) ([]byte, error) {
	part := messages.EncAPRepPart{CTime: auth.CTime, Cusec: auth.Cusec, SequenceNumber: int64(seq)}
	b, err := asn1.Marshal(part)
	if err != nil {
		return nil, fmt.Errorf("%w: AP-REP: %v", ErrGSSAPI, err)
	}
	b = asn1tools.AddASNAppTag(b, asnAppTag.EncAPRepPart)
	enc, err := crypto.GetEncryptedData(b, sessionKey, keyusage.AP_REP_ENCPART, 0)
	if err != nil {
		return nil, fmt.Errorf("%w: AP-REP: %v", ErrGSSAPI, err)
	}
	rep := messages.APRep{PVNO: 5, MsgType: msgtype.KRB_AP_REP, EncPart: enc}
	rb, err := asn1.Marshal(rep)
	if err != nil {
		return nil, fmt.Errorf("%w: AP-REP: %v", ErrGSSAPI, err)
	}
	rb = asn1tools.AddASNAppTag(rb, asnAppTag.APREP)
	oid, err := asn1.Marshal(gssapi.OIDKRB5.OID())
	if err != nil {
		return nil, fmt.Errorf("%w: AP-REP: %v", ErrGSSAPI, err)
	}
	inner := append(append(oid, tokAPRep[:]...), rb...)
	return asn1tools.AddASNAppTag(inner, 0), nil
}

// Security layers of RFC 4752 section 3.3.
const layerNone = 1

// offer wraps the server's security layer offer: no layer, and the
// largest message the client may send (none without a layer).
func (s *GSSAPIServer) offer() ([]byte, error) {
	wt := &gssapi.WrapToken{
		Flags:     0x01, // sent by acceptor; not sealed; no acceptor subkey
		EC:        uint16(checksumLen(s.key)),
		SndSeqNum: s.seq,
		Payload:   []byte{layerNone, 0, 0, 0},
	}
	if err := wt.SetCheckSum(s.key, keyusage.GSSAPI_ACCEPTOR_SEAL); err != nil {
		return nil, fmt.Errorf("%w: wrap: %v", ErrGSSAPI, err)
	}
	b, err := wt.Marshal()
	if err != nil {
		return nil, fmt.Errorf("%w: wrap: %v", ErrGSSAPI, err)
	}
	return b, nil
}

func checksumLen(key types.EncryptionKey) int {
	et, err := crypto.GetEtype(key.KeyType)
	if err != nil {
		return 12
	}
	return et.GetHMACBitLength() / 8
}

// choose verifies the client's wrapped answer: the layer it chose (none)
// and its authorization id.
func (s *GSSAPIServer) choose(token []byte) error {
	var wt gssapi.WrapToken
	if err := wt.Unmarshal(token, false); err != nil {
		return fmt.Errorf("%w: wrap token: %v", ErrGSSAPI, err)
	}
	if ok, err := wt.Verify(s.key, keyusage.GSSAPI_INITIATOR_SEAL); !ok {
		return fmt.Errorf("%w: wrap token checksum: %v", ErrGSSAPI, err)
	}
	if len(wt.Payload) < 4 || wt.Payload[0] != layerNone {
		return fmt.Errorf("%w: client chose an unoffered security layer", ErrGSSAPI)
	}
	s.authz = string(wt.Payload[4:])
	return nil
}
