package auth

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/pem"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zoohq/zoo/internal/auth/authtest"
)

var (
	oidEmail = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 1}
	oidDC    = asn1.ObjectIdentifier{0, 9, 2342, 19200300, 100, 1, 25}
	oidCN    = asn1.ObjectIdentifier{2, 5, 4, 3}
)

// subjects are names whose RFC 2253 form Java and Go's pkix.Name.String
// render differently, with Java's rendering.
var subjects = []struct {
	name pkix.Name
	want string
}{
	{pkix.Name{CommonName: "client", Organization: []string{"Zoo"}, Country: []string{"NL"}},
		"CN=client,O=Zoo,C=NL"},
	{pkix.Name{CommonName: "a,b+c=d;e<f>g#h\"i\\j"},
		`CN=a\,b\+c\=d\;e\<f\>g\#h\"i\\j`},
	{pkix.Name{CommonName: " padded ", OrganizationalUnit: []string{"#first"}},
		`CN=\ padded\ ,OU=\#first`},
	{pkix.Name{CommonName: "ünïcode ✓", SerialNumber: "42"},
		"2.5.4.5=#13023432,CN=ünïcode ✓"},
	{pkix.Name{ExtraNames: []pkix.AttributeTypeAndValue{
		{Type: oidDC, Value: "org"}, {Type: oidDC, Value: "example"},
		{Type: oidEmail, Value: "ops@example.org"}, {Type: oidCN, Value: "ops"}}},
		"CN=ops,1.2.840.113549.1.9.1=#0c0f6f7073406578616d706c652e6f7267,DC=example,DC=org"},
}

// TestX509IDMatchesApache: the x509 id of a certificate is what Apache's
// X509AuthenticationProvider makes of it (X500Principal.getName()). With
// a JDK present, Java itself renders every subject too.
// Ref: X509AuthenticationProvider.getClientId; RFC 2253 section 2.
func TestX509IDMatchesApache(t *testing.T) {
	ca := authtest.NewCA(t, "ca")
	var certs []*x509.Certificate
	for _, s := range subjects {
		c := ca.Issue(t, authtest.Options{Subject: s.name}).Cert
		certs = append(certs, c)
		got, err := X509ID(c)
		if err != nil {
			t.Fatal(err)
		}
		if got != s.want {
			t.Errorf("X509ID = %q, want %q", got, s.want)
		}
	}
	java, err := exec.LookPath("java")
	if err != nil {
		t.Log("no JDK: the expected names are not checked against Java")
		return
	}
	dir := t.TempDir()
	var paths []string
	for i, c := range certs {
		paths = append(paths, authtest.WriteFile(t, dir, "c"+string(rune('0'+i))+".pem",
			pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})))
	}
	src := filepath.Join(dir, "Names.java")
	if err := os.WriteFile(src, []byte(javaNames), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(java, append([]string{"-Dfile.encoding=UTF-8", "-Dstdout.encoding=UTF-8", src}, paths...)...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("java: %v", err)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	for i, c := range certs {
		got, _ := X509ID(c)
		if i >= len(lines) || lines[i] != got {
			t.Errorf("subject %d: Java says %q, Zoo %q", i, lines[min(i, len(lines)-1)], got)
		}
	}
}

const javaNames = `
import java.io.FileInputStream;
import java.io.PrintStream;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;

public class Names {
    public static void main(String[] args) throws Exception {
        PrintStream out = new PrintStream(System.out, true, "UTF-8");
        CertificateFactory cf = CertificateFactory.getInstance("X.509");
        for (String a : args) {
            try (FileInputStream in = new FileInputStream(a)) {
                X509Certificate c = (X509Certificate) cf.generateCertificate(in);
                out.println(c.getSubjectX500Principal().getName());
            }
        }
    }
}
`

// TestX509IDMalformed: a subject that is not a Name is an error.
func TestX509IDMalformed(t *testing.T) {
	for _, der := range [][]byte{nil, {0x30, 0x05, 0x31}, {0x04, 0x00}} {
		if _, err := rfc2253(der); err == nil {
			t.Errorf("% x: no error", der)
		}
	}
}

// FuzzX509ID: any subject bytes give a name or an error, never a panic.
func FuzzX509ID(f *testing.F) {
	f.Add([]byte{0x30, 0x00})
	ca := authtest.NewCA(f, "ca")
	for _, s := range subjects {
		f.Add(ca.Issue(f, authtest.Options{Subject: s.name}).Cert.RawSubject)
	}
	f.Fuzz(func(t *testing.T, der []byte) {
		_, _ = rfc2253(der)
	})
}
