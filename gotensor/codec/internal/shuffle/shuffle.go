// Package shuffle splits elements into byte planes and merges them back:
// byte j (most significant first) of every element goes to plane j, each
// element first rotated left by one bit where it has a sign, which moves
// the sign next to the mantissa so that the top plane of bfloat16 and
// float32 holds the exponent alone. Exponent planes are highly skewed and
// entropy-code well; mantissa planes are close to uniform. planes,
// shuffle-deflate and shuffle-zstd code the planes.
//
// The SSSE3 and AVX2 kernels (amd64, not under the tag noasm) split and
// merge 2- and 4-byte elements; the Go code here is their twin.
package shuffle

import (
	"encoding/binary"
	"math/bits"

	"github.com/gotensor/gotensor/gotensor/tensor"
)

// Layout gives the element width the planes of dtype d split by, and
// whether the element has a sign bit to rotate.
func Layout(d tensor.DType) (k int, rot bool) {
	switch d {
	case tensor.Complex64:
		return 4, true
	case tensor.Complex128:
		return 8, true
	}
	return d.Size(), d.HasSign()
}

// Supports reports whether the byte-plane codecs code dtype d: floats and
// complex numbers.
func Supports(d tensor.DType) bool {
	return d.IsFloat() || d == tensor.Complex64 || d == tensor.Complex128
}

// Cut cuts b into k planes of len(b)/k bytes, in pl.
func Cut(b []byte, k int, pl *[8][]byte) [][]byte {
	n := len(b) / k
	for j := 0; j < k; j++ {
		pl[j] = b[j*n : (j+1)*n]
	}
	return pl[:k]
}

// Split writes the planes of src (elements of k bytes, little
// endian) into planes[0..k-1]; rot selects the sign rotation.
func Split(planes [][]byte, src []byte, k int, rot bool) {
	switch {
	case k == 2 && rot:
		n := len(src) / 2
		done := splitFast2(planes[0], planes[1], src, n)
		split2(planes[0][done:], planes[1][done:], src[2*done:])
	case k == 4 && rot:
		n := len(src) / 4
		done := splitFast4(planes, src, n)
		split4([][]byte{planes[0][done:], planes[1][done:], planes[2][done:], planes[3][done:]}, src[4*done:])
	default:
		splitGeneric(planes, src, k, rot)
	}
}

// Merge is the inverse of Split.
func Merge(dst []byte, planes [][]byte, k int, rot bool) {
	switch {
	case k == 2 && rot:
		done := mergeFast2(dst, planes[0], planes[1], len(dst)/2)
		merge2(dst[2*done:], planes[0][done:], planes[1][done:])
	case k == 4 && rot:
		done := mergeFast4(dst, planes, len(dst)/4)
		merge4(dst[4*done:], [][]byte{planes[0][done:], planes[1][done:], planes[2][done:], planes[3][done:]})
	default:
		mergeGeneric(dst, planes, k, rot)
	}
}

// splitGeneric is the plain twin of the fast paths, for every width.
func splitGeneric(planes [][]byte, src []byte, k int, rot bool) {
	n := len(src) / k
	for i := 0; i < n; i++ {
		var v uint64
		for b := 0; b < k; b++ {
			v |= uint64(src[i*k+b]) << (8 * b)
		}
		if rot {
			v = Rotl(v, k)
		}
		for j := 0; j < k; j++ {
			planes[j][i] = byte(v >> (8 * (k - 1 - j)))
		}
	}
}

func mergeGeneric(dst []byte, planes [][]byte, k int, rot bool) {
	n := len(dst) / k
	for i := 0; i < n; i++ {
		var v uint64
		for j := 0; j < k; j++ {
			v |= uint64(planes[j][i]) << (8 * (k - 1 - j))
		}
		if rot {
			v = rotr(v, k)
		}
		for b := 0; b < k; b++ {
			dst[i*k+b] = byte(v >> (8 * b))
		}
	}
}

// Rotl rotates the k-byte element v left by one bit.
func Rotl(v uint64, k int) uint64 {
	w := uint(8 * k)
	mask := uint64(1)<<w - 1
	if w == 64 {
		return bits.RotateLeft64(v, 1)
	}
	return (v<<1 | v>>(w-1)) & mask
}

func rotr(v uint64, k int) uint64 {
	w := uint(8 * k)
	if w == 64 {
		return bits.RotateLeft64(v, -1)
	}
	mask := uint64(1)<<w - 1
	return (v>>1 | v<<(w-1)) & mask
}

const (
	lane16Low = 0x0001000100010001
	byteLo16  = 0x00FF00FF00FF00FF
)

// split2: four 16-bit elements per 64-bit word, rotated in parallel.
func split2(hi, lo, src []byte) {
	n := len(src) / 2
	i := 0
	for ; i+8 <= n; i += 8 {
		a := binary.LittleEndian.Uint64(src[2*i:])
		b := binary.LittleEndian.Uint64(src[2*i+8:])
		a = (a<<1)&^lane16Low | (a>>15)&lane16Low
		b = (b<<1)&^lane16Low | (b>>15)&lane16Low
		binary.LittleEndian.PutUint64(lo[i:], pack8(a&byteLo16, b&byteLo16))
		binary.LittleEndian.PutUint64(hi[i:], pack8((a>>8)&byteLo16, (b>>8)&byteLo16))
	}
	for ; i < n; i++ {
		v := uint16(src[2*i]) | uint16(src[2*i+1])<<8
		v = v<<1 | v>>15
		hi[i], lo[i] = byte(v>>8), byte(v)
	}
}

// pack8 gathers the low bytes of the four 16-bit lanes of a and of b.
func pack8(a, b uint64) uint64 {
	return compact(a) | compact(b)<<32
}

// compact turns 0x00dd00cc00bb00aa into 0xddccbbaa.
func compact(x uint64) uint64 {
	x = (x | x>>8) & 0x0000FFFF0000FFFF
	x = (x | x>>16) & 0x00000000FFFFFFFF
	return x
}

// spread is the inverse of compact.
func spread(x uint64) uint64 {
	x = (x | x<<16) & 0x0000FFFF0000FFFF
	x = (x | x<<8) & byteLo16
	return x
}

// merge2 merges the two planes of rotated 2-byte elements in Go (the
// kernels' twin; Merge uses the kernels).
func merge2(dst, hi, lo []byte) {
	n := len(dst) / 2
	i := 0
	for ; i+8 <= n; i += 8 {
		h := binary.LittleEndian.Uint64(hi[i:])
		l := binary.LittleEndian.Uint64(lo[i:])
		a := spread(l&0xFFFFFFFF) | spread(h&0xFFFFFFFF)<<8
		b := spread(l>>32) | spread(h>>32)<<8
		a = (a>>1)&^(lane16Low<<15) | (a&lane16Low)<<15
		b = (b>>1)&^(lane16Low<<15) | (b&lane16Low)<<15
		binary.LittleEndian.PutUint64(dst[2*i:], a)
		binary.LittleEndian.PutUint64(dst[2*i+8:], b)
	}
	for ; i < n; i++ {
		v := uint16(hi[i])<<8 | uint16(lo[i])
		v = v>>1 | v<<15
		dst[2*i], dst[2*i+1] = byte(v), byte(v>>8)
	}
}

func split4(planes [][]byte, src []byte) {
	p0, p1, p2, p3 := planes[0], planes[1], planes[2], planes[3]
	n := len(src) / 4
	p0, p1, p2, p3 = p0[:n], p1[:n], p2[:n], p3[:n]
	for i := 0; i < n; i++ {
		v := binary.LittleEndian.Uint32(src[4*i:])
		v = v<<1 | v>>31
		p0[i], p1[i], p2[i], p3[i] = byte(v>>24), byte(v>>16), byte(v>>8), byte(v)
	}
}

func merge4(dst []byte, planes [][]byte) {
	p0, p1, p2, p3 := planes[0], planes[1], planes[2], planes[3]
	n := len(dst) / 4
	p0, p1, p2, p3 = p0[:n], p1[:n], p2[:n], p3[:n]
	for i := 0; i < n; i++ {
		v := uint32(p0[i])<<24 | uint32(p1[i])<<16 | uint32(p2[i])<<8 | uint32(p3[i])
		v = v>>1 | v<<31
		binary.LittleEndian.PutUint32(dst[4*i:], v)
	}
}
