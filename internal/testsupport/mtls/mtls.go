// Package mtls makes what a test of mutual TLS needs: a CA of clients and
// a client certificate it signed, and a TLS config of a server that
// requires one.
package mtls

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Client is a client certificate, its key and the CA that signed it.
type Client struct {
	// CertFile and KeyFile hold the certificate and its key in PEM, in a
	// temporary directory of the test.
	CertFile, KeyFile string
	// Cert is the certificate with its key, for the test's own clients.
	Cert tls.Certificate
	// CAs trusts the CA that signed it, as a server of clients.
	CAs *x509.CertPool
}

// ServerConfig is a server's TLS config that requires a client
// certificate signed by c's CA (httptest's StartTLS adds its own).
func (c Client) ServerConfig() *tls.Config {
	return &tls.Config{ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: c.CAs}
}

// NewClient makes a CA and a client certificate of commonName signed by it.
func NewClient(t testing.TB, commonName string) Client {
	t.Helper()
	caKey, caDER := certificate(t, &x509.Certificate{
		Subject: pkix.Name{CommonName: "test clients' CA"}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign,
	}, nil, nil)
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	key, der := certificate(t, &x509.Certificate{
		Subject: pkix.Name{CommonName: commonName}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}, ca, caKey)
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	c := Client{CertFile: filepath.Join(dir, "client.crt"), KeyFile: filepath.Join(dir, "client.key"), CAs: x509.NewCertPool()}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})
	if err := os.WriteFile(c.CertFile, certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(c.KeyFile, keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if c.Cert, err = tls.X509KeyPair(certPEM, keyPEM); err != nil {
		t.Fatal(err)
	}
	c.CAs.AddCert(ca)
	return c
}

// certificate signs tmpl with parentKey as parent (itself when nil),
// valid for an hour around now, with a new key.
func certificate(t testing.TB, tmpl, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*ecdsa.PrivateKey, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	if err != nil {
		t.Fatal(err)
	}
	tmpl.SerialNumber = serial
	tmpl.NotBefore = time.Now().Add(-time.Hour)
	tmpl.NotAfter = time.Now().Add(time.Hour)
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	return key, der
}
