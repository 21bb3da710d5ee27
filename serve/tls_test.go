package serve

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	certutil "k8s.io/client-go/util/cert"
)

// writePair writes a fresh self-signed certificate and key for host into
// dir and returns the certificate's DER bytes.
func writePair(t *testing.T, dir, host string, modTime time.Time) []byte {
	t.Helper()
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey(host, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"tls.crt": certPEM, "tls.key": keyPEM} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		// Distinct times: two writes within the file system's clock tick
		// must still read as a change.
		if err := os.Chtimes(p, modTime, modTime); err != nil {
			t.Fatal(err)
		}
	}
	certs, err := certutil.ParseCertsPEM(certPEM)
	if err != nil {
		t.Fatal(err)
	}
	return certs[0].Raw
}

// A renewed certificate is served from the next handshake on, without a
// restart; a pair half written keeps the previous certificate.
func TestServingCertReloads(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	t0 := time.Now().Add(-time.Hour)
	first := writePair(t, dir, "first.example", t0)
	c, err := newServingCert(filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key"))
	if err != nil {
		t.Fatal(err)
	}
	served := func() []byte {
		cert, err := c.get(nil)
		if err != nil || cert == nil {
			t.Fatalf("get: %v", err)
		}
		return cert.Certificate[0]
	}
	if !bytes.Equal(served(), first) {
		t.Fatal("not the certificate of the files")
	}
	second := writePair(t, dir, "second.example", t0.Add(time.Minute))
	if !bytes.Equal(served(), second) {
		t.Fatal("the renewed certificate is not served")
	}
	if err := os.WriteFile(filepath.Join(dir, "tls.key"), []byte("half written"), 0o600); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(served(), second) {
		t.Fatal("a broken key replaced the served certificate")
	}
}

func TestServingCertSelfSignedAndErrors(t *testing.T) {
	t.Parallel()
	c, err := newServingCert("", "")
	if err != nil || !c.SelfSigned() {
		t.Fatalf("self-signed: %v", err)
	}
	if cert, _ := c.get(nil); cert == nil || len(cert.Certificate) == 0 {
		t.Fatal("no self-signed certificate")
	}
	if _, err := newServingCert("tls.crt", ""); err == nil {
		t.Error("a certificate without its key accepted")
	}
	if _, err := newServingCert(filepath.Join(t.TempDir(), "missing.crt"), filepath.Join(t.TempDir(), "missing.key")); err == nil {
		t.Error("missing files accepted")
	}
}
