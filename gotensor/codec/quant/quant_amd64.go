//go:build amd64 && !noasm

package quant

import (
	"golang.org/x/sys/cpu"

	"github.com/gotensor/gotensor/gotensor/internal/kernels"
)

// haveSSSE3: the SSE kernels run (SSE2 on every amd64, plus SSSE3's
// PSHUFB); tests turn them off.
var haveSSSE3 = cpu.X86.HasSSSE3

//go:noescape
func minMaxSumSSE(x *float32, n int) (mn, mx, sum float32)

//go:noescape
func quantize8SSE(out *byte, x *float32, n int, mn, scale, levels float32)

//go:noescape
func quantize4SSE(out *byte, x *float32, n int, mn, scale, levels float32)

//go:noescape
func bf16ToF32SSE(dst *float32, src *byte, n int)

// The SSE kernels (SSE2 on every amd64, plus SSSE3's PSHUFB) do a prefix
// of whole vectors and return how many elements they did.

func minMaxSumFast(x []float32) (mn, mx, sum float32, done bool) {
	if haveAVX2 && len(x) >= 8 && len(x)%8 == 0 {
		mn, mx, sum = minMaxSumAVX(&x[0], len(x))
		return mn, mx, sum, true
	}
	if !haveSSSE3 || len(x) < 4 || len(x)%4 != 0 {
		return 0, 0, 0, false
	}
	mn, mx, sum = minMaxSumSSE(&x[0], len(x))
	return mn, mx, sum, true
}

func quantize8Fast(out []byte, x []float32, mn, scale, levels float32) int {
	if m := len(x) &^ 7; haveAVX2 && m > 0 {
		_ = out[m-1]
		quantize8AVX(&out[0], &x[0], m, mn, scale, levels)
		if m == len(x) {
			return m
		}
	}
	m := len(x) &^ 3
	if !haveSSSE3 || m == 0 {
		return 0
	}
	_ = out[m-1]
	quantize8SSE(&out[0], &x[0], m, mn, scale, levels)
	return m
}

func quantize4Fast(out []byte, x []float32, mn, scale, levels float32) int {
	if m := len(x) &^ 15; haveAVX2 && m > 0 {
		_ = out[m/2-1]
		quantize4AVX(&out[0], &x[0], m, mn, scale, levels)
		if m == len(x) {
			return m
		}
	}
	m := len(x) &^ 7
	if !haveSSSE3 || m == 0 {
		return 0
	}
	_ = out[m/2-1]
	quantize4SSE(&out[0], &x[0], m, mn, scale, levels)
	return m
}

func bf16ToF32Fast(dst []float32, src []byte) int {
	m := len(dst) &^ 7
	if !haveSSSE3 || m == 0 {
		return 0
	}
	_ = src[2*m-1]
	if haveAVX2 {
		bf16ToF32AVX(&dst[0], &src[0], m)
		return m
	}
	bf16ToF32SSE(&dst[0], &src[0], m)
	return m
}

//go:noescape
func dequantize8SSE(dst *float32, q *byte, n int, scale, mn float32)

func dequantize8Fast(dst []float32, q []byte, scale, mn float32) int {
	m := len(q) &^ 3
	if !haveSSSE3 || m == 0 {
		return 0
	}
	_ = dst[m-1]
	if m8 := m &^ 7; haveAVX2 && m8 == m {
		dequantize8AVX(&dst[0], &q[0], m, scale, mn)
		return m
	}
	dequantize8SSE(&dst[0], &q[0], m, scale, mn)
	return m
}

//go:noescape
func minMaxColsSSE(mn, mx, sum, x *float32, n int)

//go:noescape
func quantizeColsSSE(out *byte, even, odd, mn, sc *float32, n int, levels float32)

//go:noescape
func dequantizeColsSSE(dst *float32, q *byte, sc, mn *float32, n int)

func minMaxColsFast(mn, mx, sum, x []float32) int {
	m := len(x) &^ 3
	if !haveSSSE3 || m == 0 {
		return 0
	}
	_, _, _ = mn[m-1], mx[m-1], sum[m-1]
	if m8 := m &^ 7; haveAVX2 && m8 > 0 {
		minMaxColsAVX(&mn[0], &mx[0], &sum[0], &x[0], m8)
		if m8 == m {
			return m
		}
		minMaxColsSSE(&mn[m8], &mx[m8], &sum[m8], &x[m8], m-m8)
		return m
	}
	minMaxColsSSE(&mn[0], &mx[0], &sum[0], &x[0], m)
	return m
}

// quantizeColsFast: odd nil for q8.
func quantizeColsFast(out []byte, even, odd, mn, sc []float32, levels float32) int {
	m := len(even) &^ 3
	if !haveSSSE3 || m == 0 {
		return 0
	}
	_, _, _ = out[m-1], mn[m-1], sc[m-1]
	var po *float32
	if odd != nil {
		_ = odd[m-1]
		po = &odd[0]
	}
	if haveAVX2 && m%8 == 0 {
		quantizeColsAVX(&out[0], &even[0], po, &mn[0], &sc[0], m, levels)
		return m
	}
	quantizeColsSSE(&out[0], &even[0], po, &mn[0], &sc[0], m, levels)
	return m
}

func dequantizeColsFast(dst []float32, q []byte, sc, mn []float32) int {
	m := len(q) &^ 3
	if !haveSSSE3 || m == 0 {
		return 0
	}
	_, _, _ = dst[m-1], sc[m-1], mn[m-1]
	if m8 := m &^ 7; haveAVX2 && m8 == m {
		dequantizeColsAVX(&dst[0], &q[0], &sc[0], &mn[0], m)
		return m
	}
	dequantizeColsSSE(&dst[0], &q[0], &sc[0], &mn[0], m)
	return m
}

//go:noescape
func nibbles16SSE(out, in *byte, n int, tab *[32]byte)

//go:noescape
func nibbles32SSE(out, in *byte, n int, tab *[64]byte)

// nibblesFast writes the words tab[nibble] of a prefix of in (two per
// byte, high nibble first) and returns how many bytes of in it did.
func nibblesFast(out, in []byte, tab *[16]uint32, elem int) int {
	m := len(in) &^ 7
	if !haveSSSE3 || m == 0 {
		return 0
	}
	_ = out[2*m*elem-1]
	if elem == 2 {
		var t [32]byte
		for c, w := range tab {
			t[c], t[16+c] = byte(w), byte(w>>8)
		}
		nibbles16SSE(&out[0], &in[0], m, &t)
		return m
	}
	var t [64]byte
	for c, w := range tab {
		t[c], t[16+c], t[32+c], t[48+c] = byte(w), byte(w>>8), byte(w>>16), byte(w>>24)
	}
	nibbles32SSE(&out[0], &in[0], m, &t)
	return m
}

//go:noescape
func f16ToF32SSE(dst *float32, src *byte, n int) int

//go:noescape
func f32ToF16SSE(dst *byte, src *float32, n int) int

// f16ToF32Fast converts a prefix of src, up to the first group of 8
// holding a zero, subnormal, infinity or NaN; it returns its length.
func f16ToF32Fast(dst []float32, src []byte) int {
	m := len(dst) &^ 7
	if !haveSSSE3 || m == 0 {
		return 0
	}
	_ = src[2*m-1]
	if haveF16C {
		return f16ToF32AVX(&dst[0], &src[0], m)
	}
	return f16ToF32SSE(&dst[0], &src[0], m)
}

// f32ToF16Fast converts a prefix of src, up to the first group of 8
// holding a float that is not a normal half; it returns its length.
func f32ToF16Fast(dst []byte, src []float32) int {
	m := len(src) &^ 7
	if !haveSSSE3 || m == 0 {
		return 0
	}
	_ = dst[2*m-1]
	if haveF16C {
		return f32ToF16AVX(&dst[0], &src[0], m)
	}
	return f32ToF16SSE(&dst[0], &src[0], m)
}

func init() {
	kernels.Register("quant.ssse3", &haveSSSE3)
}
