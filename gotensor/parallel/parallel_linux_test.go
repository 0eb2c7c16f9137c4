package parallel

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Unpinned, the caller works too: with its goroutine locked to its thread
// (as a cgo call from Python is), some indices run on that thread, and
// For returns without waiting for a helper that finds nothing left. Before,
// every index ran on helpers while the caller's thread slept.
func TestForRunsOnTheCallersThread(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	SetWorkers(2)
	defer SetWorkers(0)
	me := unix.Gettid()
	var onCaller atomic.Int32
	err := For(4, func(i int) error {
		if unix.Gettid() == me {
			onCaller.Add(1)
		}
		time.Sleep(20 * time.Millisecond)
		return nil
	})
	if err != nil || onCaller.Load() == 0 {
		t.Fatalf("%d of 4 indices on the caller's thread (%v)", onCaller.Load(), err)
	}
	var unpinned atomic.Int32
	pin := Pin(func() func() {
		if unix.Gettid() == me {
			unpinned.Add(1)
		}
		return func() {}
	})
	if err := ForBytesPinned(4, MinParallelBytes, pin, func(int) error { return nil }); err != nil || unpinned.Load() != 0 {
		t.Fatalf("a pinned worker ran on the caller's thread (%v)", err)
	}
}
