package redis

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/store"
	"github.com/gotensor/gotensor/gotensor/transport/redis/redistest"
)

// writeCA makes a private CA and a server certificate for 127.0.0.1 in dir.
func writeCA(t *testing.T, dir string) (ca, cert, key string) {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "gotensor test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	must(t, err)
	caCert, _ := x509.ParseCertificate(caDER)
	srvKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	srvTmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	srvDER, err := x509.CreateCertificate(rand.Reader, srvTmpl, caCert, &srvKey.PublicKey, caKey)
	must(t, err)
	kb, _ := x509.MarshalECPrivateKey(srvKey)
	write := func(name, typ string, b []byte) string {
		p := filepath.Join(dir, name)
		must(t, os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: b}), 0o600))
		return p
	}
	return write("ca.pem", "CERTIFICATE", caDER), write("server.pem", "CERTIFICATE", srvDER), write("server.key", "EC PRIVATE KEY", kb)
}

func TestTLS(t *testing.T) {
	redistest.Need(t)
	dir := t.TempDir()
	ca, cert, key := writeCA(t, dir)
	tp := redistest.FreePort(t)
	srv := redistest.Start(t, "--tls-port", strconv.Itoa(tp), "--tls-cert-file", cert, "--tls-key-file", key,
		"--tls-ca-cert-file", ca, "--tls-auth-clients", "no", "--requirepass", "tls-s3cret")
	if out, _ := srv.CLI("config", "get", "tls-port"); !strings.Contains(out, strconv.Itoa(tp)) {
		t.Skipf("this redis-server has no TLS: %s", out)
	}
	addr := "127.0.0.1:" + strconv.Itoa(tp)
	s := open(t, "rediss://:tls-s3cret@"+addr+"?ca="+ca)
	big := randBytes(9<<20, 9)
	must(t, s.Put(bg, "k", big))
	got, err := s.Get(bg, "k")
	must(t, err)
	if string(got) != string(big) {
		t.Fatal("read back differs over TLS")
	}
	// the system's roots do not know the private CA; plain redis:// on a TLS port fails
	for _, u := range []string{"rediss://:tls-s3cret@" + addr + "?timeout=2s", "redis://:tls-s3cret@" + addr + "?timeout=2s",
		"valkeys://:tls-s3cret@" + addr + "?ca=" + ca + "&servername=wrong.example&timeout=2s"} {
		_, err := store.Open(u)
		if err == nil || strings.Contains(err.Error(), "tls-s3cret") {
			t.Errorf("%s: %v", strings.ReplaceAll(u, "tls-s3cret", "..."), err)
		}
		if !errs.Is(err, errs.Unavailable) && !errs.Is(err, errs.Timeout) {
			t.Errorf("%s: %v, want Unavailable", strings.ReplaceAll(u, "tls-s3cret", "..."), err)
		}
	}
}
