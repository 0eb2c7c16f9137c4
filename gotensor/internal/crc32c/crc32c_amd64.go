package crc32c

import "golang.org/x/sys/cpu"

// minCLMUL is the least length the folding code takes: below it the
// setup and the final reduction cost more than they save.
const minCLMUL = 1024

var useCLMUL = cpu.X86.HasAVX512F && cpu.X86.HasAVX512VPCLMULQDQ && cpu.X86.HasPCLMULQDQ && cpu.X86.HasSSE41

// clmul folds b (at least 256 bytes, a multiple of 16) into crc, which is
// inverted (the caller inverts before and after).
//
//go:noescape
func clmul(crc uint32, b []byte) uint32
