//go:build linux

package cowmap

import (
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Write tracking through userfaultfd's asynchronous write protection
// (Linux 6.7): a tracked mapping's pages are write-protected while they
// show the file, the kernel resolves a write into one by itself (no
// handler thread: the page is copied as for any private write and its
// protection dropped), and PAGEMAP_SCAN finds the written pages by that
// bit of their page table entries alone. The test Revert falls back to,
// "not a page of the file", looks at each page's struct page: about 65 us
// for an 8 MiB mapping here against 4 us, paid by every view's release on
// a core the model's compute shares. Where userfaultfd is refused (a
// seccomp profile, an older kernel, a kernel without the features), mappings
// are not tracked and Revert makes that test.

const (
	uffdUserModeOnly   = 1          // UFFD_USER_MODE_ONLY: no kernel-mode faults (allowed unprivileged)
	uffdAPI            = 0xAA       // UFFD_API
	uffdioAPI          = 0xC018AA3F // _IOWR(0xAA, 0x3F, struct uffdio_api)
	uffdioRegister     = 0xC020AA00 // _IOWR(0xAA, 0x00, struct uffdio_register)
	uffdioWriteProtect = 0xC018AA06 // _IOWR(0xAA, 0x06, struct uffdio_writeprotect)
	uffdRegisterWP     = 1 << 1     // UFFDIO_REGISTER_MODE_WP
	uffdProtectWP      = 1 << 0     // UFFDIO_WRITEPROTECT_MODE_WP
	// UFFD_FEATURE_WP_HUGETLBFS_SHMEM (a memfd is shmem), _WP_UNPOPULATED
	// (pages not yet faulted in are protected too), _WP_ASYNC
	uffdTrackFeatures = 1<<12 | 1<<13 | 1<<15
)

// tracker is the process's userfaultfd, opened once and kept open: closing
// it would drop every registration.
var tracker struct {
	once sync.Once
	fd   int // -1: no tracking here
}

// noTrack turns tracking off for new mappings (tests of the other ways).
var noTrack atomic.Bool

// trackFd is the userfaultfd mappings are tracked through, or -1.
func trackFd() int {
	tracker.once.Do(func() {
		tracker.fd = -1
		fd, _, errno := unix.Syscall(unix.SYS_USERFAULTFD, unix.O_CLOEXEC|unix.O_NONBLOCK|uffdUserModeOnly, 0, 0)
		if errno != 0 {
			return
		}
		api := struct{ api, features, ioctls uint64 }{api: uffdAPI, features: uffdTrackFeatures}
		if ioctl(int(fd), uffdioAPI, unsafe.Pointer(&api)) != nil || api.features&uffdTrackFeatures != uffdTrackFeatures {
			unix.Close(int(fd))
			return
		}
		tracker.fd = int(fd)
	})
	return tracker.fd
}

func ioctl(fd int, req uintptr, arg unsafe.Pointer) error {
	if _, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), req, uintptr(arg)); errno != 0 {
		return errno
	}
	return nil
}

// pages is b's address range, whole pages.
func pages(b []byte) (start, end uintptr) {
	start = uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return start, start + uintptr((len(b)+pageSize-1)&^(pageSize-1))
}

// track registers m's pages for write tracking and protects them; m stays
// untracked where this process cannot track.
func (m *Mapping) track() {
	fd := trackFd()
	if fd < 0 || len(m.b) == 0 || noTrack.Load() {
		return
	}
	start, end := pages(m.b)
	reg := struct{ start, len, mode, ioctls uint64 }{start: uint64(start), len: uint64(end - start), mode: uffdRegisterWP}
	if ioctl(fd, uffdioRegister, unsafe.Pointer(&reg)) != nil || protect(fd, start, end) != nil {
		return
	}
	m.tracked = true
}

// protect write-protects [start, end), whole pages.
func protect(fd int, start, end uintptr) error {
	wp := struct{ start, len, mode uint64 }{uint64(start), uint64(end - start), uffdProtectWP}
	return ioctl(fd, uffdioWriteProtect, unsafe.Pointer(&wp))
}

// revertTracked is Revert for a tracked mapping: each run of written pages
// is protected again and dropped, so that the next access maps the file's
// page, protected. False where a step fails (the caller unmaps m).
func (m *Mapping) revertTracked(pagemapFd int) bool {
	fd := trackFd()
	return scanPages(pagemapFd, m.b, writtenPages, func(start, end uintptr) bool {
		return protect(fd, start, end) == nil && m.drop(start, end)
	})
}
