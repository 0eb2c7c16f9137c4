// Package cowmap maps files (a memfd, a store's frame file) privately,
// copy-on-write, for tensors that view a store's bytes in place: a write
// into such a mapping lands on a private copy of the page it touches and
// never reaches the file, and a mapping that is given back is made the
// file's again (Revert) before it is handed out anew, so that mappings can
// be reused without faulting their pages in again.
package cowmap

import (
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/gotensor/gotensor/gotensor/errs"
)

// Mapping is a private mapping of a file's bytes [off, off+len).
type Mapping struct {
	b       []byte
	pinned  bool   // registered as page-locked memory through the Pinner
	tracked bool   // its writes are tracked (track_linux.go)
	Tag     uint64 // the owner's: what the mapping last showed (a frame version), 0 for nothing known
}

// Bytes is the mapping's memory.
func (m *Mapping) Bytes() []byte { return m.b }

// Tracked says whether the mapping's writes are tracked by write
// protection (Revert then costs microseconds, not a look at every page).
func (m *Mapping) Tracked() bool { return m.tracked }

// Pinned says whether the mapping is page-locked (see Pin).
func (m *Mapping) Pinned() bool { return m.pinned }

// Addr is the mapping's address.
func (m *Mapping) Addr() uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(m.b))) }

// Pinner registers memory as page-locked for a device's direct copies
// (cudaHostRegister, found through torch's CUDA runtime) and unregisters
// it before the memory is unmapped.
type Pinner struct {
	Pin   func(p unsafe.Pointer, n int) error
	Unpin func(p unsafe.Pointer)
}

var pinner atomic.Pointer[Pinner]

// SetPinner installs how mappings are pinned (nil: they are not).
func SetPinner(p *Pinner) { pinner.Store(p) }

// CanPin says whether a Pinner is installed.
func CanPin() bool { return pinner.Load() != nil }

// Pin registers the mapping as page-locked memory, once. Pinning a private
// mapping makes the kernel give it pages of its own (so the registration
// stays coherent with later writes into it): a pinned mapping no longer
// follows its file, and is brought back to it by Restore, not Revert.
func (m *Mapping) Pin() error {
	if m.pinned {
		return nil
	}
	p := pinner.Load()
	if p == nil {
		return errs.New(errs.Unsupported, "no pinner installed")
	}
	if len(m.b) == 0 {
		return nil
	}
	if err := p.Pin(unsafe.Pointer(unsafe.SliceData(m.b)), len(m.b)); err != nil {
		return err
	}
	m.pinned = true
	return nil
}

func (m *Mapping) unpin() {
	if !m.pinned {
		return
	}
	if p := pinner.Load(); p != nil {
		p.Unpin(unsafe.Pointer(unsafe.SliceData(m.b)))
	}
	m.pinned = false
}

// Restore makes the mapping's bytes src's again, page by page, copying
// only the pages that differ: the way back for a pinned mapping, whose
// pages are its own. It returns the bytes copied.
func (m *Mapping) Restore(src []byte) int {
	n := 0
	b := m.b[:min(len(m.b), len(src))]
	for off := 0; off < len(b); off += restoreBlock {
		end := min(off+restoreBlock, len(b))
		if !equal(b[off:end], src[off:end]) {
			n += copy(b[off:end], src[off:end])
		}
	}
	return n
}

const restoreBlock = 64 << 10

func equal(a, b []byte) bool { return string(a) == string(b) }

// Stats count what mappings did in this process.
type Stats struct {
	Mapped   atomic.Int64 // mappings made
	Unmapped atomic.Int64
	Reverted atomic.Int64 // pages a Revert gave back to their file (they had been written)
	Restored atomic.Int64 // bytes Restore copied back
}

// Counts are this process's.
var Counts Stats

var pagemapOnce struct {
	sync.Once
	fd  int
	err error
}
