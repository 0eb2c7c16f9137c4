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
	room     func() int64 // see SetRoom; nil: maxBytes alone
}

// NewBytes returns a pool holding at most maxBytes in idle buffers, and at
// most perClass buffers of each size class.
func NewBytes(maxBytes int64, perClass int) *Bytes {
	return &Bytes{maxBytes: maxBytes, perClass: perClass}
}

// SetRoom lets the pool keep idle buffers beyond its byte bound, up to
// room() bytes, the memory its owner may use and does not (a store's
// capacity less what it holds); Get then drops idle buffers before it
// makes a new one, so that idle and new memory fit in room() together.
// A node that replaces a large tensor then writes the new version into
// the old one's memory instead of faulting in and zeroing fresh pages (on
// some virtual machines slower than the socket that fills them). room is
// called under the pool's lock and must not call the pool.
func (p *Bytes) SetRoom(room func() int64) {
	p.mu.Lock()
	p.room = room
	p.mu.Unlock()
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
	if p.room != nil {
		p.trim(p.room() - int64(n))
	}
	p.mu.Unlock()
	return make([]byte, n)
}

// trim drops idle buffers, the largest classes first, until at most keep
// bytes are held; under p.mu.
func (p *Bytes) trim(keep int64) {
	for c := len(p.classes) - 1; c >= 0 && p.held > keep; c-- {
		for list := p.classes[c]; len(list) > 0 && p.held > keep; list = p.classes[c] {
			p.held -= int64(cap(list[len(list)-1]))
			list[len(list)-1] = nil
			p.classes[c] = list[:len(list)-1]
		}
	}
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
	limit := p.maxBytes
	if p.room != nil {
		limit = max(limit, p.room())
	}
	if p.held+int64(c) > limit || len(p.classes[class]) >= p.perClass {
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
