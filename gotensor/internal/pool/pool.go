// Package pool keeps reusable scratch objects. Unlike sync.Pool it is not
// emptied by every garbage collection, which matters for the large
// per-chunk buffers codecs use: with a small live heap the collector runs
// often and would force them to be reallocated (and zeroed) all the time.
package pool

import "runtime"

// Pool holds up to a fixed number of idle objects.
type Pool[T any] struct {
	ch   chan T
	new  func() T
	size func(T) int // bytes an object holds; nil: not bounded by size
	max  int
}

// NewBounded is New for objects that hold buffers: one that holds more
// than maxBytes (size says how much) is dropped on Put, so the pool keeps
// at most 2 per CPU times maxBytes.
func NewBounded[T any](fn func() T, size func(T) int, maxBytes int) *Pool[T] {
	p := New(fn)
	p.size, p.max = size, maxBytes
	return p
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

// Put returns an object for reuse; beyond the pool's capacity (or its
// size bound) it is dropped.
func (p *Pool[T]) Put(v T) {
	if p.size != nil && p.size(v) > p.max {
		return
	}
	select {
	case p.ch <- v:
	default:
	}
}
