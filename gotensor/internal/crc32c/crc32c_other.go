//go:build !amd64

package crc32c

const minCLMUL = 0

const useCLMUL = false

func clmul(crc uint32, b []byte) uint32 { panic("crc32c: no carry-less multiply on this architecture") }
