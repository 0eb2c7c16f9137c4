// Package pool keeps reusable scratch objects. Unlike sync.Pool it is not
// emptied by every garbage collection, which matters for the large
// per-chunk buffers codecs use: with a small live heap the collector runs
// often and would force them to be reallocated (and zeroed) all the time.
package pool

import "runtime"

// Pool holds up to a fixed number of idle objects.
type Pool[T any] struct {
	ch  chan T
	new func() T
}

// New returns a pool that makes objects with fn and keeps up to 2 per CPU.
func New[T any](fn func() T) *Pool[T] {
	return &Pool[T]{ch: make(chan T, 2*runtime.NumCPU()+2), new: fn}
}

// Get returns an idle object or a new one.
func (p *Pool[T]) Get() T {
	select {
	case v := <-p.ch:
		return v
	default:
		return p.new()
	}
}

// Put returns an object for reuse; beyond the pool's capacity it is dropped.
func (p *Pool[T]) Put(v T) {
	select {
	case p.ch <- v:
	default:
	}
}
