//go:build !amd64

package codec

func splitFast2(hi, lo, src []byte, n int) int     { return 0 }
func mergeFast2(dst, hi, lo []byte, n int) int     { return 0 }
func splitFast4(p [][]byte, src []byte, n int) int { return 0 }
func mergeFast4(dst []byte, p [][]byte, n int) int { return 0 }
