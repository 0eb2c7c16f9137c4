package tcp_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/transport/node"
	"github.com/gotensor/gotensor/gotensor/transport/remote"
	"github.com/gotensor/gotensor/gotensor/transport/tcp"
)

// selfSigned writes a certificate for 127.0.0.1 and its key; the
// certificate is its own CA.
func selfSigned(t *testing.T) (cert, key string) {
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "gotensor test node"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(k)
	dir := t.TempDir()
	cert, key = filepath.Join(dir, "node.pem"), filepath.Join(dir, "node.key")
	os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	return cert, key
}

func TestTLS(t *testing.T) {
	cert, key := selfSigned(t)
	tok := filepath.Join(t.TempDir(), "token")
	os.WriteFile(tok, []byte("s3cret"), 0o600)
	n, err := node.Start(node.ServeOptions{Listen: "127.0.0.1:0", TLSCert: cert, TLSKey: key, TokenFile: tok})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Shutdown()
	open := func(q string) (*remote.Client, error) {
		u, _ := url.Parse("tcp://" + n.Addr() + q)
		return tcp.Open(u)
	}
	c, err := open("?ca=" + url.QueryEscape(cert) + "&token=s3cret")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Put(ctx, "k", []byte("over tls")); err != nil {
		t.Fatal(err)
	}
	if got, err := c.Get(ctx, "k"); err != nil || string(got) != "over tls" {
		t.Fatalf("%q %v", got, err)
	}
	if _, err := open("?tls=1&token=s3cret"); !errs.Is(err, errs.Unauthorized) { // unknown authority
		t.Fatalf("untrusted certificate: %v", err)
	}
	if _, err := open("?token=s3cret&timeout=2s"); err == nil { // plain TCP to a TLS node
		t.Fatal("a plain client got through to a TLS node")
	}
	if _, err := open("?ca=" + url.QueryEscape(cert) + "&token=wrong"); !errs.Is(err, errs.Unauthorized) {
		t.Fatalf("TLS does not replace the token: %v", err)
	}
	if _, err := node.Start(node.ServeOptions{Listen: "127.0.0.1:0", TLSCert: cert, TLSKey: cert}); !errs.Is(err, errs.InvalidArgument) {
		t.Fatalf("bad key: %v", err)
	}
}
