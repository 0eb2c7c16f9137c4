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

// CheckedLeaser is a Leaser that knows which of its frames were checked
// when stored: built in this process by a frame writer, whose chunk
// checksums are computed over the very bytes it stores, and kept in this
// process's memory since. A reader may copy such a frame's raw chunks
// without checksumming them again; a frame that came from anywhere else
// (a node's Put or Splice from the network) is unchecked and is verified
// on every read as before.
type CheckedLeaser interface {
	Leaser
	// PutChecked is Put of a frame this process's frame writer built.
	PutChecked(ctx context.Context, key string, frame []byte) error
	// SpliceChecked is Splice with data (chunks and header) this
	// process's frame code built; the frame stays checked if it was.
	SpliceChecked(ctx context.Context, key string, old, header []byte, off, n int64, data []byte) (bool, error)
	// LeaseChecked is Lease, also reporting whether the frame is checked.
	LeaseChecked(ctx context.Context, key string) (frame []byte, checked bool, release func(), err error)
}
