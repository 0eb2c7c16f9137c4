// Package tcp is the memory node over TCP (optionally TLS 1.3): the client
// store for tcp:// URLs and the server.
package tcp

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/url"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/store"
	"github.com/gotensor/gotensor/gotensor/transport/remote"
	"github.com/gotensor/gotensor/gotensor/transport/wire"
)

// Register makes store.Open understand tcp://.
func Register() {
	store.RegisterScheme("tcp", func(u *url.URL) (store.Store, error) { return Open(u) })
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

// Open opens tcp://host:port[?token=...&timeout=30s&tls=1&ca=FILE].
func Open(u *url.URL) (*remote.Client, error) {
	o, err := remote.ParseOptions(u, "tls", "ca", "servername")
	if err != nil {
		return nil, err
	}
	tc, err := tlsConfig(u)
	if err != nil {
		return nil, err
	}
	l := &link{addr: u.Host, tls: tc, opts: o, url: "tcp://" + u.Host}
	if _, err := l.connect(); err != nil { // fail fast on a bad address or token
		return nil, err
	}
	return remote.New(l.url, l), nil
}

// link pipelines requests on one TCP connection, connecting again after a loss.
type link struct {
	addr string
	tls  *tls.Config
	opts remote.Options
	url  string

	mu     sync.Mutex
	conn   *conn
	closed bool
	layout atomic.Bool // the server's hello offered wire.FlagLayout
}

// LaysOut says whether the server receives a streamed frame's parts
// straight into the frame once its layout is announced (see
// remote.LaysOut); it connects first if no connection is up.
func (l *link) LaysOut() bool {
	if _, err := l.connect(); err != nil {
		return false
	}
	return l.layout.Load()
}

type conn struct {
	c     net.Conn
	wmu   chan struct{} // one writer at a time; waiting honours the caller's context
	w     *wire.Writer  // under wmu
	pmu   sync.Mutex
	calls remote.Calls // under pmu
	dead  chan struct{}
	read  chan struct{} // closed when readLoop has returned
	err   error

	fillID uint64        // under pmu: the call whose payload readLoop reads into its Into
	filled chan struct{} // under pmu: closed when that read ends
}

func (l *link) connect() (*conn, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, errs.New(errs.Closed, "store %s is closed", l.url)
	}
	if l.conn != nil {
		select {
		case <-l.conn.dead:
		default:
			return l.conn, nil
		}
	}
	d := net.Dialer{Timeout: min(l.opts.Timeout, wire.HandshakeTimeout)}
	nc, err := d.Dial("tcp", l.addr)
	if err != nil {
		return nil, errs.Wrap(errs.Unavailable, err, "cannot reach gotensor server %s", l.addr)
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	if l.tls != nil {
		tc := tls.Client(nc, l.tls)
		hctx, cancel := context.WithTimeout(context.Background(), min(l.opts.Timeout, wire.HandshakeTimeout))
		err := tc.HandshakeContext(hctx)
		cancel()
		if err != nil {
			nc.Close()
			return nil, errs.Wrap(errs.Unauthorized, err, "TLS handshake with %s", l.addr)
		}
		nc = tc
	}
	flags, err := wire.ClientHandshake(nc, l.opts.Token, l.opts.Timeout)
	if err != nil {
		nc.Close()
		return nil, err
	}
	l.layout.Store(flags&wire.FlagLayout != 0)
	cc := &conn{c: nc, wmu: make(chan struct{}, 1), w: wire.NewWriter(nc), dead: make(chan struct{}), read: make(chan struct{})}
	go cc.readLoop()
	l.conn = cc
	return cc, nil
}

// errGone refuses the payload of a response whose caller gave up: it is
// read and dropped.
var errGone = errs.New(errs.Timeout, "the caller gave up")

// admit checks a response against its request before its payload of n
// bytes is read (see remote.Calls), and gives the buffer it is read into
// (see remote.StreamBuffer).
func (cc *conn) admit(m *wire.Message, n uint64) ([]byte, error) {
	cc.pmu.Lock()
	keep, into, err := cc.calls.Admit(&m.Header, n)
	if into != nil {
		cc.fillID, cc.filled = m.ID, make(chan struct{})
	}
	cc.pmu.Unlock()
	switch {
	case err != nil:
		return nil, &wire.Stop{Err: err}
	case !keep:
		return nil, errGone
	case into != nil:
		return into, nil
	}
	return remote.StreamBuffer(m, n), nil
}

// settle runs before call id, whose request had Into, returns without its
// response: if that response is arriving in the caller's memory, it waits
// for the payload to end, or ends the connection and waits for its
// reader, so that nothing writes there once the call has returned. The
// connection goes on when the payload ends in time (it is then dropped).
func (cc *conn) settle(id uint64) {
	cc.pmu.Lock()
	filling := cc.calls.Filling(id)
	var filled chan struct{} // nil (never ready) unless this call's payload is the one being read
	if filling && cc.fillID == id {
		filled = cc.filled
	}
	cc.pmu.Unlock()
	if filling {
		remote.AwaitFill(filled, cc.read, func() { cc.fail(remote.ErrAbandoned) })
	}
}

func (cc *conn) readLoop() {
	defer close(cc.read)
	defer func() {
		if r := recover(); r != nil {
			cc.fail(errs.New(errs.Internal, "panic reading responses: %v", r))
		}
	}()
	r := wire.NewReader(bufio.NewReaderSize(cc.c, 256<<10))
	for {
		m, err := r.Read(wire.DefaultMaxMessage, cc.admit)
		cc.pmu.Lock()
		if cc.filled != nil { // a payload read into a caller's memory has ended
			close(cc.filled)
			cc.filled = nil
		}
		if err == nil {
			err = cc.calls.Deliver(m)
		}
		cc.pmu.Unlock()
		if err != nil {
			cc.fail(err)
			return
		}
	}
}

func (cc *conn) fail(err error) {
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

// forget gives up call id: remove when its request was not sent, else
// its response is dropped when it comes.
func (cc *conn) forget(id uint64, sent bool) {
	cc.pmu.Lock()
	var err error
	if sent {
		err = cc.calls.Forget(id)
	} else {
		cc.calls.Remove(id)
	}
	cc.pmu.Unlock()
	if err != nil {
		cc.fail(err)
	}
}

// Do sends a request and waits for its response; the caller's context and
// the link's timeout bound every wait: for the writer's turn, the write
// (a write cut short ends the connection) and the response.
func (l *link) Do(ctx context.Context, m *wire.Message) (*wire.Message, error) {
	if ctx.Err() != nil { // nothing to send for a call already over
		return nil, remote.CtxErr(ctx, m.Op, l.addr)
	}
	cc, err := l.connect()
	if err != nil {
		return nil, err
	}
	lost := func() error { return remote.Lost(cc.err, l.addr) }
	cc.pmu.Lock()
	select {
	case <-cc.dead:
		cc.pmu.Unlock()
		return nil, lost()
	default:
	}
	ch := make(chan *wire.Message, 1)
	cc.calls.Add(m, ch)
	cc.pmu.Unlock()
	deadline, within := remote.Deadline(ctx, l.opts.Timeout)
	timer := time.NewTimer(time.Until(deadline)) // one for every wait of this call
	defer timer.Stop()
	select {
	case cc.wmu <- struct{}{}: // the writer's turn, at once when no one else writes
	default:
		select {
		case cc.wmu <- struct{}{}:
		case <-cc.dead:
			return nil, lost()
		case <-ctx.Done():
			cc.forget(m.ID, false)
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return nil, errs.Wrap(errs.Timeout, ctx.Err(), "%s: could not send to %s within %v", m.Op, l.addr, within)
			}
			return nil, remote.CtxErr(ctx, m.Op, l.addr)
		case <-timer.C:
			cc.forget(m.ID, false)
			return nil, errs.New(errs.Timeout, "%s: could not send to %s within %v", m.Op, l.addr, within)
		}
	}
	cc.c.SetWriteDeadline(deadline)
	stop := func() bool { return false }
	if ctx.Done() != nil { // a cancelled call cuts its write short
		stop = context.AfterFunc(ctx, func() { cc.c.SetWriteDeadline(time.Now()) })
	}
	err = cc.w.Write(m)
	stop()
	<-cc.wmu
	if err != nil {
		cc.fail(err)
		if ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, remote.CtxErr(ctx, m.Op, l.addr)
		}
		if ctx.Err() != nil || errors.Is(err, os.ErrDeadlineExceeded) {
			return nil, errs.Wrap(errs.Timeout, err, "%s: could not send to %s within %v", m.Op, l.addr, within)
		}
		return nil, lost()
	}
	resp, err := remote.Await(ctx, ch, cc.dead, timer.C, within, m.Op, l.addr, lost, func() { cc.forget(m.ID, true) })
	if err != nil && m.Into != nil {
		cc.settle(m.ID)
	}
	return resp, err
}

// ReceivesInto: a request's Into receives its response (see wire.Message).
func (l *link) ReceivesInto() bool { return true }

// SendsInCall: Do writes the whole request itself, cut short on a
// cancel, before it waits (see remote.InCall).
func (l *link) SendsInCall() bool { return true }

func (l *link) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	if l.conn != nil {
		l.conn.fail(errs.New(errs.Closed, "store closed"))
	}
}
