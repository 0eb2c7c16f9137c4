package core

import (
	"context"
	"unsafe"

	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/frame"
	"github.com/gotensor/gotensor/gotensor/store"
)

// OpView counts View calls in Stats.Ops (each also a view or a view copy).
const OpView = "view"

// View is a tensor read in place: Data is the tensor's bytes where the
// store keeps them, in a private (copy-on-write) mapping of this process.
// A write into Data never reaches the store, and nothing done to the key
// afterwards changes Data, until Release, after which Data must not be
// touched.
type View struct {
	Header *frame.Header
	Data   []byte
	Pinned bool // Data is page-locked memory (a device copies straight from it)
	m      *store.Mapped
}

// Release gives the view's mapping back to the store; idempotent.
func (v *View) Release() { v.m.Release() }

// Maps says whether the store maps frames for views (mem://, file://): a
// View there is made in memory the caller reads, without a round trip.
func (s *Store) Maps() bool { return s.caps.Mapper != nil }

// View maps the tensor under key for reading in place. It returns nil,
// and no error, where the tensor cannot be viewed (counted as a view copy
// in Stats): the store keeps no mappable frames (a store across a link),
// the frame is coded (a chunk is stored smaller than its raw bytes), or
// its payload is not aligned for its dtype; the caller then reads a copy.
// A frame version's checksums are checked by its first view in this
// process, and not again by later views of the same version.
func (s *Store) View(ctx context.Context, key string) (v *View, err error) {
	defer func() {
		s.stats.op(OpView, err)
		if err == nil {
			s.stats.viewed(v)
		}
	}()
	if err := store.ValidateKey(key); err != nil {
		return nil, err
	}
	mp := s.caps.Mapper
	if mp == nil {
		return nil, nil
	}
	m, err := mp.MapFrame(ctx, key)
	if err != nil || m == nil {
		return nil, err
	}
	defer func() {
		if v == nil {
			m.Release()
		}
	}()
	r, err := frame.NewReader(m.Frame, s.Limits)
	if err != nil {
		return nil, wrapKey(err, key)
	}
	data := r.RawPayload()
	if data == nil || !aligned(data, r.Header.Meta.DType.Size()) {
		return nil, nil
	}
	if !m.Checked {
		if err := r.Verify(ctx, pinOf(ctx)); err != nil {
			return nil, wrapKey(err, key)
		}
		m.MarkChecked()
	}
	if err := handOut(ctx); err != nil {
		return nil, err
	}
	return &View{Header: r.Header, Data: data, Pinned: m.Pinned, m: m}, nil
}

// aligned says whether b starts at a multiple of an element's size (up to
// 16: complex128's alignment).
func aligned(b []byte, size int) bool {
	a := uintptr(min(max(size, 1), 16))
	return uintptr(unsafe.Pointer(unsafe.SliceData(b)))%a == 0
}

// handOut is a view's last check before it is handed out: an operation
// cancelled meanwhile (its commit gate says so) gets no view, and one that
// passes it can no longer be cancelled, so that a view made is a view
// delivered.
func handOut(ctx context.Context) error {
	if ctx.Err() != nil {
		return ctxErr(ctx)
	}
	if gate, ok := ctx.Value(gateKey{}).(func() bool); ok && !gate() {
		return errs.New(errs.Timeout, "cancelled")
	}
	return nil
}
