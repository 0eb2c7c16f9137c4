package transport

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/store"
)

func init() {
	store.RegisterScheme("tcp", func(u *url.URL) (store.Store, error) { return OpenURL(u) })
}

// Client is a store.Store on a remote memory node, over any link (TCP or
// UCX). Requests are pipelined; a lost connection fails the requests in
// flight (Unavailable) and the next request connects again.
type Client struct {
	url  string
	link link
}

// link carries requests to one server and brings back their responses.
type link interface {
	do(ctx context.Context, m *message) (*message, error)
	close()
}

// tcpLink pipelines requests on one TCP connection.
type tcpLink struct {
	addr    string
	tls     *tls.Config
	token   []byte
	timeout time.Duration
	url     string

	mu     sync.Mutex
	conn   *clientConn
	closed bool
}

// clientOptions are the URL parameters every transport understands.
type clientOptions struct {
	token   []byte
	timeout time.Duration
}

// tlsConfig reads tcp://'s TLS parameters: tls=1 turns TLS on (the
// system's roots verify the server), ca=FILE trusts that PEM instead,
// servername=NAME checks the certificate against NAME.
func tlsConfig(u *url.URL) (*tls.Config, error) {
	q := u.Query()
	on := q.Get("tls")
	if on == "" && q.Get("ca") == "" {
		return nil, nil
	}
	if on == "0" || on == "off" {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS13, ServerName: u.Hostname()}
	if n := q.Get("servername"); n != "" {
		cfg.ServerName = n
	}
	if ca := q.Get("ca"); ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return nil, errs.Wrap(errs.InvalidArgument, err, "reading ca=%s", ca)
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return nil, errs.New(errs.InvalidArgument, "ca=%s holds no PEM certificate", ca)
		}
	}
	return cfg, nil
}

func parseClientOptions(u *url.URL) (clientOptions, error) {
	q := u.Query()
	token := q.Get("token")
	if token == "" {
		token = os.Getenv("GOTENSOR_TOKEN")
	}
	o := clientOptions{token: []byte(token), timeout: 60 * time.Second}
	if t := q.Get("timeout"); t != "" {
		d, err := time.ParseDuration(t)
		if err != nil || d <= 0 {
			return o, errs.New(errs.InvalidArgument, "bad timeout %q in store URL", t)
		}
		o.timeout = d
	}
	return o, nil
}

// OpenURL opens tcp://host:port[?token=...&timeout=30s]; without a token
// parameter, GOTENSOR_TOKEN is used.
func OpenURL(u *url.URL) (*Client, error) {
	if u.Host == "" {
		return nil, errs.New(errs.InvalidArgument, "tcp store URL %q has no host:port", u.Redacted())
	}
	o, err := parseClientOptions(u)
	if err != nil {
		return nil, err
	}
	tc, err := tlsConfig(u)
	if err != nil {
		return nil, err
	}
	l := &tcpLink{addr: u.Host, tls: tc, token: o.token, timeout: o.timeout, url: "tcp://" + u.Host}
	if _, err := l.connect(); err != nil { // fail fast on a bad address or token
		return nil, err
	}
	return &Client{url: l.url, link: l}, nil
}

type clientConn struct {
	c       net.Conn
	wmu     sync.Mutex
	pmu     sync.Mutex
	pending map[uint64]chan *message
	nextID  atomic.Uint64
	dead    chan struct{}
	err     error
}

func (c *tcpLink) connect() (*clientConn, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, errs.New(errs.Closed, "store %s is closed", c.url)
	}
	if c.conn != nil {
		select {
		case <-c.conn.dead:
		default:
			return c.conn, nil
		}
	}
	d := net.Dialer{Timeout: min(c.timeout, 10*time.Second)}
	nc, err := d.Dial("tcp", c.addr)
	if err != nil {
		return nil, errs.Wrap(errs.Unavailable, err, "cannot reach gotensor server %s", c.addr)
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	if c.tls != nil {
		tc := tls.Client(nc, c.tls)
		hctx, cancel := context.WithTimeout(context.Background(), min(c.timeout, 10*time.Second))
		err := tc.HandshakeContext(hctx)
		cancel()
		if err != nil {
			nc.Close()
			return nil, errs.Wrap(errs.Unauthorized, err, "TLS handshake with %s", c.addr)
		}
		nc = tc
	}
	if err := clientHandshake(nc, c.token, c.timeout); err != nil {
		nc.Close()
		return nil, err
	}
	cc := &clientConn{c: nc, pending: map[uint64]chan *message{}, dead: make(chan struct{})}
	go cc.readLoop()
	c.conn = cc
	return cc, nil
}

func clientHandshake(c net.Conn, token []byte, timeout time.Duration) error {
	c.SetDeadline(time.Now().Add(min(timeout, 10*time.Second)))
	defer c.SetDeadline(time.Time{})
	var hello [8]byte
	copy(hello[:], Magic[:])
	binary.LittleEndian.PutUint16(hello[4:], Version)
	if _, err := c.Write(hello[:]); err != nil {
		return errs.Wrap(errs.Unavailable, err, "handshake with %s", c.RemoteAddr())
	}
	var in [8 + nonceSize]byte
	if _, err := io.ReadFull(c, in[:]); err != nil {
		return errs.Wrap(errs.Unavailable, err, "handshake with %s", c.RemoteAddr())
	}
	if [4]byte(in[:4]) != Magic {
		return errs.New(errs.Unavailable, "%s is not a gotensor server", c.RemoteAddr())
	}
	if v := binary.LittleEndian.Uint16(in[4:]); v != Version {
		return errs.New(errs.Unsupported, "server speaks protocol version %d, this client %d", v, Version)
	}
	needsToken := binary.LittleEndian.Uint16(in[6:])&1 != 0
	if needsToken && len(token) == 0 {
		return errs.New(errs.Unauthorized, "server %s requires a token (token=... in the URL or GOTENSOR_TOKEN)", c.RemoteAddr())
	}
	proof := make([]byte, macSize)
	if len(token) > 0 {
		proof = mac(token, in[8:])
	}
	if _, err := c.Write(proof); err != nil {
		return errs.Wrap(errs.Unavailable, err, "handshake with %s", c.RemoteAddr())
	}
	var verdict [1]byte
	if _, err := io.ReadFull(c, verdict[:]); err != nil {
		return errs.Wrap(errs.Unavailable, err, "handshake with %s", c.RemoteAddr())
	}
	if verdict[0] != 0 {
		return errs.New(errs.Unauthorized, "server %s refused the token", c.RemoteAddr())
	}
	return nil
}

func (cc *clientConn) readLoop() {
	r := bufio.NewReaderSize(cc.c, 256<<10)
	for {
		m, err := readMessage(r, DefaultMaxMessage, trustAll)
		if err != nil {
			cc.fail(err)
			return
		}
		cc.pmu.Lock()
		ch := cc.pending[m.id]
		delete(cc.pending, m.id)
		cc.pmu.Unlock()
		if ch != nil {
			ch <- m
		}
	}
}

func (cc *clientConn) fail(err error) {
	cc.pmu.Lock()
	defer cc.pmu.Unlock()
	select {
	case <-cc.dead:
		return
	default:
	}
	cc.err = err
	close(cc.dead)
	cc.c.Close()
}

// do sends a request and waits for its response.
func (c *tcpLink) do(ctx context.Context, m *message) (*message, error) {
	cc, err := c.connect()
	if err != nil {
		return nil, err
	}
	m.id = cc.nextID.Add(1)
	ch := make(chan *message, 1)
	cc.pmu.Lock()
	select {
	case <-cc.dead:
		cc.pmu.Unlock()
		return nil, c.lost(cc)
	default:
	}
	cc.pending[m.id] = ch
	cc.pmu.Unlock()
	cc.wmu.Lock()
	cc.c.SetWriteDeadline(time.Now().Add(c.timeout))
	err = writeMessage(cc.c, m)
	cc.wmu.Unlock()
	if err != nil {
		cc.fail(err)
		return nil, c.lost(cc)
	}
	return await(ctx, ch, cc.dead, c.timeout, m.op, c.addr,
		func() error { return c.lost(cc) },
		func() {
			cc.pmu.Lock()
			delete(cc.pending, m.id)
			cc.pmu.Unlock()
		})
}

// await waits for the response on ch, the connection's end (dead), the
// timeout or ctx; forget drops the pending request when the caller gives up.
func await(ctx context.Context, ch chan *message, dead chan struct{}, timeout time.Duration, op Op, addr string,
	lost func() error, forget func()) (*message, error) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case resp := <-ch:
		if resp.status != 0 {
			return nil, statusErr(resp.status, resp.payload)
		}
		return resp, nil
	case <-dead:
		return nil, lost()
	case <-timer.C:
		forget()
		return nil, errs.New(errs.Timeout, "%s: no answer from %s within %v", opName(op), addr, timeout)
	case <-ctx.Done():
		forget()
		return nil, errs.Wrap(errs.Timeout, ctx.Err(), "%s on %s", opName(op), addr)
	}
}

func (c *tcpLink) lost(cc *clientConn) error {
	err := cc.err
	if err == nil || errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return errs.Wrap(errs.Unavailable, err, "connection to gotensor server %s lost", c.addr)
}

func opName(op Op) string {
	return [...]string{"?", "ping", "put", "get", "head", "delete", "has", "list", "usage", "put-rma", "get-rma", "get-range", "put-part", "put-commit", "put-abort", "?"}[min(int(op), int(opMax))]
}

func (c *Client) URL() string { return c.url }

func (c *Client) Put(ctx context.Context, key string, frame []byte) error {
	if err := store.ValidateKey(key); err != nil {
		return err
	}
	_, err := c.link.do(ctx, &message{header: header{op: OpPut}, key: key, payload: frame})
	return err
}

func (c *Client) Get(ctx context.Context, key string) ([]byte, error) {
	if err := store.ValidateKey(key); err != nil {
		return nil, err
	}
	m, err := c.link.do(ctx, &message{header: header{op: OpGet}, key: key})
	if err != nil {
		return nil, err
	}
	return m.payload, nil
}

func (c *Client) Head(ctx context.Context, key string, n int) ([]byte, int64, error) {
	if err := store.ValidateKey(key); err != nil {
		return nil, 0, err
	}
	m, err := c.link.do(ctx, &message{header: header{op: OpHead, arg: uint64(n)}, key: key})
	if err != nil {
		return nil, 0, err
	}
	return m.payload, int64(m.arg), nil
}

func (c *Client) Delete(ctx context.Context, key string) error {
	if err := store.ValidateKey(key); err != nil {
		return err
	}
	_, err := c.link.do(ctx, &message{header: header{op: OpDelete}, key: key})
	return err
}

func (c *Client) Has(ctx context.Context, key string) (bool, error) {
	if err := store.ValidateKey(key); err != nil {
		return false, err
	}
	m, err := c.link.do(ctx, &message{header: header{op: OpHas}, key: key})
	if err != nil {
		return false, err
	}
	return m.arg == 1, nil
}

func (c *Client) List(ctx context.Context, prefix string) ([]string, error) {
	m, err := c.link.do(ctx, &message{header: header{op: OpList}, key: prefix})
	if err != nil {
		return nil, err
	}
	if len(m.payload) == 0 {
		return nil, nil
	}
	return strings.Split(string(m.payload), "\n"), nil
}

// Ping checks the server answers.
func (c *Client) Ping(ctx context.Context) error {
	_, err := c.link.do(ctx, &message{header: header{op: OpPing}})
	return err
}

func (c *Client) Usage() store.Usage {
	var u store.Usage
	if m, err := c.link.do(context.Background(), &message{header: header{op: OpUsage}}); err == nil {
		json.Unmarshal(m.payload, &u)
	}
	return u
}

func (c *Client) Close() error {
	c.link.close()
	return nil
}

func (c *tcpLink) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	if c.conn != nil {
		c.conn.fail(errs.New(errs.Closed, "store closed"))
	}
}
