package auth

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/ocsp"
)

// Revocation checking (ssl.crl, ssl.ocsp and their ssl.quorum. forms).
//
// Apache's X509Util turns either setting into Java's PKIX revocation
// checking: setRevocationEnabled(true) with com.sun.security.enableCRLDP,
// so every certificate of the peer's chain but the trust anchor must be
// shown not revoked by a CRL fetched from its CRL distribution points; with
// ssl.ocsp also ocsp.enable, so the certificate's OCSP responder (its
// authority information access) is asked first and the CRL is the
// fallback. A certificate whose status cannot be found out fails, as in
// Java (hard fail): a responder that is down refuses connections, it never
// lets a revoked certificate through. Zoo does the same here: CRLs come
// from the http:// and file:// distribution points (Java's LDAP ones are
// not fetched, so a certificate naming only LDAP fails), OCSP over HTTP
// POST. Java's trust stores hold no CRLs, so none are read from them.

// Errors of revocation checking. Test for them with errors.Is.
var (
	// ErrRevoked: a certificate of the peer's chain is revoked.
	ErrRevoked = errors.New("auth: certificate revoked")
	// ErrRevocationUnknown: no CRL or OCSP responder could tell whether a
	// certificate of the peer's chain is revoked; it is refused.
	ErrRevocationUnknown = errors.New("auth: certificate revocation status unknown")
)

const (
	// revocationCacheFor is how long a fetched CRL or OCSP answer is used
	// before it is fetched again: Java's URICertStore checks a CRL's URL
	// at most every 30 seconds. A CRL or response is never used past its
	// nextUpdate.
	revocationCacheFor = 30 * time.Second
	// revocationFetchLimit bounds one CRL or OCSP request, so a slow
	// responder delays a handshake but cannot hold it past its deadline.
	revocationFetchLimit = 5 * time.Second
	// maxCRLBytes and maxOCSPBytes bound what a fetch reads.
	maxCRLBytes  = 32 << 20
	maxOCSPBytes = 1 << 20
)

// Revocation checks peers' certificate chains for revoked certificates.
// It is safe for concurrent use and caches what it fetches, so a burst of
// handshakes fetches each CRL once.
type Revocation struct {
	// OCSP asks a certificate's OCSP responder before its CRLs.
	OCSP bool

	client *http.Client
	now    func() time.Time

	mu    sync.Mutex
	cache map[string]*fetched
}

// fetched is one cached (or in-flight) CRL or OCSP answer.
type fetched struct {
	done    chan struct{} // closed when val and err are set
	val     any           // *x509.RevocationList or *ocsp.Response
	err     error
	expires time.Time
}

// NewRevocation returns a checker; ocspFirst is ssl.ocsp.
func NewRevocation(ocspFirst bool) *Revocation {
	return &Revocation{
		OCSP:   ocspFirst,
		client: &http.Client{Timeout: revocationFetchLimit},
		now:    time.Now,
		cache:  map[string]*fetched{},
	}
}

// VerifyPeerCertificate is a tls.Config.VerifyPeerCertificate that checks
// the chains crypto/tls verified.
func (r *Revocation) VerifyPeerCertificate(_ [][]byte, chains [][]*x509.Certificate) error {
	return r.Check(chains)
}

// Check returns nil if one of the verified chains has no revoked
// certificate and the status of each of its certificates is known. With
// no chain (no certificate was asked for or given) there is nothing to
// check.
func (r *Revocation) Check(chains [][]*x509.Certificate) error {
	var first error
	for _, chain := range chains {
		err := r.checkChain(chain)
		if err == nil {
			return nil
		}
		if first == nil {
			first = err
		}
	}
	return first
}

// checkChain checks every certificate of chain against its issuer, the
// next one; the last, the trust anchor, is trusted as it is.
func (r *Revocation) checkChain(chain []*x509.Certificate) error {
	for i := 0; i+1 < len(chain); i++ {
		if err := r.checkCert(chain[i], chain[i+1]); err != nil {
			return err
		}
	}
	return nil
}

// checkCert finds cert's status: OCSP first if enabled, then its CRLs.
func (r *Revocation) checkCert(cert, issuer *x509.Certificate) error {
	var tried []string
	if r.OCSP {
		for _, u := range cert.OCSPServer {
			resp, err := r.ocsp(u, cert, issuer)
			if err != nil {
				tried = append(tried, fmt.Sprintf("OCSP %s: %v", u, err))
				continue
			}
			switch resp.Status {
			case ocsp.Good:
				return nil
			case ocsp.Revoked:
				return revoked(cert, "OCSP "+u, resp.RevokedAt)
			}
			tried = append(tried, fmt.Sprintf("OCSP %s: status unknown", u))
		}
	}
	for _, u := range cert.CRLDistributionPoints {
		list, err := r.crl(u, issuer)
		if err != nil {
			tried = append(tried, fmt.Sprintf("CRL %s: %v", u, err))
			continue
		}
		for _, e := range list.RevokedCertificateEntries {
			if e.SerialNumber.Cmp(cert.SerialNumber) == 0 {
				return revoked(cert, "CRL "+u, e.RevocationTime)
			}
		}
		return nil
	}
	if len(tried) == 0 {
		tried = append(tried, "the certificate names no CRL distribution point (http or file)")
		if r.OCSP {
			tried[0] += " and no OCSP responder"
		}
	}
	return fmt.Errorf("%w: %q (serial %s): %s", ErrRevocationUnknown, cert.Subject.String(), cert.SerialNumber, strings.Join(tried, "; "))
}

func revoked(cert *x509.Certificate, by string, at time.Time) error {
	return fmt.Errorf("%w: %q (serial %s) revoked at %s, says %s", ErrRevoked,
		cert.Subject.String(), cert.SerialNumber, at.UTC().Format(time.RFC3339), by)
}

// crl returns the CRL at u, signed by issuer and current.
func (r *Revocation) crl(u string, issuer *x509.Certificate) (*x509.RevocationList, error) {
	v, err := r.cached("crl "+u, func() (any, time.Time, error) {
		body, err := r.get(u)
		if err != nil {
			return nil, time.Time{}, err
		}
		list, err := parseCRL(body)
		if err != nil {
			return nil, time.Time{}, err
		}
		return list, list.NextUpdate, nil
	})
	if err != nil {
		return nil, err
	}
	list := v.(*x509.RevocationList)
	return list, checkCRL(list, issuer, r.now())
}

// parseCRL reads a CRL as a distribution point serves it: DER, or PEM.
func parseCRL(body []byte) (*x509.RevocationList, error) {
	if block := pemCRL(body); block != nil {
		body = block
	}
	return x509.ParseRevocationList(body)
}

// checkCRL says whether list may be used for issuer's certificates at
// now: signed by issuer, and not past its next update.
func checkCRL(list *x509.RevocationList, issuer *x509.Certificate, now time.Time) error {
	if err := list.CheckSignatureFrom(issuer); err != nil {
		return fmt.Errorf("not signed by the certificate's issuer %q: %w", issuer.Subject.String(), err)
	}
	if !list.NextUpdate.IsZero() && now.After(list.NextUpdate) {
		return fmt.Errorf("out of date (next update was due %s)", list.NextUpdate.UTC().Format(time.RFC3339))
	}
	return nil
}

// pemCRL returns the DER of a PEM "X509 CRL" file, or nil.
func pemCRL(b []byte) []byte {
	if !bytes.HasPrefix(bytes.TrimSpace(b), []byte("-----BEGIN")) {
		return nil
	}
	for {
		var block *pem.Block
		block, b = pem.Decode(b)
		if block == nil {
			return nil
		}
		if block.Type == "X509 CRL" {
			return block.Bytes
		}
	}
}

// ocsp asks the responder at u for cert's status.
func (r *Revocation) ocsp(u string, cert, issuer *x509.Certificate) (*ocsp.Response, error) {
	v, err := r.cached("ocsp "+u+" "+issuer.SerialNumber.String()+" "+cert.SerialNumber.String(), func() (any, time.Time, error) {
		req, err := ocsp.CreateRequest(cert, issuer, nil)
		if err != nil {
			return nil, time.Time{}, err
		}
		body, err := r.post(u, req)
		if err != nil {
			return nil, time.Time{}, err
		}
		resp, err := ocsp.ParseResponseForCert(body, cert, issuer)
		if err != nil {
			return nil, time.Time{}, err
		}
		return resp, resp.NextUpdate, nil
	})
	if err != nil {
		return nil, err
	}
	resp := v.(*ocsp.Response)
	if !resp.NextUpdate.IsZero() && r.now().After(resp.NextUpdate) {
		return nil, fmt.Errorf("answer out of date (next update was due %s)", resp.NextUpdate.UTC().Format(time.RFC3339))
	}
	return resp, nil
}

// cached returns the value under key, fetching it if it is missing or
// expired. Concurrent callers share one fetch. Failures are not kept.
func (r *Revocation) cached(key string, fetch func() (any, time.Time, error)) (any, error) {
	r.mu.Lock()
	f, ok := r.cache[key]
	if ok {
		select {
		case <-f.done:
			if f.err != nil || r.now().After(f.expires) {
				ok = false
			}
		default: // in flight: wait for it
		}
	}
	if !ok {
		f = &fetched{done: make(chan struct{})}
		r.cache[key] = f
		r.mu.Unlock()
		val, next, err := fetch()
		expires := r.now().Add(revocationCacheFor)
		if !next.IsZero() && next.Before(expires) {
			expires = next
		}
		f.val, f.err, f.expires = val, err, expires
		close(f.done)
		if err != nil {
			r.mu.Lock()
			if r.cache[key] == f {
				delete(r.cache, key)
			}
			r.mu.Unlock()
		}
		return val, err
	}
	r.mu.Unlock()
	<-f.done
	return f.val, f.err
}

// get reads a CRL distribution point: http:// or file://.
func (r *Revocation) get(u string) ([]byte, error) {
	p, err := url.Parse(u)
	if err != nil {
		return nil, err
	}
	switch p.Scheme {
	case "file":
		f, err := os.Open(p.Path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return readLimited(f, maxCRLBytes)
	case "http":
		ctx, cancel := context.WithTimeout(context.Background(), revocationFetchLimit)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return nil, err
		}
		return r.do(req, maxCRLBytes)
	}
	return nil, fmt.Errorf("scheme %q is not fetched (only http and file)", p.Scheme)
}

// post sends an OCSP request (RFC 6960 appendix A.1).
func (r *Revocation) post(u string, body []byte) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), revocationFetchLimit)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/ocsp-request")
	req.Header.Set("Accept", "application/ocsp-response")
	return r.do(req, maxOCSPBytes)
}

func (r *Revocation) do(req *http.Request, limit int64) ([]byte, error) {
	resp, err := r.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %s", resp.Status)
	}
	return readLimited(resp.Body, limit)
}

func readLimited(rd io.Reader, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(rd, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("larger than %d bytes", limit)
	}
	return b, nil
}
