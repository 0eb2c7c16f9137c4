//go:build linux

package binding

import (
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// hugePage is a transparent huge page where base pages are 4 KiB (amd64,
// and arm64's usual kernels).
const hugePage = 2 << 20

var smallPages = os.Getpagesize() == 4096

// adviseHugePages asks the kernel to back the whole huge pages inside dst,
// the caller's memory that a read is about to fill, with transparent huge
// pages (MADV_HUGEPAGE). A destination just allocated (FlexGen allocates
// one per weight it loads, and a large allocation is a fresh mapping) then
// faults in once per 2 MiB instead of once per 4 KiB: in 4 KiB pages the
// faults of a 154 MB weight read from file:// took about as much CPU as the
// copy itself. Pages already there stay as they are; where THP is off or
// no huge page is free the kernel keeps small pages; an error (memory that
// is not an ordinary mapping) changes nothing and is ignored.
func adviseHugePages(dst []byte) {
	if !smallPages || len(dst) < hugePage {
		return
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(dst)))
	lo := (p+hugePage-1)&^(hugePage-1) - p
	hi := (p+uintptr(len(dst)))&^(hugePage-1) - p
	if hi > lo {
		_ = unix.Madvise(dst[lo:hi], unix.MADV_HUGEPAGE)
	}
}
