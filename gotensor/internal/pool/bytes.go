package pool

import (
	"math/bits"
	"sync"
)

// Bytes keeps idle byte buffers for reuse, bounded by total bytes and by
// count per size class (a power of two), so a burst of large buffers is
// not kept forever. Buffers come back with undefined contents: memory
// about to be overwritten is not zeroed.
type Bytes struct {
	mu       sync.Mutex
	classes  [64][][]byte // by floor(log2(cap))
	held     int64
	maxBytes int64
	perClass int
}

// NewBytes returns a pool holding at most maxBytes in idle buffers, and at
// most perClass buffers of each size class.
func NewBytes(maxBytes int64, perClass int) *Bytes {
	return &Bytes{maxBytes: maxBytes, perClass: perClass}
}

// Get returns a buffer of length n: an idle one of a capacity between n
// and about 2n, else a new one.
func (p *Bytes) Get(n int) []byte {
	if n <= 0 {
		return nil
	}
	lo := bits.Len(uint(n)) - 1 // buffers here have cap >= 2^lo: some fit n
	hi := bits.Len(uint(n - 1)) // buffers here all fit n
	p.mu.Lock()
	for c := lo; c <= hi; c++ {
		list := p.classes[c]
		for i := len(list) - 1; i >= 0; i-- {
			if b := list[i]; cap(b) >= n {
				list[i] = list[len(list)-1]
				list[len(list)-1] = nil
				p.classes[c] = list[:len(list)-1]
				p.held -= int64(cap(b))
				p.mu.Unlock()
				return b[:n]
			}
		}
	}
	p.mu.Unlock()
	return make([]byte, n)
}

// GetRounded is Get for buffers of varied sizes that come and go: a new
// one has the capacity of its whole size class (the next power of two),
// so once given back it fits any later request of that class.
func (p *Bytes) GetRounded(n int) []byte {
	if n <= 0 {
		return nil
	}
	return p.Get(1 << bits.Len(uint(n-1)))[:n]
}

// Put offers b for reuse; it is dropped when the pool is at its bounds.
// The caller must not touch b afterwards.
func (p *Bytes) Put(b []byte) {
	c := cap(b)
	if c == 0 {
		return
	}
	class := bits.Len(uint(c)) - 1
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.held+int64(c) > p.maxBytes || len(p.classes[class]) >= p.perClass {
		return
	}
	p.classes[class] = append(p.classes[class], b[:0])
	p.held += int64(c)
}

// Held is the bytes of idle buffers in the pool.
func (p *Bytes) Held() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.held
}
