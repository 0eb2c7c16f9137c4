//go:build amd64 && !noasm

package shuffle

import (
	"golang.org/x/sys/cpu"
	"unsafe"

	"github.com/gotensor/gotensor/gotensor/internal/kernels"
)

// The kernels run where the CPU has them; tests turn them off.
var (
	haveSSSE3 = cpu.X86.HasSSSE3
	haveAVX2  = cpu.X86.HasAVX2
)

//go:noescape
func split2SSSE3(hi, lo, src *byte, n int)

//go:noescape
func merge2SSSE3(dst, hi, lo *byte, n int)

//go:noescape
func split4SSSE3(p0, p1, p2, p3, src *byte, n int)

//go:noescape
func merge4SSSE3(dst, p0, p1, p2, p3 *byte, n int)

// The fast paths handle a prefix of whole vectors and return how many
// elements they did; the Go code finishes the tail.

func splitFast2(hi, lo, src []byte, n int) int {
	m := n &^ 7
	if !haveSSSE3 || m == 0 {
		return 0
	}
	_, _, _ = hi[m-1], lo[m-1], src[2*m-1]
	split2SSSE3(&hi[0], &lo[0], &src[0], m)
	return m
}

func mergeFast2(dst, hi, lo []byte, n int) int {
	m := n &^ 7
	if !haveSSSE3 || m == 0 {
		return 0
	}
	_, _, _ = hi[m-1], lo[m-1], dst[2*m-1]
	merge2SSSE3(&dst[0], &hi[0], &lo[0], m)
	return m
}

func splitFast4(p [][]byte, src []byte, n int) int {
	m := n &^ 3
	if !haveSSSE3 || m == 0 {
		return 0
	}
	_, _, _, _, _ = p[0][m-1], p[1][m-1], p[2][m-1], p[3][m-1], src[4*m-1]
	split4SSSE3(&p[0][0], &p[1][0], &p[2][0], &p[3][0], &src[0], m)
	return m
}

//go:noescape
func merge4AVX2(dst, p0, p1, p2, p3 *byte, n int)

//go:noescape
func merge4AVX2NT(dst, p0, p1, p2, p3 *byte, n int)

// ntBytes is the least output merged with non-temporal stores: a merge
// that large (a 1 MiB chunk's) waits on memory, and stores that skip
// reading the destination's lines in first make float32's planes decode
// 1.14-1.17x faster on ddddocr (BenchmarkCodecReal, interleaved A/B); a
// smaller one keeps its output in the cache for its reader. (The same
// stores in the 2-byte merge gained within noise: they are not there.)
const ntBytes = 256 << 10

func mergeFast4(dst []byte, p [][]byte, n int) int {
	if m := n &^ 31; haveAVX2 && m > 0 {
		_, _, _, _, _ = p[0][m-1], p[1][m-1], p[2][m-1], p[3][m-1], dst[4*m-1]
		if a := uintptr(unsafe.Pointer(&dst[0])); 4*m >= ntBytes && a%32 == 0 {
			merge4AVX2NT(&dst[0], &p[0][0], &p[1][0], &p[2][0], &p[3][0], m)
		} else {
			merge4AVX2(&dst[0], &p[0][0], &p[1][0], &p[2][0], &p[3][0], m)
		}
		q := [][]byte{p[0][m:], p[1][m:], p[2][m:], p[3][m:]}
		return m + mergeFast4SSSE3(dst[4*m:], q, n-m)
	}
	return mergeFast4SSSE3(dst, p, n)
}

func mergeFast4SSSE3(dst []byte, p [][]byte, n int) int {
	m := n &^ 3
	if !haveSSSE3 || m == 0 {
		return 0
	}
	_, _, _, _, _ = p[0][m-1], p[1][m-1], p[2][m-1], p[3][m-1], dst[4*m-1]
	merge4SSSE3(&dst[0], &p[0][0], &p[1][0], &p[2][0], &p[3][0], m)
	return m
}

//go:noescape
func joinLow2AVX2(p, b *byte, groups int)

//go:noescape
func cutLow2AVX2(p, b *byte, groups int)

// joinLow2Fast and cutLow2Fast do the whole groups of 32 elements with
// the kernels; they return how many.
func joinLow2Fast(p, b []byte) int { return low2Groups(joinLow2AVX2, p, b) }
func cutLow2Fast(b, p []byte) int  { return low2Groups(cutLow2AVX2, p, b) }

func low2Groups(kernel func(p, b *byte, groups int), p, b []byte) int {
	g := len(p) / 32
	if !haveAVX2 || g == 0 {
		return 0
	}
	_, _ = p[32*g-1], b[8*g-1]
	kernel(&p[0], &b[0], g)
	return g
}

func init() {
	kernels.Register("shuffle.ssse3", &haveSSSE3)
	kernels.Register("shuffle.avx2", &haveAVX2)
}
