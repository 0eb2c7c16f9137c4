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
// written pages of a mapping: of a tracked one, those no longer
// write-protected (track_linux.go); of another, the private copies (pages
// not of the file, present or swapped).
const (
	pagemapScan   = 0xc0606610 // _IOWR('f', 16, struct pm_scan_arg)
	pageIsWritten = 1 << 1     // not write-protected (track_linux.go)
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

// pageQuery is a scan's categories: a page matches when its categories,
// with those in inverted flipped, include all of mask and (if anyof is
// not 0) one of anyof.
type pageQuery struct{ inverted, mask, anyof uint64 }

var (
	privateCopies = pageQuery{inverted: pageIsFile, mask: pageIsFile, anyof: pageIsPresent | pageIsSwapped}
	writtenPages  = pageQuery{mask: pageIsWritten}
)

// noScan is set once the kernel refused PAGEMAP_SCAN (older than 6.7).
var noScan atomic.Bool

// scanPages calls run for each run [start, end) of addresses in b's
// pages that match q. It returns ok=false where the kernel cannot scan
// (for privateCopies, the caller reads /proc/self/pagemap instead).
func scanPages(fd int, b []byte, q pageQuery, run func(start, end uintptr) bool) (ok bool) {
	if noScan.Load() {
		return false
	}
	var vec [64]pageRegion
	base, end := pages(b)
	for start := base; start < end; {
		a := pmScanArg{
			size: uint64(unsafe.Sizeof(pmScanArg{})), start: uint64(start), end: uint64(end),
			vec: uint64(uintptr(unsafe.Pointer(&vec[0]))), vecLen: uint64(len(vec)),
			inverted: q.inverted, mask: q.mask, anyof: q.anyof, returnMask: q.mask | q.anyof,
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
