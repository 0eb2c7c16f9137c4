// Package parallel runs indexed work on a bounded number of goroutines.
package parallel

import (
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/gotensor/gotensor/gotensor/errs"
)

var workers atomic.Int32

// MaxWorkers bounds what callers may ask of SetWorkers: more goroutines
// than this per tensor only cost memory and scheduling.
const MaxWorkers = 4096

// SetWorkers bounds the goroutines one For call uses; n <= 0 restores the
// default, GOMAXPROCS.
func SetWorkers(n int) { workers.Store(int32(max(n, 0))) }

// Workers is the current bound.
func Workers() int {
	if n := int(workers.Load()); n > 0 {
		return n
	}
	return runtime.GOMAXPROCS(0)
}

// MinParallelBytes is the least work worth spreading over cores: below it,
// waking other threads (slow on shared, virtualized cores) costs more
// than it saves.
const MinParallelBytes = 1 << 20

// Pin, when not nil, is called by each worker goroutine before it starts
// (to lock it to chosen CPUs); the function it returns undoes that.
type Pin func() (undo func())

// ForBytes is For for work that touches about total bytes: serial when
// that is under MinParallelBytes.
func ForBytes(n int, total int64, fn func(i int) error) error {
	return ForBytesPinned(n, total, nil, fn)
}

// ForBytesPinned is ForBytes with pinned workers.
func ForBytesPinned(n int, total int64, pin Pin, fn func(i int) error) error {
	return ForBytesFrom(n, total, MinParallelBytes, pin, fn)
}

// ForBytesFrom is ForBytesPinned for work worth spreading from `from`
// bytes (a slow codec's: codec.SpreadBytes).
func ForBytesFrom(n int, total, from int64, pin Pin, fn func(i int) error) error {
	if total < from {
		for i := 0; i < n; i++ {
			if err := call(fn, i); err != nil {
				return err
			}
		}
		return nil
	}
	return forPinned(n, pin, fn)
}

// For calls fn(i) for i in [0, n) on up to Workers() goroutines and returns
// the first error; once an error is seen, no new index starts. A panic in
// fn is that call's error (Internal), never the process's end.
func For(n int, fn func(i int) error) error { return forPinned(n, nil, fn) }

// forPinned runs fn on w goroutines. Without pin the caller is one of them:
// it takes indices from the start while the others wake up, and waits only
// for the indices taken, never for a helper to be scheduled (a helper that
// wakes late finds no index left and ends). A caller whose thread is locked
// (a cgo call from Python) would otherwise hand its P to another thread and
// be woken again at the end: on a 0.5 MB tensor split in two, that costs
// more than the second worker saves. Pinned, every index runs on a pinned
// helper (none on the caller's thread).
func forPinned(n int, pin Pin, fn func(i int) error) error {
	w := min(Workers(), n)
	if pin != nil && w == 1 {
		w = min(2, n) // run on a pinned worker, not on the caller's thread
	}
	if w <= 1 {
		for i := 0; i < n; i++ {
			if err := call(fn, i); err != nil {
				return err
			}
		}
		return nil
	}
	var (
		next, done atomic.Int64
		failed     atomic.Bool
		errOnce    sync.Once
		firstErr   error
		finished   = make(chan struct{})
	)
	// work takes indices until none is left; each index taken is done once
	// fn returns, or at once after an error (it does not start).
	work := func() {
		for {
			i := next.Add(1) - 1
			if i >= int64(n) {
				return
			}
			if !failed.Load() {
				if err := call(fn, int(i)); err != nil {
					errOnce.Do(func() { firstErr = err })
					failed.Store(true)
				}
			}
			if done.Add(1) == int64(n) {
				close(finished)
			}
		}
	}
	helpers := w
	if pin == nil {
		helpers = w - 1
	}
	for range helpers {
		go func() {
			if pin != nil {
				defer pin()()
			}
			work()
		}()
	}
	if pin == nil {
		work()
	}
	<-finished
	return firstErr
}

func call(fn func(i int) error, i int) (err error) {
	defer Recover(&err)
	return fn(i)
}

// Safe runs fn, returning a panic in it as an Internal error: every
// goroutine the core starts runs its work through Safe.
func Safe(fn func() error) (err error) {
	defer Recover(&err)
	return fn()
}

// Recover turns a panic into an Internal error in *errp, with the stack
// that raised it. Use it as `defer parallel.Recover(&err)`.
func Recover(errp *error) {
	if r := recover(); r != nil {
		stack := debug.Stack()
		if len(stack) > 4096 {
			stack = stack[:4096]
		}
		*errp = errs.New(errs.Internal, "panic: %v\n%s", r, stack)
	}
}
