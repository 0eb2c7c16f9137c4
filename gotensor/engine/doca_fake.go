//go:build doca && fakedoca

package engine

// The engine against gotensor's fake DOCA (fakedoca/): zlib and liblz4 do
// the device's work, and tests configure it and inject faults through the
// functions below, which exist only in this build.

/*
#cgo CFLAGS: -I${SRCDIR}/fakedoca/include
#cgo LDFLAGS: -lz -llz4 -lpthread
#include <stdlib.h>
#include "fakedoca/fakedoca.h"
*/
import "C"

import "unsafe"

// FakePCI is the address of the fake's default device.
const FakePCI = "0000:3b:00.0"

// Capabilities of a fake device.
const (
	FakeCapInflate = C.FAKEDOCA_CAP_INFLATE
	FakeCapDeflate = C.FAKEDOCA_CAP_DEFLATE
	FakeCapLZ4     = C.FAKEDOCA_CAP_LZ4
	FakeCapAll     = C.FAKEDOCA_CAP_ALL
)

// FakeStats are the fake device's counters.
type FakeStats struct {
	Live        int64 // DOCA objects not yet destroyed
	Tasks       int64 // tasks submitted
	Done        int64 // tasks that succeeded
	Failed      int64 // tasks that failed, flushes included
	Flushed     int64 // tasks flushed by a context stop
	MaxInFlight int64
	CtxStarts   int64
	BadAccess   int64 // tasks whose destination was not mapped writable
	SrcWritable int64 // tasks whose source the device could write
	Oversize    int64 // submissions over the device's maximum buffer
	MMaps       int64 // mmaps created
}

// FakeReset restores one device at FakePCI with every capability, 2 MiB
// buffers and 64 tasks, and clears faults and counters (not Live).
func FakeReset()              { C.fakedoca_reset() }
func FakeClearDevices()       { C.fakedoca_clear_devices() }
func FakeSetMaxTasks(n int)   { C.fakedoca_set_max_tasks(C.uint32_t(n)) }
func FakeFailTasks(n int)     { C.fakedoca_fail_tasks(C.int(n)) }
func FakeLoseTasks(n int)     { C.fakedoca_lose_tasks(C.int(n)) }
func FakeStopContext()        { C.fakedoca_stop_context() }
func FakeFailLZ4Conf(on bool) { C.fakedoca_fail_lz4_conf(cbool01(on)) }
func FakeSetDelay(us int)     { C.fakedoca_set_delay_us(C.unsigned(us)) }

// FakeAddDevice lists another device; openFails makes opening it fail.
func FakeAddDevice(pci string, caps uint, maxBuf int, openFails bool) {
	cs := C.CString(pci)
	defer C.free(unsafe.Pointer(cs))
	C.fakedoca_add_device(cs, C.unsigned(caps), C.uint64_t(maxBuf), cbool01(openFails))
}

func FakeGetStats() FakeStats {
	var s C.fakedoca_stats
	C.fakedoca_get_stats(&s)
	return FakeStats{int64(s.live), int64(s.tasks), int64(s.done), int64(s.failed), int64(s.flushed),
		int64(s.max_inflight), int64(s.ctx_starts), int64(s.bad_access), int64(s.src_writable), int64(s.oversize),
		int64(s.mmaps)}
}
