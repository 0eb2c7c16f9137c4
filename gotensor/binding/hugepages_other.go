//go:build !linux

package binding

// adviseHugePages is a no-op where there is no MADV_HUGEPAGE.
func adviseHugePages([]byte) {}
