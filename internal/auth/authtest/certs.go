// Package authtest makes certificate authorities, certificates and key
// stores for tests.
package authtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/crypto/ocsp"
	"software.sslmate.com/src/go-pkcs12"
)

// CA is a certificate authority.
type CA struct {
	Cert *x509.Certificate
	Key  *ecdsa.PrivateKey
}

// Cert is an issued certificate with its key.
type Cert struct {
	Cert *x509.Certificate
	Key  *ecdsa.PrivateKey
	CA   *CA
}

var serial atomic.Int64

func nextSerial() *big.Int {
	return big.NewInt(time.Now().UnixNano() + serial.Add(1))
}

// NewCA makes a self-signed CA named cn.
func NewCA(t testing.TB, cn string) *CA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          nextSerial(),
		Subject:               pkix.Name{CommonName: cn, Organization: []string{"Zoo test"}},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &CA{Cert: cert, Key: key}
}

// Options shape an issued certificate.
type Options struct {
	Subject  pkix.Name
	NotAfter time.Time // zero: a day from now
	// Hosts are DNS names and IP addresses; "localhost" and 127.0.0.1
	// are always included.
	Hosts []string
	// CRLURLs are the certificate's CRL distribution points, OCSPURLs its
	// OCSP responders.
	CRLURLs, OCSPURLs []string
}

// Issue makes a certificate for client and server use signed by ca.
func (ca *CA) Issue(t testing.TB, o Options) *Cert {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if o.NotAfter.IsZero() {
		o.NotAfter = time.Now().Add(24 * time.Hour)
	}
	tmpl := &x509.Certificate{
		SerialNumber: nextSerial(),
		Subject:      o.Subject,
		NotBefore:    time.Now().Add(-48 * time.Hour),
		NotAfter:     o.NotAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},

		CRLDistributionPoints: o.CRLURLs,
		OCSPServer:            o.OCSPURLs,
	}
	for _, h := range o.Hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.Key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &Cert{Cert: cert, Key: key, CA: ca}
}

// TLS returns the certificate as a tls.Certificate.
func (c *Cert) TLS() tls.Certificate {
	return tls.Certificate{Certificate: [][]byte{c.Cert.Raw}, PrivateKey: c.Key, Leaf: c.Cert}
}

// Pool returns a pool holding only the CA.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.Cert)
	return p
}

// PEM returns the key (PKCS#8) and certificate in one PEM file, as
// Apache's PEM key stores hold them.
func (c *Cert) PEM(t testing.TB) []byte {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(c.Key)
	if err != nil {
		t.Fatal(err)
	}
	out := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
	return append(out, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Cert.Raw})...)
}

// PEM returns the CA's certificate in PEM.
func (ca *CA) PEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Cert.Raw})
}

// WriteFile writes data to name in dir and returns the path.
func WriteFile(t testing.TB, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// PKCS12 returns the key and certificate as a PKCS12 store (the modern
// encryption Java 17 writes).
func (c *Cert) PKCS12(t testing.TB, password string) []byte {
	t.Helper()
	b, err := pkcs12.Modern.Encode(c.Key, c.Cert, []*x509.Certificate{c.CA.Cert}, password)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Keytool returns the path of the JDK's keytool, or skips the test.
func Keytool(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("keytool")
	if err != nil {
		t.Skip("keytool (from the JDK) is not installed")
	}
	return p
}

// JKS converts the key and certificate into a JKS key store with keytool
// and returns its path. It skips the test without keytool.
func (c *Cert) JKS(t testing.TB, dir, name, password string) string {
	t.Helper()
	kt := Keytool(t)
	p12 := WriteFile(t, dir, name+".tmp.p12", c.PKCS12(t, password))
	out := filepath.Join(dir, name)
	run(t, kt, "-importkeystore", "-noprompt", "-srckeystore", p12, "-srcstoretype", "PKCS12",
		"-srcstorepass", password, "-destkeystore", out, "-deststoretype", "JKS", "-deststorepass", password,
		"-destkeypass", password)
	return out
}

// TrustStore writes the CA certificate into a trust store of storeType
// (JKS or PKCS12) with keytool and returns its path.
func (ca *CA) TrustStore(t testing.TB, dir, name, storeType, password string) string {
	t.Helper()
	kt := Keytool(t)
	pemPath := WriteFile(t, dir, name+".ca.pem", ca.PEM())
	out := filepath.Join(dir, name)
	run(t, kt, "-importcert", "-noprompt", "-alias", "ca", "-file", pemPath, "-keystore", out,
		"-storetype", storeType, "-storepass", password)
	return out
}

func run(t testing.TB, name string, args ...string) {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
}

// CRL returns a DER CRL of ca, current for an hour, listing revoked.
func (ca *CA) CRL(t testing.TB, revoked ...*Cert) []byte {
	t.Helper()
	tmpl := &x509.RevocationList{
		Number:     nextSerial(),
		ThisUpdate: time.Now().Add(-time.Minute),
		NextUpdate: time.Now().Add(time.Hour),
	}
	for _, c := range revoked {
		tmpl.RevokedCertificateEntries = append(tmpl.RevokedCertificateEntries, x509.RevocationListEntry{
			SerialNumber: c.Cert.SerialNumber, RevocationTime: time.Now().Add(-time.Minute),
		})
	}
	der, err := x509.CreateRevocationList(rand.Reader, tmpl, ca.Cert, ca.Key)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

// OCSPResponder answers OCSP requests for ca's certificates: revoked ones
// are revoked, every other serial is good. It counts the requests it got.
type OCSPResponder struct {
	CA       *CA
	revoked  map[string]bool
	Requests atomic.Int64
}

// NewOCSPResponder makes a responder for ca.
func (ca *CA) NewOCSPResponder(revoked ...*Cert) *OCSPResponder {
	r := &OCSPResponder{CA: ca, revoked: map[string]bool{}}
	for _, c := range revoked {
		r.revoked[c.Cert.SerialNumber.String()] = true
	}
	return r
}

// ServeHTTP answers one POSTed OCSP request, signed by the CA itself.
func (r *OCSPResponder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.Requests.Add(1)
	body, err := io.ReadAll(io.LimitReader(req.Body, 1<<16))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	q, err := ocsp.ParseRequest(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	tmpl := ocsp.Response{
		Status:       ocsp.Good,
		SerialNumber: q.SerialNumber,
		ThisUpdate:   time.Now().Add(-time.Minute),
		NextUpdate:   time.Now().Add(time.Hour),
	}
	if r.revoked[q.SerialNumber.String()] {
		tmpl.Status = ocsp.Revoked
		tmpl.RevokedAt = time.Now().Add(-time.Minute)
		tmpl.RevocationReason = ocsp.KeyCompromise
	}
	der, err := ocsp.CreateResponse(r.CA.Cert, r.CA.Cert, tmpl, r.CA.Key)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/ocsp-response")
	_, _ = w.Write(der)
}
