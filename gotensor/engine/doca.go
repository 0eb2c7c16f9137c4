//go:build doca

// The DOCA engine offloads raw DEFLATE decompression (and, where the
// device has them, DEFLATE compression and LZ4 block decompression) to a
// BlueField's compression engine through DOCA Compress 2.6 or later. It
// keeps a fixed set of task slots whose staging buffers are registered
// with the device once; each call copies its chunk into a slot, submits a
// task and polls for the completion with a backoff and a timeout, so
// several goroutines keep several tasks in flight. A chunk the device
// cannot take (too large, a capability it lacks, a failed or timed-out
// task, a stopped context) is done in software and counted; a stopped
// context is restarted. The C half is doca_engine.c.
//
// The device reports no count of input consumed, so bytes after the end of
// a DEFLATE stream go unnoticed here (software rejects them); the Adler-32
// the codec checks and the frame's chunk CRC still hold.
package engine

/*
#cgo CFLAGS: -DDOCA_ALLOW_EXPERIMENTAL_API -Werror=implicit-function-declaration
#include <stdlib.h>
#include <doca_ctx.h>
#include "doca_engine.h"
*/
import "C"

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/gotensor/gotensor/gotensor/errs"
)

// DOCAOptions tune OpenDOCA; zero fields take the defaults.
type DOCAOptions struct {
	Tasks    int           // task slots, the most tasks in flight (default 8)
	BufBytes int           // staging bytes per slot, capped by the device's maximum (default 2 MiB)
	Timeout  time.Duration // the longest wait for one task (default 2 s)
	Compress bool          // compress DEFLATE on the device where it can (BlueField-2)
}

// DOCAOptionsFromEnv reads GOTENSOR_DOCA_TASKS, GOTENSOR_DOCA_BUF_BYTES,
// GOTENSOR_DOCA_TIMEOUT (a Go duration) and GOTENSOR_DOCA_COMPRESS (0 keeps
// compression in software).
func DOCAOptionsFromEnv() DOCAOptions {
	o := DOCAOptions{Compress: os.Getenv("GOTENSOR_DOCA_COMPRESS") != "0"}
	o.Tasks, _ = strconv.Atoi(os.Getenv("GOTENSOR_DOCA_TASKS"))
	o.BufBytes, _ = strconv.Atoi(os.Getenv("GOTENSOR_DOCA_BUF_BYTES"))
	o.Timeout, _ = time.ParseDuration(os.Getenv("GOTENSOR_DOCA_TIMEOUT"))
	return o
}

func (o *DOCAOptions) defaults() {
	if o.Tasks <= 0 {
		o.Tasks = 8
	}
	if o.BufBytes <= 0 {
		o.BufBytes = 2 << 20
	}
	if o.Timeout <= 0 {
		o.Timeout = 2 * time.Second
	}
}

// DOCAStats counts what the engine did since it opened.
type DOCAStats struct {
	Tasks     int64 // tasks the device completed
	Fallbacks int64 // calls done in software, for any reason below or a capability it lacks
	TooLarge  int64 // chunks over the device's (or the slots') maximum buffer
	Failed    int64 // tasks that completed with an error
	Timeouts  int64 // tasks that did not complete in time
	Restarts  int64 // context restarts
	Busy      int64 // calls that found no free slot in time
}

type op int

const (
	opInflate op = C.GT_INFLATE
	opDeflate op = C.GT_DEFLATE
	opLZ4     op = C.GT_LZ4
)

var opNames = [...]string{opInflate: "deflate-decompress", opDeflate: "deflate-compress", opLZ4: "lz4-block-decompress"}

// DOCA is the engine; it is safe for concurrent use.
type DOCA struct {
	pci       string
	opt       DOCAOptions
	has       [C.GT_OPS]bool
	slotBytes int
	free      chan int // idle slots

	mu         sync.Mutex // guards g and the fields below; never held while waiting
	g          *C.gt_doca
	closed     bool
	active     int   // callers with a task submitted; Close waits for them
	lost       []int // slots whose task timed out, back after a restart
	recovering bool
	retryAt    time.Time // after a failed restart, the next attempt
	backoff    time.Duration
	lastErr    string

	stats struct{ tasks, fallbacks, tooLarge, failed, timeouts, restarts, busy atomic.Int64 }
}

func init() {
	docaBuilt = true
	pci := os.Getenv("GOTENSOR_DOCA_PCI")
	if pci == "" {
		setDOCAStatus("off (GOTENSOR_DOCA_PCI is not set)", nil)
		return
	}
	d, err := OpenDOCA(pci, DOCAOptionsFromEnv())
	if err != nil {
		setDOCAStatus("", err)
		return
	}
	Use(d)
	docaStatus.Store(docaState{live: d.Status})
}

// OpenDOCA opens the DOCA Compress device at a PCI address (e.g. 03:00.0),
// trying every device at that address. The error is Unavailable when no
// device opens and Unsupported when the device has no DEFLATE decompression.
func OpenDOCA(pci string, opt DOCAOptions) (*DOCA, error) {
	opt.defaults()
	cs := C.CString(pci)
	defer C.free(unsafe.Pointer(cs))
	var why [256]C.char
	var caps C.gt_caps
	var g *C.gt_doca
	rc := C.gt_doca_open(cs, C.uint32_t(opt.Tasks), C.size_t(opt.BufBytes), cbool01(opt.Compress), &g, &caps,
		&why[0], C.size_t(len(why)))
	if rc != C.DOCA_SUCCESS {
		kind := errs.Unavailable
		if rc == C.DOCA_ERROR_NOT_SUPPORTED {
			kind = errs.Unsupported
		}
		return nil, errs.New(kind, "DOCA: opening %s: %s", pci, C.GoString(&why[0]))
	}
	d := &DOCA{pci: pci, opt: opt, g: g, slotBytes: int(caps.slot_bytes), free: make(chan int, int(caps.slots))}
	for i := range d.has {
		d.has[i] = caps.has[i] != 0
	}
	for i := 0; i < int(caps.slots); i++ {
		d.free <- i
	}
	return d, nil
}

func cbool01(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

func (d *DOCA) Name() string { return "doca" }

// Describe says which device and what it runs in hardware.
func (d *DOCA) Describe() string {
	s := "doca " + d.pci + ":"
	for i, ok := range d.has {
		if ok {
			s += " " + opNames[i]
		}
	}
	return s + ", " + strconv.Itoa(cap(d.free)) + " tasks of " + strconv.Itoa(d.slotBytes>>10) + " KiB"
}

// MaxChunk is the largest chunk the device takes in one task: the frame's
// chunk size should not exceed it for chunks to run in hardware.
func (d *DOCA) MaxChunk() int { return d.slotBytes }

// Stats returns the engine's counters.
func (d *DOCA) Stats() DOCAStats {
	s := &d.stats
	return DOCAStats{Tasks: s.tasks.Load(), Fallbacks: s.fallbacks.Load(), TooLarge: s.tooLarge.Load(),
		Failed: s.failed.Load(), Timeouts: s.timeouts.Load(), Restarts: s.restarts.Load(), Busy: s.busy.Load()}
}

func (d *DOCA) Inflate(dst, src []byte) (uint32, error) {
	if n, sum, ok := d.run(opInflate, src, len(dst), dst); ok && n == len(dst) {
		return sum, nil
	}
	d.stats.fallbacks.Add(1)
	return Software{}.Inflate(dst, src)
}

func (d *DOCA) LZ4Block(dst, src []byte) error {
	if n, _, ok := d.run(opLZ4, src, len(dst), dst); ok && n == len(dst) {
		return nil
	}
	d.stats.fallbacks.Add(1)
	return Software{}.LZ4Block(dst, src)
}

// Deflate compresses src as raw DEFLATE on the device, appending to
// dst[:0]; ok is false when it did not (the caller compresses in software).
func (d *DOCA) Deflate(dst, src []byte) ([]byte, uint32, bool) {
	if !d.has[opDeflate] || len(src) == 0 {
		return nil, 0, false
	}
	out := dst[:0]
	if cap(out) < d.slotBytes {
		out = make([]byte, 0, d.slotBytes)
	}
	n, sum, ok := d.run(opDeflate, src, d.slotBytes, out[:d.slotBytes])
	if !ok {
		d.stats.fallbacks.Add(1)
		return nil, 0, false
	}
	return out[:n], sum, true
}

// run does one task: src staged into a slot, at most dstCap bytes of
// output copied to out. ok is false when the device did not do it.
func (d *DOCA) run(o op, src []byte, dstCap int, out []byte) (n int, sum uint32, ok bool) {
	if !d.has[o] || len(src) == 0 || dstCap == 0 {
		return 0, 0, false
	}
	if len(src) > d.slotBytes || dstCap > d.slotBytes {
		d.stats.tooLarge.Add(1)
		return 0, 0, false
	}
	deadline := time.Now().Add(d.opt.Timeout)
	slot, got := d.acquire(deadline)
	if !got {
		return 0, 0, false
	}
	d.mu.Lock()
	if d.closed || !d.ready() {
		d.mu.Unlock()
		d.free <- slot
		return 0, 0, false
	}
	d.active++ // keeps g alive until leave
	s := C.gt_doca_slot(d.g, C.uint32_t(slot))
	d.mu.Unlock()
	defer d.leave()
	// the slot is this caller's alone: stage the chunk without the mutex
	copy(unsafe.Slice((*byte)(unsafe.Pointer(s.src)), len(src)), src)
	d.mu.Lock()
	var rc C.doca_error_t = C.DOCA_ERROR_SHUTDOWN
	if !d.closed {
		rc = C.gt_doca_submit(d.g, C.uint32_t(slot), C.int(o), C.size_t(len(src)), C.size_t(dstCap))
	}
	d.mu.Unlock()
	if rc != C.DOCA_SUCCESS {
		d.stats.failed.Add(1)
		d.free <- slot
		return 0, 0, false
	}
	if !d.wait(s, deadline) {
		d.stats.timeouts.Add(1)
		d.mu.Lock()
		d.lost = append(d.lost, slot) // the device may still write it: kept until the context restarts
		d.mu.Unlock()
		return 0, 0, false
	}
	defer func() { d.free <- slot }()
	if s.status != C.DOCA_SUCCESS || int(s.out_len) > len(out) {
		d.stats.failed.Add(1)
		return 0, 0, false
	}
	n = int(s.out_len)
	copy(out[:n], unsafe.Slice((*byte)(unsafe.Pointer(s.dst)), n))
	d.stats.tasks.Add(1)
	return n, uint32(s.adler), true
}

func (d *DOCA) leave() {
	d.mu.Lock()
	d.active--
	d.mu.Unlock()
}

func (d *DOCA) acquire(deadline time.Time) (int, bool) {
	select {
	case i := <-d.free:
		return i, true
	default:
	}
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case i := <-d.free:
		return i, true
	case <-t.C:
		d.stats.busy.Add(1)
		return 0, false
	}
}

// Polling: yield to other goroutines (no timer) for the first spinPoll of
// a wait, then sleep with a pause doubling up to maxPoll. A hardware task
// takes tens to hundreds of microseconds; one timer sleep costs 50 µs to
// 1 ms depending on the machine's load.
const (
	spinPoll = time.Millisecond
	maxPoll  = 50 * time.Microsecond
)

// wait drives the progress engine until slot s completes or the deadline.
func (d *DOCA) wait(s *C.gt_slot, deadline time.Time) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.progressUntil(func() bool { return s.state == C.GT_SLOT_DONE }, deadline)
}

// ready reports whether the context runs, restarting it first when it has
// stopped or a task was lost. Only one caller restarts; the others fall
// back meanwhile. Called with mu held; it may drop mu while waiting.
func (d *DOCA) ready() bool {
	if C.gt_doca_state(d.g) == C.DOCA_CTX_STATE_RUNNING && len(d.lost) == 0 {
		return true
	}
	if d.recovering || time.Now().Before(d.retryAt) {
		return false
	}
	d.recovering = true
	defer func() { d.recovering = false }()
	if err := d.restart(); err != "" {
		d.backoff = min(max(2*d.backoff, 100*time.Millisecond), time.Minute)
		d.retryAt = time.Now().Add(d.backoff)
		d.lastErr = err
		return false
	}
	d.backoff, d.lastErr = 0, ""
	d.stats.restarts.Add(1)
	return true
}

// restart stops the context, lets the progress engine flush its tasks,
// returns the lost slots and starts the context again.
func (d *DOCA) restart() string {
	if C.gt_doca_state(d.g) == C.DOCA_CTX_STATE_RUNNING {
		if rc := C.gt_doca_stop(d.g); rc != C.DOCA_SUCCESS {
			return "stopping the context: " + C.GoString(C.doca_error_get_descr(rc))
		}
	}
	// gives up when Close begins (which waits for this restart)
	stopped := d.progressUntil(func() bool { return d.closed || d.idle() }, time.Now().Add(d.opt.Timeout))
	switch {
	case d.closed:
		return "closed"
	case !stopped:
		return "the context did not stop in " + d.opt.Timeout.String()
	}
	kept := d.lost[:0]
	for _, i := range d.lost {
		if C.gt_doca_slot(d.g, C.uint32_t(i)).state == C.GT_SLOT_BUSY {
			kept = append(kept, i)
		} else {
			d.free <- i
		}
	}
	d.lost = kept
	if rc := C.gt_doca_start(d.g); rc != C.DOCA_SUCCESS {
		return "starting the context: " + C.GoString(C.doca_error_get_descr(rc))
	}
	return ""
}

// progressUntil drives the progress engine until done() or the deadline,
// with a growing pause between polls. mu is held on entry and exit and
// dropped while sleeping, so one stalled task holds up no other caller.
// (g stays valid: Close waits for active callers and a restart.)
func (d *DOCA) progressUntil(done func() bool, deadline time.Time) bool {
	start := time.Now()
	for pause := time.Microsecond; ; {
		C.gt_doca_progress(d.g)
		if done() {
			return true
		}
		now := time.Now()
		if now.After(deadline) {
			return false
		}
		d.mu.Unlock()
		if now.Sub(start) < spinPoll {
			runtime.Gosched()
		} else {
			time.Sleep(pause)
			pause = min(2*pause, maxPoll)
		}
		d.mu.Lock()
	}
}

func (d *DOCA) idle() bool { return C.gt_doca_state(d.g) == C.DOCA_CTX_STATE_IDLE }

// Health is "" while the device runs, else why it does not.
func (d *DOCA) Health() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	switch {
	case d.closed:
		return "closed"
	case d.lastErr != "":
		return d.lastErr
	}
	return ""
}

// Status is Describe, the health and the counters, for reports.
func (d *DOCA) Status() string {
	s := d.Describe()
	if h := d.Health(); h != "" {
		s += "; not running: " + h
	}
	st := d.Stats()
	return s + fmt.Sprintf("; tasks %d, software %d (too large %d, failed %d, timed out %d, busy %d), restarts %d",
		st.Tasks, st.Fallbacks, st.TooLarge, st.Failed, st.Timeouts, st.Busy, st.Restarts)
}

// Close stops the context, waiting up to the timeout for tasks in flight,
// and releases the device and everything registered with it. Calls after
// Close run in software.
func (d *DOCA) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil
	}
	d.closed = true
	if C.gt_doca_state(d.g) == C.DOCA_CTX_STATE_RUNNING {
		C.gt_doca_stop(d.g)
	}
	deadline := time.Now().Add(d.opt.Timeout)
	if !d.progressUntil(d.idle, deadline) {
		return errs.New(errs.Timeout, "DOCA: closing %s: tasks still in flight after %s", d.pci, d.opt.Timeout)
	}
	for d.active > 0 || d.recovering { // tasks flushed: callers are copying out or leaving
		d.mu.Unlock()
		time.Sleep(100 * time.Microsecond)
		d.mu.Lock()
	}
	if rc := C.gt_doca_close(d.g); rc != C.DOCA_SUCCESS {
		return errs.New(errs.Internal, "DOCA: closing %s: %s", d.pci, C.GoString(C.doca_error_get_descr(rc)))
	}
	d.g = nil
	return nil
}
