package serve

import (
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	certutil "k8s.io/client-go/util/cert"
)

// servingCert is the TLS certificate serve presents: a certificate and key
// from files, read again when either file changes (cert-manager renews a
// mounted Secret in place), or, without files, a self-signed one made at
// start, as controller-runtime's metrics server does.
type servingCert struct {
	certFile, keyFile string

	mu      sync.Mutex
	current *tls.Certificate
	stamp   [2]fileStamp // of certFile and keyFile when current was read
}

type fileStamp struct {
	size    int64
	modTime time.Time
}

// newServingCert reads certFile and keyFile, or makes a self-signed
// certificate when both are "".
func newServingCert(certFile, keyFile string) (*servingCert, error) {
	if (certFile == "") != (keyFile == "") {
		return nil, errors.New("a TLS certificate needs both its certificate and its key file")
	}
	c := &servingCert{certFile: certFile, keyFile: keyFile}
	if certFile == "" {
		certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey("localhost", nil, nil)
		if err != nil {
			return nil, fmt.Errorf("making a self-signed certificate: %w", err)
		}
		cert, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			return nil, fmt.Errorf("reading the self-signed certificate: %w", err)
		}
		c.current = &cert
		return c, nil
	}
	if err := c.reload(); err != nil {
		return nil, err
	}
	return c, nil
}

// SelfSigned reports whether the certificate was made at start.
func (c *servingCert) SelfSigned() bool { return c.certFile == "" }

// get is tls.Config.GetCertificate: the files' certificate, read again when
// they changed; a pair that does not load (a renewal half written) keeps
// the previous one until the next handshake.
func (c *servingCert) get(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.certFile != "" {
		_ = c.reloadLocked()
	}
	return c.current, nil
}

func (c *servingCert) reload() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reloadLocked()
}

func (c *servingCert) reloadLocked() error {
	var now [2]fileStamp
	for i, f := range []string{c.certFile, c.keyFile} {
		st, err := os.Stat(f)
		if err != nil {
			return fmt.Errorf("TLS file: %w", err)
		}
		now[i] = fileStamp{size: st.Size(), modTime: st.ModTime()}
	}
	if c.current != nil && now == c.stamp {
		return nil
	}
	cert, err := tls.LoadX509KeyPair(c.certFile, c.keyFile)
	if err != nil {
		return fmt.Errorf("loading the TLS certificate %s and key %s: %w", c.certFile, c.keyFile, err)
	}
	c.current, c.stamp = &cert, now
	return nil
}

// tlsConfig serves HTTP/1.1 only: HTTP/2's streams would multiply what one
// connection may ask at once, past the connection bound (controller-runtime
// turns it off on its metrics server for the same reason).
func (c *servingCert) tlsConfig() *tls.Config {
	return &tls.Config{
		MinVersion:     tls.VersionTLS12,
		GetCertificate: c.get,
		NextProtos:     []string{"http/1.1"},
	}
}
