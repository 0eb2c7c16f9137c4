package pool

import "sync"

// Lent lends buffers of a pool for frames about to be written, and takes
// back only those it lent: a frame of the caller's own memory handed to
// Back is left alone. It holds each lent buffer until it comes back (a
// store's Put or ReturnFrame always gives it), so an address can never
// stand for other memory.
type Lent struct {
	p   *Bytes
	out sync.Map // *byte: the first byte of each buffer lent
}

// NewLent lends from p.
func NewLent(p *Bytes) *Lent { return &Lent{p: p} }

// Get lends n bytes (n > 0), contents undefined.
func (l *Lent) Get(n int) []byte {
	b := l.p.GetRounded(n)
	l.out.Store(&b[:1][0], struct{}{})
	return b
}

// Back gives b to the pool if it was lent.
func (l *Lent) Back(b []byte) {
	if l.Forget(b) {
		l.p.Put(b)
	}
}

// Forget drops b from what was lent, without reusing it (a frame a failed
// write may still hold); it reports whether b was lent.
func (l *Lent) Forget(b []byte) bool {
	if cap(b) == 0 {
		return false
	}
	_, ok := l.out.LoadAndDelete(&b[:1][0])
	return ok
}
