package wire

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"time"

	"github.com/gotensor/gotensor/gotensor/errs"
)

// The handshake: the client's hello (magic, version); the server's hello
// with a fresh nonce and whether a token is required; the client's HMAC of
// the nonce; the server's verdict (one status byte). Nothing else is read
// from a peer, or allocated for it, before the verdict.

// Magic opens the handshake in both directions.
var Magic = [4]byte{'G', 'T', 'R', 'P'}

const (
	HelloSize       = 8
	NonceSize       = 32
	ServerHelloSize = HelloSize + NonceSize
	MacSize         = sha256.Size
	// HandshakeTimeout bounds each side's handshake.
	HandshakeTimeout = 10 * time.Second
	// HelloWait bounds the wait for a server's hello: a node answers a
	// client's hello at once, so silence means another protocol (a ucx
	// node, whose listener waits for the client to speak UCX).
	HelloWait = time.Second
)

// Flags in the server's hello.
const (
	FlagToken  uint16 = 1 << 0 // a token is required
	FlagLayout uint16 = 1 << 1 // streamed frames may be laid out up front (OpPutLayout)
)

// Bye, sent as a handshake message over UCX, tells the server a client is
// leaving: endpoints without peer failure detection (shared memory) learn
// it no other way.
const Bye = "GTBY"

// Token is a shared secret as both ends take it, from a file or given
// inline: without the whitespace around it (a token file's newline).
func Token(s string) []byte { return []byte(strings.TrimSpace(s)) }

// Hello is the client's opening message.
func Hello() []byte {
	b := make([]byte, HelloSize)
	copy(b, Magic[:])
	binary.LittleEndian.PutUint16(b[4:], Version)
	return b
}

// CheckHello checks a client's hello.
func CheckHello(b []byte) error {
	if len(b) != HelloSize || [4]byte(b[:4]) != Magic || binary.LittleEndian.Uint16(b[4:]) != Version {
		return Protocol("bad hello %x", b)
	}
	return nil
}

// ServerHello is the server's answer and the nonce in it: flags (such as
// FlagLayout), with FlagToken where a token is required.
func ServerHello(tokenRequired bool, flags uint16) (out, nonce []byte) {
	if tokenRequired {
		flags |= FlagToken
	}
	out = make([]byte, ServerHelloSize)
	copy(out, Magic[:])
	binary.LittleEndian.PutUint16(out[4:], Version)
	binary.LittleEndian.PutUint16(out[6:], flags)
	nonce = out[HelloSize:]
	rand.Read(nonce) // never fails (crypto/rand)
	return out, nonce
}

// Proof answers a server's hello with token; addr names the server in errors.
func Proof(in, token []byte, addr string) ([]byte, error) {
	if len(in) != ServerHelloSize || [4]byte(in[:4]) != Magic {
		return nil, errs.New(errs.Unavailable, "%s is not a gotensor server", addr)
	}
	if v := binary.LittleEndian.Uint16(in[4:]); v != Version {
		return nil, errs.New(errs.Unsupported, "server speaks protocol version %d, this client %d", v, Version)
	}
	if ServerFlags(in)&FlagToken != 0 && len(token) == 0 {
		return nil, errs.New(errs.Unauthorized, "server %s requires a token (token=... in the URL or GOTENSOR_TOKEN)", addr)
	}
	if len(token) == 0 {
		return make([]byte, MacSize), nil
	}
	return mac(token, in[HelloSize:]), nil
}

// ServerFlags are the flags of a server's hello.
func ServerFlags(in []byte) uint16 {
	if len(in) < HelloSize {
		return 0
	}
	return binary.LittleEndian.Uint16(in[6:])
}

// Verify checks a client's proof; the verdict is what the server sends back.
func Verify(token, nonce, proof []byte) (ok bool, verdict []byte) {
	ok = len(proof) == MacSize && (len(token) == 0 || hmac.Equal(proof, mac(token, nonce)))
	if ok {
		return true, []byte{0}
	}
	return false, []byte{uint8(errs.Unauthorized) + 1}
}

// CheckVerdict turns the server's verdict into an error.
func CheckVerdict(v []byte, addr string) error {
	if len(v) != 1 || v[0] != 0 {
		return errs.New(errs.Unauthorized, "server %s refused the token", addr)
	}
	return nil
}

// mac is the handshake proof: HMAC-SHA256 over the server's nonce.
func mac(token, nonce []byte) []byte {
	m := hmac.New(sha256.New, token)
	m.Write([]byte("gotensor-v1 auth\x00"))
	m.Write(nonce)
	return m.Sum(nil)
}

// ClientHandshake runs the client's side on a stream connection; it
// returns the flags of the server's hello.
func ClientHandshake(c net.Conn, token []byte, timeout time.Duration) (flags uint16, err error) {
	c.SetDeadline(time.Now().Add(min(timeout, HandshakeTimeout)))
	defer c.SetDeadline(time.Time{})
	addr := c.RemoteAddr().String()
	lost := func(err error) error { return errs.Wrap(errs.Unavailable, err, "handshake with %s", addr) }
	if _, err := c.Write(Hello()); err != nil {
		return 0, lost(err)
	}
	c.SetReadDeadline(time.Now().Add(min(timeout, HelloWait)))
	in := make([]byte, ServerHelloSize)
	if n, err := io.ReadFull(c, in); err != nil {
		if n == 0 && errors.Is(err, os.ErrDeadlineExceeded) {
			return 0, errs.New(errs.Unavailable, "%s does not answer as a gotensor tcp node within %v (a ucx node? open ucx://%s)",
				addr, min(timeout, HelloWait), addr)
		}
		return 0, lost(err)
	}
	c.SetDeadline(time.Now().Add(min(timeout, HandshakeTimeout)))
	proof, err := Proof(in, token, addr)
	if err != nil {
		return 0, err
	}
	if _, err := c.Write(proof); err != nil {
		return 0, lost(err)
	}
	var verdict [1]byte
	if _, err := io.ReadFull(c, verdict[:]); err != nil {
		return 0, lost(err)
	}
	return ServerFlags(in), CheckVerdict(verdict[:], addr)
}

// SpeaksTCP reports whether a gotensor tcp node (without TLS) answers at
// addr: a ucx client that cannot reach a ucx node there asks, to say so.
func SpeaksTCP(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, HelloWait)
	if err != nil {
		return false
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(HelloWait))
	if _, err := c.Write(Hello()); err != nil {
		return false
	}
	in := make([]byte, ServerHelloSize)
	_, err = io.ReadFull(c, in)
	return err == nil && [4]byte(in[:4]) == Magic
}

// ServerHandshake runs the server's side on a stream connection: fixed-size
// reads only, under a deadline. flags are the hello's beyond FlagToken.
func ServerHandshake(c net.Conn, token []byte, flags uint16) error {
	c.SetDeadline(time.Now().Add(HandshakeTimeout))
	defer c.SetDeadline(time.Time{})
	hello := make([]byte, HelloSize)
	if _, err := io.ReadFull(c, hello); err != nil {
		return err
	}
	if err := CheckHello(hello); err != nil {
		return err
	}
	out, nonce := ServerHello(len(token) > 0, flags)
	if _, err := c.Write(out); err != nil {
		return err
	}
	proof := make([]byte, MacSize)
	if _, err := io.ReadFull(c, proof); err != nil {
		return err
	}
	ok, verdict := Verify(token, nonce, proof)
	if _, err := c.Write(verdict); err != nil {
		return err
	}
	if !ok {
		return errs.New(errs.Unauthorized, "bad token")
	}
	return nil
}
