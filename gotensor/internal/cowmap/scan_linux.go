//go:build linux

package cowmap

import (
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// PAGEMAP_SCAN (Linux 6.7): the kernel walks a range's page tables and
// returns the runs of pages in the asked categories, rather than 8 bytes
// for every page as /proc/self/pagemap does. Revert asks it for the
// private copies of a mapping: pages not of the file, present or swapped.
const (
	pagemapScan   = 0xc0606610 // _IOWR('f', 16, struct pm_scan_arg)
	pageIsFile    = 1 << 2
	pageIsPresent = 1 << 3
	pageIsSwapped = 1 << 4
)

// pmScanArg is the kernel's struct pm_scan_arg.
type pmScanArg struct {
	size, flags, start, end, walkEnd, vec, vecLen, maxPages uint64
	inverted, mask, anyof, returnMask                       uint64
}

// pageRegion is the kernel's struct page_region.
type pageRegion struct{ start, end, categories uint64 }

// noScan is set once the kernel refused PAGEMAP_SCAN (older than 6.7).
var noScan atomic.Bool

// scanWritten calls run for each run [start, end) of addresses in b's
// pages that are private copies. It returns ok=false where the kernel
// cannot scan (the caller reads /proc/self/pagemap instead).
func scanWritten(fd int, b []byte, run func(start, end uintptr) bool) (ok bool) {
	if noScan.Load() {
		return false
	}
	var vec [64]pageRegion
	base := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	end := base + uintptr((len(b)+pageSize-1)&^(pageSize-1))
	for start := base; start < end; {
		a := pmScanArg{
			size: uint64(unsafe.Sizeof(pmScanArg{})), start: uint64(start), end: uint64(end),
			vec: uint64(uintptr(unsafe.Pointer(&vec[0]))), vecLen: uint64(len(vec)),
			inverted: pageIsFile, mask: pageIsFile, anyof: pageIsPresent | pageIsSwapped,
			returnMask: pageIsFile | pageIsPresent | pageIsSwapped,
		}
		n, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), pagemapScan, uintptr(unsafe.Pointer(&a)))
		if errno != 0 {
			if errno == unix.ENOTTY || errno == unix.EINVAL {
				noScan.Store(true)
			}
			return false
		}
		for _, r := range vec[:n] {
			if !run(uintptr(r.start), uintptr(r.end)) {
				return false
			}
		}
		if a.walkEnd <= uint64(start) {
			return false
		}
		start = uintptr(a.walkEnd)
	}
	return true
}
