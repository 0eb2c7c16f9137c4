package store

import "context"

// Stores that recycle frame memory implement these; the core uses them
// when present, and every other store works unchanged.

// Lender is a store that lends memory for frames about to be Put: the
// buffers of frames it replaced or deleted, so a write of a similar size
// encodes straight into memory that is already mapped and is not zeroed.
type Lender interface {
	// LendFrame returns n bytes, contents undefined, for a frame the
	// caller will Put (or hand back with ReturnFrame).
	LendFrame(n int) []byte
	// ReturnFrame takes back a lent buffer that was not Put.
	ReturnFrame(b []byte)
}

// Leaser is a store whose frames can be read in place. The frame Lease
// returns stays unchanged, even if its key is replaced or deleted, until
// release is called, exactly once; then the store may reuse its memory. A
// lease that is never released only keeps that memory from being reused.
type Leaser interface {
	Lease(ctx context.Context, key string) (frame []byte, release func(), err error)
}
