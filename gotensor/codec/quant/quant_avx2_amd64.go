//go:build amd64 && !noasm

package quant

import (
	"golang.org/x/sys/cpu"

	"github.com/gotensor/gotensor/gotensor/internal/kernels"
)

// The AVX2 kernels (quant_avx2_amd64.s) take over from the SSE ones where
// the CPU has AVX2, and the half conversions use F16C where it has that
// too; tests turn them off to compare against the SSE and Go twins.
var (
	haveAVX2 = cpu.X86.HasAVX2
	haveF16C = cpu.X86.HasAVX2 && cpu.X86.HasF16C
)

//go:noescape
func f16ToF32AVX(dst *float32, src *byte, n int) int

//go:noescape
func f32ToF16AVX(dst *byte, src *float32, n int) int

//go:noescape
func bf16ToF32AVX(dst *float32, src *byte, n int)

//go:noescape
func f32ToBF16AVX(dst *byte, src *float32, n int)

//go:noescape
func minMaxSumAVX(x *float32, n int) (mn, mx, sum float32)

//go:noescape
func quantize8AVX(out *byte, x *float32, n int, mn, scale, levels float32)

//go:noescape
func quantize4AVX(out *byte, x *float32, n int, mn, scale, levels float32)

//go:noescape
func dequantize8AVX(dst *float32, q *byte, n int, scale, mn float32)

//go:noescape
func levels4AVX(dst, sc, mn *float32, groups int)

//go:noescape
func nibbles16GroupsAVX(out, in, words *byte, groups, half int)

//go:noescape
func nibbles32GroupsAVX(out, in, words *byte, groups, half int)

// f32ToBF16Fast rounds a prefix of src to bfloat16 and returns its length.
func f32ToBF16Fast(dst []byte, src []float32) int {
	m := len(src) &^ 7
	if !haveAVX2 || m == 0 {
		return 0
	}
	_ = dst[2*m-1]
	f32ToBF16AVX(&dst[0], &src[0], m)
	return m
}

// levels4Fast sets dst[16g+c] = float32(c)/sc[g] + mn[g] for the groups g
// of a prefix of sc and returns how many groups it did.
func levels4Fast(dst, sc, mn []float32) int {
	n := len(sc)
	if !haveAVX2 || n == 0 {
		return 0
	}
	_, _ = dst[16*n-1], mn[n-1]
	levels4AVX(&dst[0], &sc[0], &mn[0], n)
	return n
}

// nibblesGroupsFast writes groups of elem-byte words (2 or 4), each
// group the words words[16*elem*g:] (16 little-endian words) looked up by
// the 2*half nibbles of its half bytes of in (high nibble first); it
// reports whether it did.
func nibblesGroupsFast(out, in, words []byte, groups, half, elem int) bool {
	if !haveAVX2 || groups == 0 || half%8 != 0 || half == 0 {
		return false
	}
	_, _, _ = out[2*elem*half*groups-1], in[half*groups-1], words[16*elem*groups-1]
	if elem == 2 {
		nibbles16GroupsAVX(&out[0], &in[0], &words[0], groups, half)
	} else {
		nibbles32GroupsAVX(&out[0], &in[0], &words[0], groups, half)
	}
	return true
}

//go:noescape
func quantGroupsAVX(out *byte, pairs, x *float32, groups, group int, levels float32, bits int) int

// quantGroupsFast quantizes a prefix of the groups of x (the groups of
// whole rows: encodeGroups), their scale and min to pairs (len(pairs)/2
// groups), and returns how many groups it did: it stops at the first
// group that needs the builtins' min and max rules (a NaN, a zero end).
func quantGroupsFast(data []byte, pairs, x []float32, group, bits int, levels float32) int {
	groups := len(pairs) / 2
	if !haveAVX2 || groups == 0 || group%16 != 0 {
		return 0
	}
	_, _ = x[groups*group-1], data[groups*group*bits/8-1]
	return quantGroupsAVX(&data[0], &pairs[0], &x[0], groups, group, levels, bits)
}

//go:noescape
func dequantizeColsAVX(dst *float32, q *byte, sc, mn *float32, n int)

//go:noescape
func nibbleCodesAVX(out, in *byte, n int, shift uint)

// nibbleCodesFast sets out[c] = in[c]>>shift & 15 for a prefix of in and
// returns its length.
func nibbleCodesFast(out, in []byte, shift uint) int {
	m := len(in) &^ 31
	if !haveAVX2 || m == 0 {
		return 0
	}
	_ = out[m-1]
	nibbleCodesAVX(&out[0], &in[0], m, shift)
	return m
}

//go:noescape
func minMaxColsAVX(mn, mx, sum, x *float32, n int)

//go:noescape
func quantizeColsAVX(out *byte, even, odd, mn, sc *float32, n int, levels float32)

func init() {
	kernels.Register("quant.avx2", &haveAVX2)
	kernels.Register("quant.f16c", &haveF16C)
}
