//go:build ucx

package ucx

/*
#cgo pkg-config: ucx
#include <stdlib.h>
#include "ucx_shim.h"
*/
import "C"

import (
	"log"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/gotensor/gotensor/gotensor/errs"
)

// Config chooses UCX transports for one worker.
type Config struct {
	tls        string // UCX_TLS for this worker ("" keeps UCX's choice / the environment)
	netDevices string // UCX_NET_DEVICES
}

// errPeer reports whether endpoints ask for peer failure detection. UCX
// leaves shared-memory transports out of endpoints that do, so a selection
// naming any of them runs without it (request timeouts still apply).
func (c Config) errPeer() bool {
	tls := c.tls
	if tls == "" {
		tls = os.Getenv("UCX_TLS")
	}
	if strings.HasPrefix(tls, "^") {
		return true
	}
	for _, t := range strings.Split(tls, ",") {
		switch strings.TrimSpace(t) {
		case "sm", "shm", "posix", "sysv", "cma", "knem", "xpmem":
			return false
		}
	}
	return true
}

// ucxEvents receives what the worker delivers; every method runs on the
// worker's thread and must not block.
type ucxEvents interface {
	// onAM delivers a message; release (nil for eager data) returns the
	// payload's budget
	onAM(amID uint, ep C.ucp_ep_h, hdr, payload []byte, release func())
	onBadAM(ep C.ucp_ep_h, err error) // a message that could not be received
	onConn(req C.ucp_conn_request_h)
	onEpError(ep C.ucp_ep_h, status C.int)
	// rndvBuffer admits a rendezvous payload of n bytes: the buffer UCX
	// places it in and what to release after, or false to drop it (the
	// receiver has answered or closed the endpoint).
	rndvBuffer(amID uint, ep C.ucp_ep_h, hdr []byte, n uint64) (buf []byte, release func(), ok bool)
}

// ucxWorker owns one UCX context and worker. A single goroutine, locked to
// its OS thread, makes every UCX call; other goroutines hand it closures.
type ucxWorker struct {
	c    *C.gt_worker
	ev   ucxEvents
	cmds chan func()
	quit chan struct{}
	done chan struct{}

	wmu     sync.RWMutex // guards wake against destroy
	stopped bool

	// worker-thread state
	ops    map[uint64]func(status C.int)
	nextID uint64
	mapped map[C.ucp_mem_h]struct{} // registered memory, unmapped at the latest on destroy
}

func ucxStatus(what string, rc C.int) error {
	return errs.New(errs.Unavailable, "ucx: %s: %s", what, C.GoString(C.gt_status_string(rc)))
}

// startUCXWorker creates the worker on a fresh locked goroutine.
func startUCXWorker(cfg Config, ev ucxEvents, setup func(w *ucxWorker) error) (*ucxWorker, error) {
	w := &ucxWorker{ev: ev, cmds: make(chan func(), 1024), quit: make(chan struct{}), done: make(chan struct{}),
		ops: map[uint64]func(C.int){}, mapped: map[C.ucp_mem_h]struct{}{}}
	ready := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer close(w.done)
		tls, dev := C.CString(cfg.tls), C.CString(cfg.netDevices)
		var ebuf [256]C.char
		rc := C.gt_init(&w.c, tls, dev, &ebuf[0], C.size_t(len(ebuf)))
		C.free(unsafe.Pointer(tls))
		C.free(unsafe.Pointer(dev))
		if rc != 0 {
			ready <- errs.New(errs.Unavailable, "ucx: %s", C.GoString(&ebuf[0]))
			return
		}
		if setup != nil {
			if err := setup(w); err != nil {
				w.destroy()
				ready <- err
				return
			}
		}
		ready <- nil
		w.loop()
	}()
	if err := <-ready; err != nil {
		return nil, err
	}
	return w, nil
}

// spin is how long the worker keeps polling after its last event before
// it sleeps on its event fd: a reply that comes sooner costs no thread
// wake-up, a longer wait costs no CPU. GOTENSOR_UCX_SPIN_US sets it
// (microseconds). The default is 50 us, and 0 on machines with fewer than
// 4 CPUs: there a polling thread takes the core the peer or the caller
// needs (measured on 2 cores: a 4 KiB round trip over ucx-sm took about
// 55 us without spinning, 140 us with 50 us of it).
var spin = func() time.Duration {
	if n, err := strconv.Atoi(os.Getenv("GOTENSOR_UCX_SPIN_US")); err == nil && n >= 0 {
		return time.Duration(n) * time.Microsecond
	}
	if runtime.NumCPU() < 4 {
		return 0
	}
	return 50 * time.Microsecond
}()

func (w *ucxWorker) loop() {
	last := time.Now()
	for {
		busy := C.gt_progress(w.c) > 0
		delivered := false
		for e := C.gt_pop(w.c); e != nil; e = C.gt_pop(w.c) {
			w.dispatch(e)
			busy, delivered = true, true
		}
	cmds:
		for {
			select {
			case f := <-w.cmds:
				w.protect(f)
				busy = true
			default:
				break cmds
			}
		}
		select {
		case <-w.quit:
			w.destroy()
			return
		default:
		}
		if busy {
			last = time.Now()
			if delivered {
				// goroutines this thread readied sit on its P: let them run now
				runtime.Gosched()
			}
			continue
		}
		if time.Since(last) < spin {
			continue
		}
		// goroutines this thread readied sit on its P; yield so they run
		// elsewhere now, not once the runtime retakes the P from the
		// blocking call below
		runtime.Gosched()
		C.gt_wait(w.c, 100)
		last = time.Now()
	}
}

func (w *ucxWorker) destroy() {
	w.wmu.Lock()
	w.stopped = true
	w.wmu.Unlock()
	for m := range w.mapped { // UCX refuses to clean up while memory is registered
		C.gt_mem_unmap(w.c, m)
	}
	C.gt_destroy(w.c)
	w.c = nil
	for id, f := range w.ops { // UCX is gone: release what the operations pinned
		delete(w.ops, id)
		f(C.UCS_ERR_CANCELED)
	}
}

// run hands f to the worker thread.
func (w *ucxWorker) run(f func()) bool {
	w.wmu.RLock()
	defer w.wmu.RUnlock()
	if w.stopped {
		return false
	}
	select {
	case w.cmds <- f:
	case <-w.quit:
		return false
	}
	C.gt_wake(w.c)
	return true
}

// protect runs f on the worker thread; a panic in it is logged and the
// worker goes on (the caller of call sees f return).
func (w *ucxWorker) protect(f func()) {
	defer func() {
		if r := recover(); r != nil {
			log.Printf("gotensor: ucx worker: recovered from a panic: %v", r)
		}
	}()
	f()
}

// call runs f on the worker thread and waits for it.
func (w *ucxWorker) call(f func()) bool {
	done := make(chan struct{})
	if !w.run(func() { defer close(done); f() }) {
		return false
	}
	select {
	case <-done:
		return true
	case <-w.done:
		return false
	}
}

func (w *ucxWorker) stop() {
	select {
	case <-w.quit:
	default:
		close(w.quit)
		w.wmu.RLock()
		if !w.stopped {
			C.gt_wake(w.c)
		}
		w.wmu.RUnlock()
	}
	<-w.done
}

func (w *ucxWorker) id() uint64 {
	w.nextID++
	return w.nextID
}

// track finishes an operation the shim started: at once (rc 0 or an
// error) or when its completion event arrives (rc 1).
func (w *ucxWorker) track(rc C.int, id uint64, pin *runtime.Pinner, then func(status C.int)) {
	finish := func(status C.int) {
		if pin != nil {
			pin.Unpin()
		}
		if then != nil {
			then(status)
		}
	}
	if rc == 1 {
		w.ops[id] = finish
		return
	}
	finish(rc)
}

func pinned(b []byte, pin *runtime.Pinner) unsafe.Pointer {
	if len(b) == 0 {
		return nil
	}
	pin.Pin(&b[0])
	return unsafe.Pointer(&b[0])
}

// send posts one active message; payload stays pinned until UCX is done
// with it. Worker thread only.
func (w *ucxWorker) send(ep C.ucp_ep_h, amID uint, hdr, payload []byte, then func(status C.int)) {
	h := C.CBytes(hdr) // the shim frees it when the send completes
	pin := new(runtime.Pinner)
	id := w.id()
	rc := C.gt_send(w.c, ep, C.uint(amID), h, C.size_t(len(hdr)), pinned(payload, pin), C.size_t(len(payload)), C.uint64_t(id))
	w.track(rc, id, pin, then)
}

// dispatch delivers one event; a panic while handling a message closes
// that endpoint (its requests fail), and the worker goes on.
func (w *ucxWorker) dispatch(e *C.gt_event) {
	defer C.gt_free_event(e)
	defer func() {
		if r := recover(); r != nil {
			err := errs.New(errs.Internal, "panic handling a ucx event: %v", r)
			if e.kind == C.GT_EV_AM && e.ep != nil {
				w.protect(func() { w.ev.onBadAM(e.ep, err) })
				return
			}
			log.Printf("gotensor: ucx worker: %v", err)
		}
	}()
	switch e.kind {
	case C.GT_EV_DONE:
		if f := w.ops[uint64(e.id)]; f != nil {
			delete(w.ops, uint64(e.id))
			f(e.status)
		}
	case C.GT_EV_CONN:
		w.ev.onConn(e.conn)
	case C.GT_EV_EP_ERR:
		w.ev.onEpError(e.ep, e.status)
	case C.GT_EV_AM:
		hdr := C.GoBytes(e.hdr, C.int(e.hdr_len))
		amID, ep, n := uint(e.am_id), e.ep, uint64(e.len)
		if e.rndv == 0 {
			var payload []byte
			if n > 0 {
				payload = C.GoBytes(e.data, C.int(n))
			}
			w.ev.onAM(amID, ep, hdr, payload, nil)
			return
		}
		// rendezvous: admit the payload before allocating, then let UCX
		// place it straight into its Go buffer
		buf, release, ok := w.ev.rndvBuffer(amID, ep, hdr, n)
		if !ok {
			C.gt_am_release(w.c, e.data)
			return
		}
		pin := new(runtime.Pinner)
		id := w.id()
		rc := C.gt_recv_rndv(w.c, e.data, pinned(buf, pin), C.size_t(n), C.uint64_t(id))
		w.track(rc, id, pin, func(status C.int) {
			if status != 0 {
				release()
				w.ev.onBadAM(ep, ucxStatus("receive", status))
				return
			}
			w.ev.onAM(amID, ep, hdr, buf, release)
		})
	}
}

// memMap registers buf for remote access and packs its key into rkey;
// worker thread only.
func (w *ucxWorker) memMap(ptr unsafe.Pointer, n int, rkey []byte) (C.ucp_mem_h, int, C.int) {
	var memh C.ucp_mem_h
	rlen := C.size_t(len(rkey))
	rc := C.gt_mem_map(w.c, ptr, C.size_t(n), &memh, unsafe.Pointer(&rkey[0]), &rlen)
	if rc == 0 {
		w.mapped[memh] = struct{}{}
	}
	return memh, int(rlen), rc
}

func (w *ucxWorker) memUnmap(memh C.ucp_mem_h) {
	if _, ok := w.mapped[memh]; ok {
		delete(w.mapped, memh)
		C.gt_mem_unmap(w.c, memh)
	}
}

// maxAMHeader is the largest AM header the worker's transports carry.
func (w *ucxWorker) maxAMHeader() int { return int(C.gt_max_am_header(w.c)) }
