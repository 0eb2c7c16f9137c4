// Package crc32c computes CRC-32C (Castagnoli), the frame checksum, as
// hash/crc32 does, and on x86 with AVX-512 VPCLMULQDQ faster for long
// buffers: hash/crc32 runs the SSE4.2 CRC32 instruction three ways at once
// (about 16 GB/s here), which made the checksum most of a file:// row
// read's CPU time; carry-less multiplication folds 256 bytes per step in
// four 512-bit registers instead (the method of Intel's "Fast CRC
// Computation for Generic Polynomials Using PCLMULQDQ", the Linux kernel's
// layout, with the Castagnoli constants).
package crc32c

import "hash/crc32"

var table = crc32.MakeTable(crc32.Castagnoli)

// Table is hash/crc32's Castagnoli table, for code that needs one.
func Table() *crc32.Table { return table }

// Checksum is the CRC-32C of b.
func Checksum(b []byte) uint32 { return Update(0, b) }

// Update returns crc updated with b.
func Update(crc uint32, b []byte) uint32 {
	if useCLMUL && len(b) >= minCLMUL {
		n := len(b) &^ 15
		crc = ^clmul(^crc, b[:n])
		b = b[n:]
	}
	return crc32.Update(crc, table, b)
}
