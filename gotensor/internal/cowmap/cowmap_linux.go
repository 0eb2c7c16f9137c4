//go:build linux

package cowmap

import (
	"encoding/binary"
	"os"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/gotensor/gotensor/gotensor/errs"
)

// Supported says whether this platform maps privately.
const Supported = true

var pageSize = os.Getpagesize()

// PageSize is the size of a page of memory.
func PageSize() int { return pageSize }

// Map maps n bytes of fd from off (a multiple of the page size) privately,
// readable and writable. With populate, the pages are mapped in now (read,
// not copied) rather than as they are first touched.
func Map(fd int, off int64, n int, populate bool) (*Mapping, error) {
	if n <= 0 {
		return nil, errs.New(errs.InvalidArgument, "cannot map %d bytes", n)
	}
	prot, flags := unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE
	if populate {
		// Read-only while the kernel maps the pages in: populating a
		// writable private mapping would copy every page.
		prot, flags = unix.PROT_READ, flags|unix.MAP_POPULATE
	}
	b, err := unix.Mmap(fd, off, n, prot, flags)
	if err != nil {
		return nil, errs.Wrap(errs.Unavailable, err, "mapping %d bytes", n)
	}
	if populate {
		// Writable now; the pages stay mapped read-only underneath, so a
		// write still copies the page it touches.
		if err := unix.Mprotect(b, unix.PROT_READ|unix.PROT_WRITE); err != nil {
			unix.Munmap(b)
			return nil, errs.Wrap(errs.Unavailable, err, "mapping %d bytes", n)
		}
	}
	Counts.Mapped.Add(1)
	m := &Mapping{b: b}
	m.track()
	return m, nil
}

// drop gives the written pages [start, end) back to the file: their
// private copies go, and the next access maps the file's pages.
func (m *Mapping) drop(start, end uintptr) bool {
	base := m.Addr()
	if unix.Madvise(m.b[start-base:min(int(end-base), len(m.b))], unix.MADV_DONTNEED) != nil {
		return false
	}
	Counts.Reverted.Add(int64((end - start) / uintptr(pageSize)))
	return true
}

// Unmap unpins the mapping if it is pinned and unmaps it.
func (m *Mapping) Unmap() {
	if m == nil || m.b == nil {
		return
	}
	m.unpin()
	unix.Munmap(m.b)
	m.b = nil
	Counts.Unmapped.Add(1)
}

// Revert gives every page written since the mapping was made (or last
// reverted) back to its file: the page's private copy is dropped, and the
// next access maps the file's page again. Pages never written stay mapped.
// It finds the private copies with PAGEMAP_SCAN, or where the kernel has
// none by reading /proc/self/pagemap; it
// returns false where it cannot (the caller must then unmap the mapping
// rather than reuse it), and for a pinned mapping, whose pages are all its
// own (see Pin; Restore serves those).
func (m *Mapping) Revert() bool {
	if m.pinned {
		return false
	}
	fd, err := pagemap()
	if err != nil {
		return false
	}
	if m.tracked {
		return m.revertTracked(fd)
	}
	if scanPages(fd, m.b, privateCopies, m.drop) {
		return true
	}
	buf := entries.Get().(*[]byte)
	defer entries.Put(buf)
	base := m.Addr()
	pages := (len(m.b) + pageSize - 1) / pageSize // the last may be a part, of a file's last page
	run := -1                                     // first page of the current run of written pages
	flush := func(end int) bool {
		if run >= 0 {
			if !m.drop(base+uintptr(run*pageSize), base+uintptr(end*pageSize)) {
				return false
			}
			run = -1
		}
		return true
	}
	for p := 0; p < pages; {
		k := min(pages-p, len(*buf)/8)
		b := (*buf)[:8*k]
		if n, err := unix.Pread(fd, b, int64(base/uintptr(pageSize)+uintptr(p))*8); err != nil || n != len(b) {
			return false
		}
		for i := 0; i < k; i++ {
			e := binary.LittleEndian.Uint64(b[8*i:])
			present, swapped, file := e&(1<<63) != 0, e&(1<<62) != 0, e&(1<<61) != 0
			if swapped || present && !file { // a private copy: the page was written
				if run < 0 {
					run = p + i
				}
			} else if !flush(p + i) {
				return false
			}
		}
		p += k
	}
	return flush(pages)
}

// entries are buffers of pagemap entries, 8 bytes a page.
var entries = sync.Pool{New: func() any { b := make([]byte, 8*4096); return &b }}

func pagemap() (int, error) {
	pagemapOnce.Do(func() {
		pagemapOnce.fd, pagemapOnce.err = unix.Open("/proc/self/pagemap", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	})
	return pagemapOnce.fd, pagemapOnce.err
}

// Memfd is anonymous memory with a file descriptor, so that it can be
// mapped both shared (its owner's copy, written in place) and privately
// (Map: views that never write it).
type Memfd struct {
	fd     int
	Shared []byte // the whole file, mapped shared: the owner's
}

// NewMemfd makes a memfd of n bytes (rounded up to whole pages) and maps
// it shared.
func NewMemfd(name string, n int) (*Memfd, error) {
	n = (n + pageSize - 1) &^ (pageSize - 1)
	fd, err := unix.MemfdCreate(name, unix.MFD_CLOEXEC)
	if err != nil {
		return nil, errs.Wrap(errs.Unavailable, err, "memfd_create")
	}
	if err := unix.Ftruncate(fd, int64(n)); err != nil {
		unix.Close(fd)
		return nil, errs.Wrap(errs.Unavailable, err, "sizing a memfd to %d bytes", n)
	}
	b, err := unix.Mmap(fd, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		unix.Close(fd)
		return nil, errs.Wrap(errs.Unavailable, err, "mapping a memfd of %d bytes", n)
	}
	return &Memfd{fd: fd, Shared: b}, nil
}

// Fd is the memfd's file descriptor.
func (f *Memfd) Fd() int { return f.fd }

// Close unmaps the shared mapping and closes the descriptor; the memory
// goes once no private mapping of it is left.
func (f *Memfd) Close() {
	if f.Shared != nil {
		unix.Munmap(f.Shared)
		f.Shared = nil
	}
	if f.fd >= 0 {
		unix.Close(f.fd)
		f.fd = -1
	}
}
