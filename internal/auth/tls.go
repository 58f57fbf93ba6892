package auth

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ErrSetting: an ssl.* value Zoo cannot use. It comes wrapped in a
// *SettingError naming the key.
var ErrSetting = errors.New("auth: invalid TLS setting")

// SettingError is a problem with one setting, named as in zoo.cfg
// ("ssl.clientAuth"), so the caller can point at the line that set it.
type SettingError struct {
	Key string
	Err error
}

func (e *SettingError) Error() string { return e.Key + ": " + e.Err.Error() }
func (e *SettingError) Unwrap() error { return e.Err }

// DefaultHandshakeTimeout is Apache's
// X509Util.DEFAULT_HANDSHAKE_DETECTION_TIMEOUT_MILLIS.
const DefaultHandshakeTimeout = 5 * time.Second

// Store names a key or trust store file.
type Store struct {
	Path     string // "" for none
	Password string
	Type     StoreType
}

// TLS is one side's TLS settings (Apache's ssl.* for the client port,
// ssl.quorum.* between servers), parsed.
type TLS struct {
	// Prefix is where the settings came from ("ssl."), for messages.
	Prefix     string
	KeyStore   Store
	TrustStore Store // no path: the system's roots, as Java's default
	// MinVersion and MaxVersion are the enabled protocols
	// (ssl.protocol, ssl.enabledProtocols).
	MinVersion, MaxVersion uint16
	// CipherSuites are the TLS 1.2-and-older suites of ssl.ciphersuites;
	// nil means Go's defaults. TLS 1.3 suites cannot be chosen in Go.
	CipherSuites []uint16
	ClientAuth   tls.ClientAuthType
	// HostnameVerification makes a client check that the server's
	// certificate names the host it dialled (default true).
	HostnameVerification bool
	// HandshakeTimeout bounds a server's wait for a TLS handshake
	// (ssl.handshakeDetectionTimeoutMillis).
	HandshakeTimeout time.Duration
	// Revocation, when not nil, checks the peer's chain for revoked
	// certificates (ssl.crl, ssl.ocsp; see revocation.go).
	Revocation *Revocation
}

// Java system properties that turn on revocation checking for every TLS
// context of the JVM (set with -D in SERVER_JVMFLAGS): Zoo applies them to
// the client port and the quorum alike.
const (
	PropCheckRevocation = "com.sun.net.ssl.checkRevocation"
	PropOCSPEnable      = "ocsp.enable"
)

// ParseTLS reads the settings under prefix ("ssl." or "ssl.quorum.") from
// get, which returns a setting's value and whether it is set, as Apache's
// X509Util reads them. Store types are inferred from file names when
// unset. Passwords in passwordPath files are read here.
func ParseTLS(get func(key string) (string, bool), prefix string) (TLS, error) {
	p := tlsParser{get: get, prefix: prefix}
	t := TLS{
		Prefix:               prefix,
		KeyStore:             p.store("keyStore"),
		TrustStore:           p.store("trustStore"),
		ClientAuth:           p.clientAuth(),
		HostnameVerification: p.boolean("hostnameVerification", true),
		HandshakeTimeout:     p.handshakeTimeout(),
	}
	t.Revocation = p.revocation()
	t.MinVersion, t.MaxVersion = p.protocols()
	t.CipherSuites, t.MinVersion = p.ciphers(t.MinVersion, t.MaxVersion)
	return t, errors.Join(p.errs...)
}

type tlsParser struct {
	get    func(string) (string, bool)
	prefix string
	errs   []error
}

func (p *tlsParser) value(name string) (string, bool) { return p.get(p.prefix + name) }

func (p *tlsParser) fail(name string, format string, args ...any) {
	p.errs = append(p.errs, &SettingError{Key: p.prefix + name, Err: fmt.Errorf("%w: "+format, append([]any{ErrSetting}, args...)...)})
}

func (p *tlsParser) store(kind string) Store {
	path, _ := p.value(kind + ".location")
	if path == "" {
		return Store{}
	}
	s := Store{Path: path}
	s.Password, _ = p.value(kind + ".password")
	if file, _ := p.value(kind + ".passwordPath"); file != "" {
		secret, err := readSecret(file)
		if err != nil {
			p.fail(kind+".passwordPath", "%v", err)
		}
		s.Password = secret
	}
	typ, _ := p.value(kind + ".type")
	t, err := StoreTypeOf(typ, path)
	if err != nil {
		key := kind + ".type"
		if typ == "" {
			key = kind + ".location"
		}
		p.errs = append(p.errs, &SettingError{Key: p.prefix + key, Err: err})
	}
	s.Type = t
	return s
}

// readSecret reads a password file as Apache's SecretUtils.readSecret
// does: the whole file, less one trailing line separator.
func readSecret(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(string(b), "\n"), nil
}

// revocation reads ssl.crl and ssl.ocsp as X509Util does: either turns
// on revocation checking, ocsp also asks OCSP responders first. The JVM's
// own com.sun.net.ssl.checkRevocation and ocsp.enable do the same.
func (p *tlsParser) revocation() *Revocation {
	crl := p.boolean("crl", false)
	ocspOn := p.boolean("ocsp", false)
	if v, ok := p.get(PropCheckRevocation); ok && strings.EqualFold(v, "true") {
		crl = true
	}
	if v, ok := p.get(PropOCSPEnable); ok && strings.EqualFold(v, "true") {
		ocspOn = true
	}
	if !crl && !ocspOn {
		return nil
	}
	return NewRevocation(ocspOn)
}

// clientAuth is Apache's X509Util.ClientAuth: empty means NEED.
func (p *tlsParser) clientAuth() tls.ClientAuthType {
	v, _ := p.value("clientAuth")
	switch strings.ToUpper(v) {
	case "", "NEED":
		return tls.RequireAndVerifyClientCert
	case "WANT":
		return tls.VerifyClientCertIfGiven
	case "NONE":
		return tls.NoClientCert
	}
	p.fail("clientAuth", "%q (want none, want or need)", v)
	return tls.RequireAndVerifyClientCert
}

func (p *tlsParser) boolean(name string, def bool) bool {
	v, ok := p.value(name)
	if !ok {
		return def
	}
	switch strings.ToLower(v) {
	case "true":
		return true
	case "false":
		return false
	}
	p.fail(name, "%q (want true or false)", v)
	return def
}

// handshakeTimeout reads ssl.handshakeDetectionTimeoutMillis; a value
// below 1 means the default, as in Apache.
func (p *tlsParser) handshakeTimeout() time.Duration {
	v, ok := p.value("handshakeDetectionTimeoutMillis")
	if !ok {
		return DefaultHandshakeTimeout
	}
	ms, err := strconv.ParseInt(v, 10, 32)
	if err != nil {
		p.fail("handshakeDetectionTimeoutMillis", "%q is not an integer", v)
		return DefaultHandshakeTimeout
	}
	if ms < 1 {
		return DefaultHandshakeTimeout
	}
	return time.Duration(ms) * time.Millisecond
}

var protocolVersions = map[string]uint16{
	"TLSv1": tls.VersionTLS10, "TLSv1.1": tls.VersionTLS11, "TLSv1.2": tls.VersionTLS12, "TLSv1.3": tls.VersionTLS13,
}

// protocols reads ssl.protocol and ssl.enabledProtocols. Without
// enabledProtocols Java enables what the context's protocol enables by
// default: TLSv1.3 (Apache's default) gives TLSv1.3 and TLSv1.2, TLSv1.2
// gives only TLSv1.2. Go enables a range of versions, so a list with a gap
// is an error.
func (p *tlsParser) protocols() (min, max uint16) {
	min, max = tls.VersionTLS12, tls.VersionTLS13
	proto, _ := p.value("protocol")
	switch proto {
	case "", "TLS", "TLSv1.3":
	default:
		v, ok := protocolVersions[proto]
		if !ok {
			p.fail("protocol", "%q (want TLSv1.2 or TLSv1.3)", proto)
			break
		}
		min, max = v, v
	}
	list, ok := p.value("enabledProtocols")
	if !ok {
		return min, max
	}
	var vs []uint16
	for _, name := range strings.Split(list, ",") {
		v, ok := protocolVersions[name]
		if !ok {
			p.fail("enabledProtocols", "unknown protocol %q (want TLSv1.2 or TLSv1.3)", name)
			return min, max
		}
		vs = append(vs, v)
	}
	slices.Sort(vs)
	vs = slices.Compact(vs)
	if int(vs[len(vs)-1]-vs[0]) != len(vs)-1 {
		p.fail("enabledProtocols", "%q leaves a gap between versions, which Go cannot do", list)
	}
	return vs[0], vs[len(vs)-1]
}

// ciphers maps ssl.ciphersuites, Java's names (the IANA names Go uses
// too; Java's legacy SSL_ prefix is read as TLS_), to Go's suites. TLS 1.3
// suites are always on in Go; a list of only TLS 1.3 suites therefore
// turns TLS 1.2 off, as it would in Java.
func (p *tlsParser) ciphers(min, max uint16) ([]uint16, uint16) {
	list, ok := p.value("ciphersuites")
	if !ok {
		return nil, min
	}
	byName := map[string]*tls.CipherSuite{}
	for _, s := range append(tls.CipherSuites(), tls.InsecureCipherSuites()...) {
		byName[s.Name] = s
	}
	var ids []uint16
	tls13 := false
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		s, ok := byName[name]
		if !ok {
			s, ok = byName["TLS_"+strings.TrimPrefix(name, "SSL_")]
		}
		if !ok {
			p.fail("ciphersuites", "unknown cipher suite %q", name)
			continue
		}
		if slices.Equal(s.SupportedVersions, []uint16{tls.VersionTLS13}) {
			tls13 = true
			continue
		}
		ids = append(ids, s.ID)
	}
	if len(ids) == 0 && tls13 {
		if max < tls.VersionTLS13 {
			p.fail("ciphersuites", "only TLS 1.3 suites, but TLS 1.3 is not enabled")
		}
		return nil, tls.VersionTLS13
	}
	return ids, min
}

// base is the part of a tls.Config both sides share.
func (t TLS) base() *tls.Config {
	return &tls.Config{MinVersion: t.MinVersion, MaxVersion: t.MaxVersion, CipherSuites: t.CipherSuites}
}

// ServerConfig loads the stores and returns the configuration of a server
// that authenticates its clients as ClientAuth says. A server needs a key
// store. Without a trust store, client certificates are checked against
// the system's roots, as Java checks them against its default trust store.
func (t TLS) ServerConfig() (*tls.Config, error) {
	if t.KeyStore.Path == "" {
		return nil, &SettingError{Key: t.Prefix + "keyStore.location", Err: fmt.Errorf("%w: a TLS server needs a key store", ErrSetting)}
	}
	cert, err := LoadKeyStore(t.KeyStore.Path, t.KeyStore.Password, t.KeyStore.Type)
	if err != nil {
		return nil, &SettingError{Key: t.Prefix + "keyStore.location", Err: err}
	}
	c := t.base()
	c.Certificates = []tls.Certificate{cert}
	c.ClientAuth = t.ClientAuth
	if t.Revocation != nil {
		c.VerifyPeerCertificate = t.Revocation.VerifyPeerCertificate
	}
	if t.TrustStore.Path != "" {
		if c.ClientCAs, err = LoadTrustStore(t.TrustStore.Path, t.TrustStore.Password, t.TrustStore.Type); err != nil {
			return nil, &SettingError{Key: t.Prefix + "trustStore.location", Err: err}
		}
	}
	return c, nil
}

// ClientConfig loads the stores and returns the configuration of a client
// dialling serverName. The key store is optional (a server whose
// clientAuth is need requires one). With HostnameVerification false the
// server's chain is still verified, only not its name.
func (t TLS) ClientConfig(serverName string) (*tls.Config, error) {
	c := t.base()
	c.ServerName = serverName
	if t.KeyStore.Path != "" {
		cert, err := LoadKeyStore(t.KeyStore.Path, t.KeyStore.Password, t.KeyStore.Type)
		if err != nil {
			return nil, err
		}
		c.Certificates = []tls.Certificate{cert}
	}
	if t.TrustStore.Path != "" {
		roots, err := LoadTrustStore(t.TrustStore.Path, t.TrustStore.Password, t.TrustStore.Type)
		if err != nil {
			return nil, err
		}
		c.RootCAs = roots
	}
	if !t.HostnameVerification {
		c.InsecureSkipVerify = true // replaced by the chain check below
		c.VerifyConnection = verifyChainOnly(c.RootCAs, t.Revocation)
	} else if t.Revocation != nil {
		c.VerifyPeerCertificate = t.Revocation.VerifyPeerCertificate
	}
	return c, nil
}

// verifyChainOnly checks the server's chain against roots (and rev, if
// not nil) without checking its name.
func verifyChainOnly(roots *x509.CertPool, rev *Revocation) func(tls.ConnectionState) error {
	return func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			return errors.New("auth: server sent no certificate")
		}
		opts := x509.VerifyOptions{Roots: roots, Intermediates: x509.NewCertPool()}
		for _, c := range cs.PeerCertificates[1:] {
			opts.Intermediates.AddCert(c)
		}
		chains, err := cs.PeerCertificates[0].Verify(opts)
		if err != nil || rev == nil {
			return err
		}
		return rev.Check(chains)
	}
}
