//go:build ucx

package transport

/*
#include <stdlib.h>
#include "ucx_shim.h"
*/
import "C"

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"encoding/binary"
	"net"
	"os"
	"runtime"
	"strconv"
	"sync"
	"time"
	"unsafe"

	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/store"
)

// UCXBuilt reports whether this build carries the UCX transport.
const UCXBuilt = true

// ucxConfigFor keeps loopback traffic on the loopback device unless
// UCX_NET_DEVICES says otherwise.
func ucxConfigFor(tls, addr string) ucxConfig {
	c := ucxConfig{tls: tls}
	if host, _, err := net.SplitHostPort(addr); err == nil {
		if ip := net.ParseIP(host); (ip != nil && ip.IsLoopback()) || host == "localhost" {
			if os.Getenv("UCX_NET_DEVICES") == "" {
				c.netDevices = "lo"
			}
		}
	}
	return c
}

// UCXServer serves a store over UCX: requests and responses are active
// messages (rendezvous moves large payloads zero-copy), and the one-sided
// ops read and write the client's registered memory directly.
type UCXServer struct {
	cfg      ServerConfig
	u        ucxConfig
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
	ups   *uploads
	ep    C.ucp_ep_h
	state peerState
	nonce []byte
	sem   chan struct{}
}

// ListenUCX serves cfg.Store on addr (host:port; port 0 picks one).
func ListenUCX(addr string, cfg ServerConfig, u ucxConfig) (*UCXServer, error) {
	cfg = cfg.withDefaults()
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
	s := &UCXServer{cfg: cfg, u: u, peers: map[C.ucp_ep_h]*ucxPeer{}, inline: store.IsNonblocking(cfg.Store)}
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
func (s *UCXServer) Addr() string { return s.addr }

// Close stops accepting, waits for requests in flight and releases UCX.
func (s *UCXServer) Close() error {
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

func (s *UCXServer) drop(ep C.ucp_ep_h) {
	if _, ok := s.peers[ep]; !ok {
		return
	}
	delete(s.peers, ep)
	C.gt_close_ep(s.w.c, ep, 1)
}

func (s *UCXServer) onConn(req C.ucp_conn_request_h) {
	var ep C.ucp_ep_h
	if rc := C.gt_accept(s.w.c, req, boolInt(s.u.errPeer()), &ep); rc != 0 {
		s.cfg.Logf("gotensor serve: ucx accept: %v", ucxStatus("accept", rc))
		return
	}
	s.peers[ep] = &ucxPeer{ep: ep, sem: make(chan struct{}, s.cfg.MaxInflight), ups: newUploads(s.cfg.MaxMessage)}
}

func (s *UCXServer) onEpError(ep C.ucp_ep_h, status C.int) {
	s.drop(ep)
}

func (s *UCXServer) onBadAM(ep C.ucp_ep_h, err error) {
	s.cfg.Logf("gotensor serve: ucx peer: closing: %v", err)
	s.drop(ep)
}

func (s *UCXServer) maxPayload(hdr []byte) uint64 { return s.cfg.MaxMessage }

func (s *UCXServer) onAM(amID uint, ep C.ucp_ep_h, hdr, payload []byte) {
	p := s.peers[ep]
	if p == nil {
		return // from an endpoint already dropped
	}
	if amID == C.GT_AM_HANDSHAKE {
		s.handshake(p, hdr)
		return
	}
	if p.state != ready { // nothing is served before the handshake succeeds
		s.onBadAM(ep, errs.New(errs.Unauthorized, "request before authentication"))
		return
	}
	m, err := parseAMHeader(hdr, uint64(len(payload)), s.cfg.MaxMessage)
	if err != nil {
		s.onBadAM(ep, err)
		return
	}
	m.payload = payload
	if isUpload(m.op) { // parts are kept per endpoint; a commit goes on as a put
		if resp := p.ups.handle(m); resp != nil {
			s.w.send(p.ep, C.GT_AM_MSG, amHeader(resp, len(resp.payload)), resp.payload, nil)
			return
		}
	}
	if s.inline && m.op != OpPutRMA && m.op != OpGetRMA { // a map access: no goroutine hand-off
		resp := handleRequest(s.cfg.Store, m)
		s.w.send(p.ep, C.GT_AM_MSG, amHeader(resp, len(resp.payload)), resp.payload, func(status C.int) {
			if status != 0 {
				s.onBadAM(p.ep, ucxStatus("send", status))
			}
		})
		return
	}
	s.handlers.Add(1)
	go func() {
		defer s.handlers.Done()
		p.sem <- struct{}{}
		resp := s.serve(p, m)
		<-p.sem
		s.reply(p, resp)
	}()
}

func (s *UCXServer) reply(p *ucxPeer, resp *message) {
	s.w.run(func() {
		if s.peers[p.ep] != p {
			return // the client is gone
		}
		s.w.send(p.ep, C.GT_AM_MSG, amHeader(resp, len(resp.payload)), resp.payload, func(status C.int) {
			if status != 0 {
				s.onBadAM(p.ep, ucxStatus("send", status))
			}
		})
	})
}

// handshake is docs/PROTOCOL.md's, each step one active message.
func (s *UCXServer) handshake(p *ucxPeer, b []byte) {
	switch p.state {
	case awaitHello:
		if len(b) != 8 || [4]byte(b[:4]) != Magic || binary.LittleEndian.Uint16(b[4:]) != Version {
			s.onBadAM(p.ep, protoErr("bad hello %x", b))
			return
		}
		out := make([]byte, 8+nonceSize)
		copy(out, Magic[:])
		binary.LittleEndian.PutUint16(out[4:], Version)
		if len(s.cfg.Token) > 0 {
			binary.LittleEndian.PutUint16(out[6:], 1)
		}
		p.nonce = out[8:]
		rand.Read(p.nonce)
		p.state = awaitProof
		s.w.send(p.ep, C.GT_AM_HANDSHAKE, out, nil, nil)
	case awaitProof:
		ok := len(b) == macSize && (len(s.cfg.Token) == 0 || hmac.Equal(b, mac(s.cfg.Token, p.nonce)))
		verdict := []byte{0}
		if !ok {
			verdict[0] = uint8(errs.Unauthorized) + 1
		}
		if ok {
			p.state = ready
			s.w.send(p.ep, C.GT_AM_HANDSHAKE, verdict, nil, nil)
			return
		}
		s.cfg.Logf("gotensor serve: ucx peer: bad token")
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
		if string(b) == bye {
			s.drop(p.ep)
			return
		}
		s.onBadAM(p.ep, protoErr("handshake message after the handshake"))
	}
}

// serve runs one request; the one-sided ops move the frame with RMA.
func (s *UCXServer) serve(p *ucxPeer, m *message) *message {
	switch m.op {
	case OpPutRMA:
		return s.putRMA(p, m)
	case OpGetRMA:
		return s.getRMA(p, m)
	}
	return handleRequest(s.cfg.Store, m)
}

func failed(m *message, err error) *message {
	return &message{header: header{op: m.op, id: m.id, status: statusOf(err)}, payload: []byte(err.Error())}
}

// rma runs one one-sided transfer between buf and the client's memory
// (get: read it into buf; put: write buf to it, then flush so the data
// has landed before the response is sent).
func (s *UCXServer) rma(p *ucxPeer, d *rmaDesc, buf []byte, write bool) error {
	res := make(chan C.int, 1)
	ok := s.w.run(func() {
		if s.peers[p.ep] != p {
			res <- C.UCS_ERR_CONNECTION_RESET
			return
		}
		var rkey C.ucp_rkey_h
		if rc := C.gt_rkey_unpack(p.ep, unsafe.Pointer(&d.rkey[0]), &rkey); rc != 0 {
			res <- rc
			return
		}
		pin := new(runtime.Pinner)
		ptr := pinned(buf, pin)
		id := s.w.id()
		var rc C.int
		if write {
			rc = C.gt_put(s.w.c, p.ep, ptr, C.size_t(len(buf)), C.uint64_t(d.addr), rkey, C.uint64_t(id))
		} else {
			rc = C.gt_get(s.w.c, p.ep, ptr, C.size_t(len(buf)), C.uint64_t(d.addr), rkey, C.uint64_t(id))
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

func (s *UCXServer) putRMA(p *ucxPeer, m *message) *message {
	d, err := parseRMADesc(m.payload, s.cfg.MaxMessage)
	if err != nil {
		return failed(m, err)
	}
	buf := make([]byte, d.length)
	if err := s.rma(p, d, buf, false); err != nil {
		return failed(m, err)
	}
	if err := s.cfg.Store.Put(context.Background(), m.key, buf); err != nil {
		return failed(m, err)
	}
	return &message{header: header{op: m.op, id: m.id}}
}

func (s *UCXServer) getRMA(p *ucxPeer, m *message) *message {
	d, err := parseRMADesc(m.payload, DefaultMaxMessage)
	if err != nil {
		return failed(m, err)
	}
	frame, err := s.cfg.Store.Get(context.Background(), m.key)
	if err != nil {
		return failed(m, err)
	}
	resp := &message{header: header{op: m.op, id: m.id, arg: uint64(len(frame))}}
	if uint64(len(frame)) > d.length || len(frame) == 0 {
		return resp // the client's buffer is too small (the frame changed): it asks again
	}
	if err := s.rma(p, d, frame, true); err != nil {
		return failed(m, err)
	}
	return resp
}

func boolInt(b bool) C.int {
	if b {
		return 1
	}
	return 0
}
