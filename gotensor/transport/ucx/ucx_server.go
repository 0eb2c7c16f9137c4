//go:build ucx

package ucx

/*
#include <stdlib.h>
#include "ucx_shim.h"
*/
import "C"

import (
	"context"
	"net"
	"os"
	"runtime"
	"strconv"
	"sync"
	"time"
	"unsafe"

	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/transport/serve"
	"github.com/gotensor/gotensor/gotensor/transport/wire"
)

// Built reports whether this build carries the UCX transport.
const Built = true

// ConfigFor keeps loopback traffic on the loopback device unless
// UCX_NET_DEVICES says otherwise.
func ConfigFor(tls, addr string) Config {
	c := Config{tls: tls}
	if host, _, err := net.SplitHostPort(addr); err == nil {
		if ip := net.ParseIP(host); (ip != nil && ip.IsLoopback()) || host == "localhost" {
			if os.Getenv("UCX_NET_DEVICES") == "" {
				c.netDevices = "lo"
			}
		}
	}
	return c
}

// Server serves a store over UCX: requests and responses are active
// messages (rendezvous moves large payloads zero-copy), and the one-sided
// ops read and write the client's registered memory directly.
type Server struct {
	cfg      serve.Config
	u        Config
	inline   bool // the store never blocks: serve on the worker thread
	w        *ucxWorker
	addr     string
	peers    map[C.ucp_ep_h]*ucxPeer // worker thread only
	handlers sync.WaitGroup
	closeMu  sync.Mutex
	closed   bool
}

type peerState int

const (
	awaitHello peerState = iota
	awaitProof
	ready
	rejected
)

type ucxPeer struct {
	ups   *serve.Uploads
	ep    C.ucp_ep_h
	state peerState
	nonce []byte
	sem   chan struct{}
}

// Listen serves cfg.Store on addr (host:port; port 0 picks one).
func Listen(addr string, cfg serve.Config, u Config) (*Server, error) {
	cfg = cfg.WithDefaults()
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, errs.Wrap(errs.InvalidArgument, err, "bad listen address %q", addr)
	}
	ip, err := resolveIP(host)
	if err != nil {
		return nil, err
	}
	port, err := strconv.Atoi(portStr)
	if err != nil || port < 0 || port > 65535 {
		return nil, errs.New(errs.InvalidArgument, "bad port in %q", addr)
	}
	// a restarted memory node binds its port again at once (UCX reads
	// transport settings from the environment only)
	for _, k := range []string{"UCX_TCP_CM_REUSEADDR", "UCX_RDMA_CM_REUSEADDR"} {
		if _, set := os.LookupEnv(k); !set {
			os.Setenv(k, "y")
		}
	}
	s := &Server{cfg: cfg, u: u, peers: map[C.ucp_ep_h]*ucxPeer{}, inline: cfg.Store.Caps().Nonblocking}
	w, err := startUCXWorker(u, s, func(w *ucxWorker) error {
		cip := C.CString(ip)
		defer C.free(unsafe.Pointer(cip))
		var bound C.int
		if rc := C.gt_listen(w.c, cip, C.int(port), &bound); rc != 0 {
			return errs.Wrap(errs.Unavailable, ucxStatus("listen", rc), "cannot listen on %s", addr)
		}
		s.addr = net.JoinHostPort(ip, strconv.Itoa(int(bound)))
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.w = w
	return s, nil
}

func resolveIP(host string) (string, error) {
	if host == "" || host == "localhost" {
		return "127.0.0.1", nil
	}
	if ip := net.ParseIP(host); ip != nil {
		return ip.String(), nil
	}
	ips, err := net.LookupIP(host)
	if err != nil || len(ips) == 0 {
		return "", errs.Wrap(errs.Unavailable, err, "cannot resolve %q", host)
	}
	return ips[0].String(), nil
}

// Addr is the listening host:port.
func (s *Server) Addr() string { return s.addr }

// Close stops accepting, waits for requests in flight and releases UCX.
func (s *Server) Close() error {
	s.closeMu.Lock()
	if s.closed {
		s.closeMu.Unlock()
		return nil
	}
	s.closed = true
	s.closeMu.Unlock()
	s.handlers.Wait()
	s.w.call(func() {
		for ep := range s.peers {
			s.drop(ep)
		}
	})
	s.w.stop()
	return nil
}

func (s *Server) drop(ep C.ucp_ep_h) {
	p, ok := s.peers[ep]
	if !ok {
		return
	}
	delete(s.peers, ep)
	p.ups.Close() // its streamed writes end with it, giving their parts' budget back
	C.gt_close_ep(s.w.c, ep, 1)
}

func (s *Server) onConn(req C.ucp_conn_request_h) {
	var ep C.ucp_ep_h
	if rc := C.gt_accept(s.w.c, req, boolInt(s.u.errPeer()), &ep); rc != 0 {
		s.cfg.LogRefused("gotensor serve: ucx accept: %v", ucxStatus("accept", rc))
		return
	}
	s.peers[ep] = &ucxPeer{ep: ep, sem: make(chan struct{}, s.cfg.MaxInflight), ups: serve.NewUploads(s.cfg)}
}

func (s *Server) onEpError(ep C.ucp_ep_h, status C.int) {
	s.drop(ep)
}

func (s *Server) onBadAM(ep C.ucp_ep_h, err error) {
	s.cfg.Logf("gotensor serve: ucx peer: closing: %v", err)
	s.drop(ep)
}

// refuse drops a peer that has not authenticated, logging it rate-limited:
// such peers must not be able to flood the log.
func (s *Server) refuse(ep C.ucp_ep_h, err error) {
	s.cfg.LogRefused("gotensor serve: ucx peer: closing: %v", err)
	s.drop(ep)
}

// rndvBuffer admits a rendezvous payload: only from an authenticated peer,
// with a well-formed header, and within the node's budget; a payload the
// budget refuses is answered with that error, the peer stays.
func (s *Server) rndvBuffer(amID uint, ep C.ucp_ep_h, hdr []byte, n uint64) ([]byte, func(), bool) {
	p := s.peers[ep]
	if p == nil {
		return nil, nil, false
	}
	if amID != C.GT_AM_MSG || p.state != ready {
		s.refuse(ep, errs.New(errs.Unauthorized, "payload before authentication"))
		return nil, nil, false
	}
	m, err := wire.ParseAMHeader(hdr, n, s.cfg.MaxMessage)
	if err != nil {
		s.onBadAM(ep, err)
		return nil, nil, false
	}
	release, err := s.cfg.Budget.ReserveFor(m, n)
	if err != nil {
		m.Refused = err
		s.serveMessage(p, m)
		return nil, nil, false
	}
	return s.cfg.Budget.Buffer(m, n), release, true // a put lands in memory the store lends
}

func (s *Server) onAM(amID uint, ep C.ucp_ep_h, hdr, payload []byte, release func()) {
	p := s.peers[ep]
	if p == nil {
		if release != nil {
			release()
		}
		return // from an endpoint already dropped
	}
	if amID == C.GT_AM_HANDSHAKE {
		s.handshake(p, hdr)
		return
	}
	if p.state != ready { // nothing is served before the handshake succeeds
		s.refuse(ep, errs.New(errs.Unauthorized, "request before authentication"))
		return
	}
	m, err := wire.ParseAMHeader(hdr, uint64(len(payload)), s.cfg.MaxMessage)
	if err != nil {
		if release != nil {
			release()
		}
		s.onBadAM(ep, err)
		return
	}
	m.Payload, m.Release = payload, release
	if release != nil { // a rendezvous payload, in the buffer rndvBuffer gave
		m.Lent = s.cfg.Budget.Lent(m)
	}
	if release == nil && len(payload) > 0 { // eager: UCX already holds it, the budget still counts it
		if m.Release, err = s.cfg.Budget.ReserveFor(m, uint64(len(payload))); err != nil {
			m.Payload, m.Refused = nil, err
		}
	}
	s.serveMessage(p, m)
}

// serveMessage answers m on the worker thread when the store never blocks,
// else from a goroutine of its own.
func (s *Server) serveMessage(p *ucxPeer, m *wire.Message) {
	if m.Op.IsUpload() { // parts are kept per endpoint; a commit goes on as a put
		start, op, in := time.Now(), m.Op, len(m.Payload)
		if resp := p.ups.Handle(m); resp != nil {
			s.cfg.Observe(op, in, resp, start)
			s.send(p, resp)
			return
		}
	}
	if s.inline && m.Op != wire.OpPutRMA && m.Op != wire.OpGetRMA { // a map access: no goroutine hand-off
		resp := s.cfg.Serve(context.Background(), m)
		m.Done()
		s.send(p, resp)
		return
	}
	s.handlers.Add(1)
	go func() {
		defer s.handlers.Done()
		p.sem <- struct{}{}
		resp := s.serve(p, m)
		m.Done()
		<-p.sem
		s.reply(p, resp)
	}()
}

// send posts resp to p; worker thread only.
func (s *Server) send(p *ucxPeer, resp *wire.Message) {
	s.w.send(p.ep, C.GT_AM_MSG, wire.AMHeader(resp, len(resp.Payload)), resp.Payload, func(status C.int) {
		resp.Done()
		if status != 0 {
			s.onBadAM(p.ep, ucxStatus("send", status))
		}
	})
}

func (s *Server) reply(p *ucxPeer, resp *wire.Message) {
	if !s.w.run(func() {
		if s.peers[p.ep] != p {
			resp.Done()
			return // the client is gone
		}
		s.send(p, resp)
	}) {
		resp.Done()
	}
}

// handshake is docs/PROTOCOL.md's, each step one active message.
func (s *Server) handshake(p *ucxPeer, b []byte) {
	switch p.state {
	case awaitHello:
		if err := wire.CheckHello(b); err != nil {
			s.cfg.Observer.Refused()
			s.refuse(p.ep, err)
			return
		}
		var out []byte // no FlagLayout: parts arrive by rendezvous into the budget's memory
		out, p.nonce = wire.ServerHello(len(s.cfg.Token) > 0, 0)
		p.state = awaitProof
		s.w.send(p.ep, C.GT_AM_HANDSHAKE, out, nil, nil)
	case awaitProof:
		ok, verdict := wire.Verify(s.cfg.Token, p.nonce, b)
		if ok {
			p.state = ready
			s.w.send(p.ep, C.GT_AM_HANDSHAKE, verdict, nil, nil)
			return
		}
		s.cfg.LogRefused("gotensor serve: ucx peer: bad token")
		s.cfg.Observer.Refused()
		p.state = rejected
		// the client closes on the refusal; one that does not is dropped
		s.w.send(p.ep, C.GT_AM_HANDSHAKE, verdict, nil, func(C.int) {
			time.AfterFunc(time.Second, func() {
				s.w.run(func() {
					if s.peers[p.ep] == p {
						s.drop(p.ep)
					}
				})
			})
		})
	default:
		if string(b) == wire.Bye {
			s.drop(p.ep)
			return
		}
		if p.state == rejected {
			s.refuse(p.ep, wire.Protocol("handshake message after a refusal"))
			return
		}
		s.onBadAM(p.ep, wire.Protocol("handshake message after the handshake"))
	}
}

// serve runs one request; the one-sided ops move the frame with RMA.
func (s *Server) serve(p *ucxPeer, m *wire.Message) (resp *wire.Message) {
	defer serve.Recover(m, &resp)
	switch m.Op {
	case wire.OpPutRMA:
		start := time.Now()
		resp = s.putRMA(p, m)
		var in uint64
		if d, err := wire.ParseRMADesc(m.Payload, s.cfg.MaxMessage); err == nil && resp.Status == 0 {
			in = d.Length
		}
		s.cfg.Observer.Served(m.Op, resp.Status, int(in), 0, time.Since(start))
		return resp
	case wire.OpGetRMA:
		start := time.Now()
		resp = s.getRMA(p, m)
		out := 0
		if resp.Status == 0 {
			out = int(resp.Arg)
		}
		s.cfg.Observer.Served(m.Op, resp.Status, 0, out, time.Since(start))
		return resp
	}
	return s.cfg.Serve(context.Background(), m)
}

// rma runs one one-sided transfer between buf and the client's memory
// (get: read it into buf; put: write buf to it, then flush so the data
// has landed before the response is sent).
func (s *Server) rma(p *ucxPeer, d *wire.RMADesc, buf []byte, write bool) error {
	res := make(chan C.int, 1)
	ok := s.w.run(func() {
		if s.peers[p.ep] != p {
			res <- C.UCS_ERR_CONNECTION_RESET
			return
		}
		var rkey C.ucp_rkey_h
		if rc := C.gt_rkey_unpack(p.ep, unsafe.Pointer(&d.Rkey[0]), &rkey); rc != 0 {
			res <- rc
			return
		}
		pin := new(runtime.Pinner)
		ptr := pinned(buf, pin)
		id := s.w.id()
		var rc C.int
		if write {
			rc = C.gt_put(s.w.c, p.ep, ptr, C.size_t(len(buf)), C.uint64_t(d.Addr), rkey, C.uint64_t(id))
		} else {
			rc = C.gt_get(s.w.c, p.ep, ptr, C.size_t(len(buf)), C.uint64_t(d.Addr), rkey, C.uint64_t(id))
		}
		s.w.track(rc, id, pin, func(status C.int) {
			C.gt_rkey_destroy(rkey)
			if status != 0 || !write {
				res <- status
				return
			}
			fid := s.w.id()
			s.w.track(C.gt_flush(s.w.c, p.ep, C.uint64_t(fid)), fid, nil, func(st C.int) { res <- st })
		})
	})
	if !ok {
		return errs.New(errs.Closed, "server closed")
	}
	if rc := <-res; rc != 0 {
		return ucxStatus("one-sided transfer", rc)
	}
	return nil
}

func (s *Server) putRMA(p *ucxPeer, m *wire.Message) *wire.Message {
	d, err := wire.ParseRMADesc(m.Payload, s.cfg.MaxMessage)
	if err != nil {
		return wire.Fail(m, err)
	}
	release, err := s.cfg.Budget.ReserveFor(m, d.Length)
	if err != nil {
		return wire.Fail(m, err)
	}
	defer release()
	buf := s.cfg.Budget.Buffer(m, d.Length) // in memory the store lends, as a put's
	err = s.rma(p, d, buf, false)           // returns once UCX is done with buf
	if err == nil {
		err = s.cfg.Store.Put(context.Background(), m.Key, buf)
	}
	if err != nil {
		if m.Lent != nil {
			m.Lent(buf)
		}
		return wire.Fail(m, err)
	}
	return &wire.Message{Header: wire.Header{Op: m.Op, ID: m.ID}}
}

func (s *Server) getRMA(p *ucxPeer, m *wire.Message) *wire.Message {
	d, err := wire.ParseRMADesc(m.Payload, wire.DefaultMaxMessage)
	if err != nil {
		return wire.Fail(m, err)
	}
	frame, release, err := serve.Frame(context.Background(), s.cfg.Store, m.Key) // leased: reused once written
	if err != nil {
		return wire.Fail(m, err)
	}
	defer release()
	resp := &wire.Message{Header: wire.Header{Op: m.Op, ID: m.ID, Arg: uint64(len(frame))}}
	if uint64(len(frame)) > d.Length || len(frame) == 0 {
		return resp // the client's buffer is too small (the frame changed): it asks again
	}
	if err := s.rma(p, d, frame, true); err != nil {
		return wire.Fail(m, err)
	}
	return resp
}

func boolInt(b bool) C.int {
	if b {
		return 1
	}
	return 0
}
