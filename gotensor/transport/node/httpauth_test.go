package node

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gotensor/gotensor/gotensor/errs"
)

const secret = "s3cret-http"

func tokenFile(t *testing.T) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(f, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// get fetches url with bearer as the token ("": none).
func get(t *testing.T, c *http.Client, url, bearer string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// onLoopback is url with its host (every interface) dialled on loopback.
func onLoopback(url string) string {
	for _, any := range []string{"0.0.0.0", "[::]"} {
		url = strings.Replace(url, any, "127.0.0.1", 1)
	}
	return url
}

// Metrics off loopback are served only to requests carrying the node's
// token; a refusal never shows it.
func TestMetricsOffLoopbackNeedBearer(t *testing.T) {
	n, err := Start(ServeOptions{Listen: "127.0.0.1:0", TokenFile: tokenFile(t), Metrics: "0.0.0.0:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Shutdown()
	url := onLoopback("http://" + n.MetricsAddr() + "/metrics")
	for _, bearer := range []string{"", "wrong", secret + "x", strings.ToUpper(secret)} {
		if code, body := get(t, http.DefaultClient, url, bearer); code != http.StatusUnauthorized || strings.Contains(body, secret) {
			t.Fatalf("metrics on 0.0.0.0 with bearer %q: %d %.100q", bearer, code, body)
		}
	}
	if code, body := get(t, http.DefaultClient, url, secret); code != http.StatusOK || !strings.Contains(body, "gotensor_keys 0") {
		t.Fatalf("metrics with the token: %d %.100q", code, body)
	}
}

// Go's profiles (and the command line) stay on loopback unless asked for
// explicitly, even when the node has a token.
func TestPprofStaysOnLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0"} {
		n, err := Start(ServeOptions{Listen: "127.0.0.1:0", TokenFile: tokenFile(t), Pprof: addr})
		if err == nil {
			n.Shutdown()
		}
		if !errs.Is(err, errs.InvalidArgument) || !strings.Contains(err.Error(), "--pprof-public") || strings.Contains(err.Error(), secret) {
			t.Fatalf("pprof on %s with a token: %v", addr, err)
		}
	}
}

// --pprof-public serves the profiles off loopback, to requests carrying
// the token only, and not at all without one.
func TestPprofPublicNeedsBearer(t *testing.T) {
	if n, err := Start(ServeOptions{Listen: "127.0.0.1:0", Pprof: "0.0.0.0:0", PprofPublic: true}); !errs.Is(err, errs.InvalidArgument) {
		if err == nil {
			n.Shutdown()
		}
		t.Fatalf("public pprof without a token: %v", err)
	}
	n, err := Start(ServeOptions{Listen: "127.0.0.1:0", TokenFile: tokenFile(t), Pprof: "0.0.0.0:0", PprofPublic: true})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Shutdown()
	url := onLoopback(n.PprofURL() + "cmdline")
	if code, body := get(t, http.DefaultClient, url, ""); code != http.StatusUnauthorized || strings.Contains(body, secret) {
		t.Fatalf("cmdline without the token: %d %.100q", code, body)
	}
	if code, _ := get(t, http.DefaultClient, url, secret); code != http.StatusOK {
		t.Fatalf("cmdline with the token: %d", code)
	}
}

// A node with TLS serves its metrics over TLS with its certificate, so the
// token does not cross the network in the clear.
func TestMetricsOverTheNodesTLS(t *testing.T) {
	cert, key, pool := selfSignedCert(t)
	n, err := Start(ServeOptions{Listen: "127.0.0.1:0", TokenFile: tokenFile(t), TLSCert: cert, TLSKey: key, Metrics: "0.0.0.0:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Shutdown()
	if !strings.HasPrefix(n.MetricsURL(), "https://") {
		t.Fatalf("metrics at %s", n.MetricsURL())
	}
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	if code, body := get(t, c, onLoopback(n.MetricsURL()), secret); code != http.StatusOK || !strings.Contains(body, "gotensor_keys 0") {
		t.Fatalf("metrics over TLS: %d %.100q", code, body)
	}
	if resp, err := http.Get(onLoopback("http://" + n.MetricsAddr() + "/metrics")); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Fatal("metrics served in the clear by a node with TLS")
		}
	}
}

// selfSignedCert writes a certificate for 127.0.0.1 and its key, and
// returns the pool that trusts it.
func selfSignedCert(t *testing.T) (cert, key string, pool *x509.CertPool) {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &priv.PublicKey, priv)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cert, key = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	parsed, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(parsed)
	return cert, key, pool
}
