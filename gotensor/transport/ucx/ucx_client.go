//go:build ucx

package ucx

/*
#include <stdlib.h>
#include "ucx_shim.h"
*/
import "C"

import (
	"context"
	"math"
	"net/url"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/store"
	"github.com/gotensor/gotensor/gotensor/transport/remote"
	"github.com/gotensor/gotensor/gotensor/transport/wire"
)

// Register makes store.Open understand ucx://.
func Register() {
	store.RegisterScheme("ucx", func(u *url.URL) (store.Store, error) { return Open(u) })
}

// ucxLink carries requests as active messages on one UCX endpoint, owned by
// the link's own worker thread.
type ucxLink struct {
	addr   string
	ip     string
	port   int
	opts   remote.Options
	cfg    Config
	rmaMin int // frames this large move one-sided (0: never)
	sizes  sizeHints
	w      *ucxWorker

	mu     sync.Mutex // one connect at a time
	closed bool

	conn  *ucxConn                // worker thread only
	ready atomic.Pointer[ucxConn] // the authenticated connection, for any goroutine
}

// ucxConn is one endpoint's life: its requests in flight and its handshake.
type ucxConn struct {
	ep     C.ucp_ep_h
	calls  remote.Calls             // worker thread only
	filled map[uint64]chan struct{} // worker thread only: calls whose payload UCX is receiving into their Into, closed once it is done
	hs     chan []byte
	dead   chan struct{}
	err    error
}

// Open opens ucx://host:port[?token=..&timeout=30s&transports=tcp&rma=1MiB].
// transports picks UCX transports (as UCX_TLS does); rma sends and fetches frames
// of at least that size one-sided (put/get on registered memory) instead
// of by rendezvous active messages; GOTENSOR_UCX_RMA sets its default.
func Open(u *url.URL) (*remote.Client, error) {
	o, err := remote.ParseOptions(u, "transports", "rma")
	if err != nil {
		return nil, err
	}
	host, port, _ := remote.HostPort(u) // checked by ParseOptions
	ip, err := resolveIP(host)
	if err != nil {
		return nil, err
	}
	q := u.Query()
	rma := q.Get("rma")
	if rma == "" {
		rma = os.Getenv("GOTENSOR_UCX_RMA")
	}
	l := &ucxLink{addr: u.Host, ip: ip, port: port, opts: o, cfg: ConfigFor(q.Get("transports"), u.Host)}
	switch rma {
	case "", "0", "off":
	case "1", "on":
		l.rmaMin = 1
	default:
		n, err := store.ParseSize(rma)
		if err != nil || n <= 0 {
			return nil, errs.New(errs.InvalidArgument, "bad rma %q in store URL (on, off or a size such as 1MiB)", rma)
		}
		l.rmaMin = int(n)
	}
	if l.w, err = startUCXWorker(l.cfg, l, nil); err != nil {
		return nil, err
	}
	if _, err := l.connect(context.Background()); err != nil { // fail fast on a bad address or token
		l.Close()
		if errs.Is(err, errs.Unavailable) && wire.SpeaksTCP(u.Host) {
			return nil, errs.New(errs.Unavailable, "the node at %s speaks tcp, not ucx: open tcp://%s", u.Host, u.Host)
		}
		return nil, err
	}
	return remote.New("ucx://"+u.Host, l), nil
}

func (l *ucxLink) isDead(cc *ucxConn) bool {
	select {
	case <-cc.dead:
		return true
	default:
		return false
	}
}

// fail ends a connection: its waiters see err. Worker thread only.
func (l *ucxLink) fail(cc *ucxConn, err error) {
	if l.isDead(cc) {
		return
	}
	cc.err = err
	close(cc.dead)
	C.gt_close_ep(l.w.c, cc.ep, 1)
	if l.conn == cc {
		l.conn = nil
	}
}

func (l *ucxLink) unavailable(err error) error {
	return errs.Wrap(errs.Unavailable, err, "connection to gotensor server %s lost", l.addr)
}

// connect returns the link's connection, connecting and authenticating
// first if there is none; an established one is found without the worker.
func (l *ucxLink) connect(ctx context.Context) (*ucxConn, error) {
	if cc := l.ready.Load(); cc != nil && !l.isDead(cc) {
		return cc, nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, errs.New(errs.Closed, "store ucx://%s is closed", l.addr)
	}
	if cc := l.ready.Load(); cc != nil && !l.isDead(cc) {
		return cc, nil
	}
	cc, err := l.dial()
	if err != nil {
		return nil, err
	}
	if err := l.handshake(ctx, cc); err != nil {
		return nil, err
	}
	l.ready.Store(cc)
	return cc, nil
}

// dial opens an endpoint and sends the hello.
func (l *ucxLink) dial() (*ucxConn, error) {
	cc := &ucxConn{hs: make(chan []byte, 2), dead: make(chan struct{})}
	hello := wire.Hello()
	rc := C.int(C.UCS_ERR_CANCELED)
	l.w.call(func() {
		ip := C.CString(l.ip)
		defer C.free(unsafe.Pointer(ip))
		if rc = C.gt_connect(l.w.c, ip, C.int(l.port), boolInt(l.cfg.errPeer()), &cc.ep); rc == 0 {
			l.conn = cc
			l.w.send(cc.ep, C.GT_AM_HANDSHAKE, hello, nil, l.sendFailed(cc))
		}
	})
	if rc != 0 {
		return nil, errs.Wrap(errs.Unavailable, ucxStatus("connect", rc), "cannot reach gotensor server %s", l.addr)
	}
	return cc, nil
}

// handshake finishes docs/PROTOCOL.md's handshake on a dialled endpoint.
func (l *ucxLink) handshake(ctx context.Context, cc *ucxConn) error {
	timer := time.NewTimer(min(l.opts.Timeout, wire.HandshakeTimeout))
	defer timer.Stop()
	recv := func() ([]byte, error) {
		select {
		case b := <-cc.hs:
			return b, nil
		case <-cc.dead:
			select { // a refusal may arrive together with the server closing
			case b := <-cc.hs:
				return b, nil
			default:
			}
			return nil, errs.Wrap(errs.Unavailable, cc.err, "cannot reach gotensor server %s", l.addr)
		case <-timer.C:
			l.w.call(func() { l.fail(cc, errs.New(errs.Timeout, "handshake timed out")) })
			return nil, errs.New(errs.Unavailable, "cannot reach gotensor server %s: no handshake within %v", l.addr, min(l.opts.Timeout, wire.HandshakeTimeout))
		case <-ctx.Done():
			l.w.call(func() { l.fail(cc, ctx.Err()) })
			return nil, remote.CtxErr(ctx, wire.OpPing, l.addr)
		}
	}
	abort := func(err error) error {
		l.w.call(func() { l.fail(cc, err) })
		return err
	}
	in, err := recv()
	if err != nil {
		return err
	}
	proof, err := wire.Proof(in, l.opts.Token, l.addr)
	if err != nil {
		return abort(err)
	}
	l.w.run(func() { l.w.send(cc.ep, C.GT_AM_HANDSHAKE, proof, nil, l.sendFailed(cc)) })
	verdict, err := recv()
	if err != nil {
		return err
	}
	if err := wire.CheckVerdict(verdict, l.addr); err != nil {
		return abort(err)
	}
	return nil
}

func (l *ucxLink) sendFailed(cc *ucxConn) func(C.int) {
	return func(status C.int) {
		if status != 0 {
			l.fail(cc, ucxStatus("send", status))
		}
	}
}

func (l *ucxLink) onAM(amID uint, ep C.ucp_ep_h, hdr, payload []byte, done func()) {
	if done != nil { // a rendezvous payload: received, whatever becomes of it
		defer done()
	}
	cc := l.conn
	if cc == nil || cc.ep != ep { // an endpoint this link has closed
		return
	}
	if amID == C.GT_AM_HANDSHAKE {
		select {
		case cc.hs <- hdr:
		default:
		}
		return
	}
	m, err := wire.ParseAMHeader(hdr, uint64(len(payload)), wire.DefaultMaxMessage)
	if err != nil {
		l.fail(cc, err)
		return
	}
	m.Payload = payload
	if err := cc.calls.Deliver(m); err != nil { // checked against its request, as in rndvBuffer
		l.fail(cc, err)
	}
}

func (l *ucxLink) onBadAM(ep C.ucp_ep_h, err error) {
	if l.conn != nil {
		l.fail(l.conn, err)
	}
}

func (l *ucxLink) onConn(req C.ucp_conn_request_h) { C.gt_reject(l.w.c, req) }

func (l *ucxLink) onEpError(ep C.ucp_ep_h, status C.int) {
	if l.conn != nil && l.conn.ep == ep {
		l.fail(l.conn, ucxStatus("endpoint", status))
	}
}

// rndvBuffer admits a response's payload of n bytes once it answers a
// request in flight as that request may be answered (see remote.Calls);
// one that does not ends the connection, and one whose caller gave up is
// dropped. A payload that would not fit this machine's memory fails its
// call: allocating it would end the process.
func (l *ucxLink) rndvBuffer(amID uint, ep C.ucp_ep_h, hdr []byte, n uint64) ([]byte, func(), bool) {
	cc := l.conn
	if cc == nil || cc.ep != ep { // an endpoint this link has closed
		return nil, nil, false
	}
	if amID != C.GT_AM_MSG {
		l.onBadAM(ep, wire.Protocol("a %d-byte payload on active message %d", n, amID))
		return nil, nil, false
	}
	h, err := wire.ParseAMHeader(hdr, n, wire.DefaultMaxMessage) // checks n against the limit
	if err != nil {
		l.onBadAM(ep, err)
		return nil, nil, false
	}
	keep, into, err := cc.calls.Admit(&h.Header, n)
	switch {
	case err != nil:
		l.fail(cc, err)
		return nil, nil, false
	case !keep:
		cc.calls.Deliver(h) // drops it
		return nil, nil, false
	case n > memTotal():
		cc.calls.Refuse(h.ID, errs.New(errs.Unavailable, "a %s response of %d bytes from %s exceeds this machine's %d bytes of memory",
			h.Op, n, l.addr, memTotal()))
		return nil, nil, false
	}
	if into != nil { // straight into the caller's memory: settle waits for it
		filled := make(chan struct{})
		if cc.filled == nil {
			cc.filled = map[uint64]chan struct{}{}
		}
		cc.filled[h.ID] = filled
		if onFill != nil {
			onFill()
		}
		return into, func() { delete(cc.filled, h.ID); close(filled) }, true
	}
	return remote.RangeBuffer(h, n), func() {}, true // frame bytes land in memory the reader gives back
}

// onFill, set by tests, runs as a payload starts into a caller's memory.
var onFill func()

// ReceivesInto: a request's Into receives its response's rendezvous
// payload (see wire.Message); an eager one, small, is copied there.
func (l *ucxLink) ReceivesInto() bool { return true }

// settle runs before call id, whose request had Into, returns without its
// response: if UCX is receiving that response into the caller's memory, it
// waits for the receive to end, or ends the connection and waits for UCX
// to end it, so that nothing writes there once the call has returned. The
// connection goes on when the receive ends in time (its payload is then
// dropped).
func (l *ucxLink) settle(cc *ucxConn, id uint64) {
	var filled chan struct{}
	if !l.w.call(func() { filled = cc.filled[id] }) || filled == nil {
		return // the worker is gone (and its operations with it), or nothing arrives there
	}
	// a forced close ends the receive, cancelled; a stopped worker has ended every operation
	remote.AwaitFill(filled, l.w.done, func() { l.w.run(func() { l.fail(cc, remote.ErrAbandoned) }) })
}

// memTotal is this machine's memory (no bound when unknown).
var memTotal = sync.OnceValue(func() uint64 {
	var si unix.Sysinfo_t
	if unix.Sysinfo(&si) != nil || si.Totalram == 0 {
		return math.MaxUint64
	}
	return uint64(si.Totalram) * uint64(max(si.Unit, 1))
})

func (l *ucxLink) Close() {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return
	}
	l.closed = true
	l.mu.Unlock()
	l.w.call(func() {
		if cc := l.conn; cc != nil {
			l.w.send(cc.ep, C.GT_AM_HANDSHAKE, []byte(wire.Bye), nil, nil)
			C.gt_progress(l.w.c)
			l.fail(cc, errs.New(errs.Closed, "store closed"))
		}
	})
	l.w.stop()
}

func (l *ucxLink) OneSided() bool { return l.rmaMin > 0 }

func (l *ucxLink) Do(ctx context.Context, m *wire.Message) (*wire.Message, error) {
	if l.rmaMin > 0 {
		switch {
		case m.Op == wire.OpPut:
			l.sizes.put(m.Key, len(m.Payload))
			if len(m.Payload) >= l.rmaMin {
				return l.putRMA(ctx, m)
			}
		case m.Op == wire.OpGet:
			return l.getRMA(ctx, m)
		}
	}
	return l.roundTrip(ctx, m)
}

// roundTrip sends one request and waits for its response, and for UCX to be
// done with its payload (see SendsInCall).
func (l *ucxLink) roundTrip(ctx context.Context, m *wire.Message) (*wire.Message, error) {
	cc, err := l.connect(ctx)
	if err != nil {
		return nil, err
	}
	ch := make(chan *wire.Message, 1)
	sent := make(chan struct{}) // closed once UCX no longer reads m.Payload
	ok := l.w.run(func() {
		if l.isDead(cc) {
			close(sent)
			return
		}
		cc.calls.Add(m, ch)
		failed := l.sendFailed(cc)
		l.w.send(cc.ep, C.GT_AM_MSG, wire.AMHeader(m, len(m.Payload)), m.Payload, func(status C.int) {
			close(sent)
			failed(status)
		})
	})
	if !ok {
		return nil, errs.New(errs.Closed, "store ucx://%s is closed", l.addr)
	}
	deadline, within := remote.Deadline(ctx, l.opts.Timeout)
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	answered := true // false when the call ended without the server's answer
	resp, err := remote.Await(ctx, ch, cc.dead, timer.C, within, m.Op, l.addr,
		func() error { answered = false; return l.unavailable(cc.err) },
		func() {
			answered = false
			l.w.run(func() {
				if err := cc.calls.Forget(m.ID); err != nil {
					l.fail(cc, err)
				}
			})
		})
	l.awaitSent(cc, sent, answered, err)
	if !answered && m.Into != nil {
		l.settle(cc, m.ID)
	}
	return resp, err
}

// awaitSent returns once UCX is done with a request's payload (sent is
// closed). A call that ends while its payload is still going out (a cancel,
// a timeout) ends the connection, as cutting a tcp request short does: a
// forced close completes the send, cancelled. A call the server answered
// before taking the payload (a refusal: StoreFull) keeps the connection:
// the server let go of the payload, so the send completes on its own; only
// a server that holds it past the link's timeout has the connection cut.
func (l *ucxLink) awaitSent(cc *ucxConn, sent chan struct{}, answered bool, err error) {
	select {
	case <-sent:
		return
	default:
	}
	if answered {
		held := time.NewTimer(l.opts.Timeout)
		defer held.Stop()
		select {
		case <-sent:
			return
		case <-cc.dead:
		case <-held.C:
			err = errs.New(errs.Timeout, "%s still held the payload %v after answering", l.addr, l.opts.Timeout)
		}
	}
	if err != nil {
		l.w.run(func() { l.fail(cc, errs.Wrap(errs.Unavailable, err, "request cut short")) })
	}
	select {
	case <-sent:
	case <-l.w.done: // the worker is gone, and with it every operation (destroy ends them)
	}
}

// SendsInCall: Do returns once UCX is done with the request's payload, so
// callers may lend it (see remote.InCall). One-sided puts keep a buffer a
// timed-out transfer may still read (see quarantine): not then.
func (l *ucxLink) SendsInCall() bool { return l.rmaMin == 0 }

// quarantine keeps buffers a timed-out one-sided transfer may still touch.
var quarantine struct {
	sync.Mutex
	bufs [][]byte
}

// withRegistered registers buf for one remote access by the server, runs
// f with its descriptor, and deregisters it. If f fails with a timeout the
// buffer is never reused: the server may still be reading or writing it.
func (l *ucxLink) withRegistered(buf []byte, f func(d []byte) error) error {
	pin := new(runtime.Pinner)
	ptr := pinned(buf, pin)
	rkey := make([]byte, wire.MaxRkey)
	var memh C.ucp_mem_h
	rlen := 0
	rc := C.int(C.UCS_ERR_CANCELED)
	l.w.call(func() { memh, rlen, rc = l.w.memMap(ptr, len(buf), rkey) })
	if rc != 0 {
		pin.Unpin()
		return ucxStatus("register memory", rc)
	}
	d := &wire.RMADesc{Addr: uint64(uintptr(ptr)), Length: uint64(len(buf)), Rkey: rkey[:rlen]}
	err := f(d.Encode())
	l.w.call(func() { l.w.memUnmap(memh) })
	if errs.Is(err, errs.Timeout) {
		quarantine.Lock()
		quarantine.bufs = append(quarantine.bufs, buf)
		quarantine.Unlock()
		return err
	}
	pin.Unpin()
	return err
}

func (l *ucxLink) putRMA(ctx context.Context, m *wire.Message) (*wire.Message, error) {
	var resp *wire.Message
	err := l.withRegistered(m.Payload, func(d []byte) (err error) {
		resp, err = l.roundTrip(ctx, &wire.Message{Header: wire.Header{Op: wire.OpPutRMA}, Key: m.Key, Payload: d})
		return err
	})
	return resp, err
}

// getRMA has the server write the frame straight into a registered buffer
// sized from what this client last saw of the key; a key it has not seen,
// or a small frame, comes back as a message, which teaches it the size.
func (l *ucxLink) getRMA(ctx context.Context, m *wire.Message) (*wire.Message, error) {
	size := l.sizes.get(m.Key)
	for range 3 { // the frame may have grown since
		if size < l.rmaMin {
			resp, err := l.roundTrip(ctx, m)
			if err == nil {
				l.sizes.put(m.Key, len(resp.Payload))
			}
			return resp, err
		}
		buf := make([]byte, size)
		var resp *wire.Message
		err := l.withRegistered(buf, func(d []byte) (err error) {
			resp, err = l.roundTrip(ctx, &wire.Message{Header: wire.Header{Op: wire.OpGetRMA}, Key: m.Key, Payload: d})
			return err
		})
		if err != nil {
			return nil, err
		}
		got := int(resp.Arg)
		l.sizes.put(m.Key, got)
		if got > 0 && got <= size { // written into buf
			resp.Payload = buf[:got]
			return resp, nil
		}
		size = got
	}
	return l.roundTrip(ctx, m)
}

// sizeHints remembers frame sizes per key for one-sided gets.
type sizeHints struct {
	mu sync.Mutex
	m  map[string]int
}

const maxHints = 1 << 16

func (h *sizeHints) get(key string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.m[key]
}

func (h *sizeHints) put(key string, n int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m == nil || len(h.m) >= maxHints { // a bound, not a cache policy: start over
		h.m = map[string]int{}
	}
	h.m[key] = n
}

// EndpointInfo describes the transports the link's endpoint uses.
func EndpointInfo(c *remote.Client) string {
	l, ok := c.Link().(*ucxLink)
	if !ok {
		return ""
	}
	buf := make([]byte, 16<<10)
	var n C.size_t
	l.w.call(func() {
		if l.conn != nil {
			n = C.gt_ep_info(l.conn.ep, (*C.char)(unsafe.Pointer(&buf[0])), C.size_t(len(buf)))
		}
	})
	return string(buf[:n])
}
