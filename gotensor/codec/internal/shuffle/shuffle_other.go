//go:build !amd64 || noasm

package shuffle

// No kernels in this build (the tag noasm, or not amd64): the Go code
// splits and merges all.
var haveSSSE3, haveAVX2 = false, false

func splitFast2(hi, lo, src []byte, n int) int     { return 0 }
func mergeFast2(dst, hi, lo []byte, n int) int     { return 0 }
func splitFast4(p [][]byte, src []byte, n int) int { return 0 }
func mergeFast4(dst []byte, p [][]byte, n int) int { return 0 }

func joinLow2Fast(p, b []byte) int { return 0 }
func cutLow2Fast(b, p []byte) int  { return 0 }
