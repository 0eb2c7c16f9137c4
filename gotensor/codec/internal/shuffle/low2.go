package shuffle

import "encoding/binary"

// Low bits of a plane, kept apart. The top plane of float16 (sign
// rotated) is the 5-bit exponent and the mantissa's top 3 bits; the
// lowest two of those are close to uniform in real weights. Cut off and
// packed 4 to a byte, they cost what a Huffman code spends on them, and
// the plane left (6 bits) has codes 2 bits shorter: its decoder gets more
// symbols per table lookup (planes' split float16 layout).
//
// Packed layout, per group of 32 elements (8 bytes): byte p of the group
// holds the low 2 bits of elements p, p+8, p+16 and p+24 of the group, at
// bits 0, 2, 4 and 6, so that a 64-bit word of the packed plane unpacks
// against four 64-bit words of the plane by shifts alone.

// Low2Len is the packed size of the low 2 bits of n elements.
func Low2Len(n int) int { return (n + 31) / 32 * 8 }

const (
	low2  = 0x0303030303030303
	high6 = 0xFCFCFCFCFCFCFCFC
)

// CutLow2 moves the low 2 bits of every byte of p into b (Low2Len(len(p))
// bytes), leaving p's bytes shifted right by 2.
func CutLow2(b, p []byte) {
	n := len(p)
	b = b[:Low2Len(n)]
	g := cutLow2Fast(b, p)
	for ; 32*(g+1) <= n; g++ {
		q := (*[32]byte)(p[32*g:])
		w0 := binary.LittleEndian.Uint64(q[0:])
		w1 := binary.LittleEndian.Uint64(q[8:])
		w2 := binary.LittleEndian.Uint64(q[16:])
		w3 := binary.LittleEndian.Uint64(q[24:])
		binary.LittleEndian.PutUint64(b[8*g:], w0&low2|(w1&low2)<<2|(w2&low2)<<4|(w3&low2)<<6)
		binary.LittleEndian.PutUint64(q[0:], (w0&high6)>>2)
		binary.LittleEndian.PutUint64(q[8:], (w1&high6)>>2)
		binary.LittleEndian.PutUint64(q[16:], (w2&high6)>>2)
		binary.LittleEndian.PutUint64(q[24:], (w3&high6)>>2)
	}
	clear(b[8*g:])
	for i := 32 * g; i < n; i++ {
		j := i - 32*g
		b[8*g+j%8] |= (p[i] & 3) << (2 * (j / 8))
		p[i] >>= 2
	}
}

// JoinLow2 is the inverse of CutLow2: p's bytes (6 bits each) shifted
// left by 2 and joined with their low 2 bits from b.
func JoinLow2(p, b []byte) {
	n := len(p)
	b = b[:Low2Len(n)]
	g := joinLow2Fast(p, b)
	for ; 32*(g+1) <= n; g++ {
		q := (*[32]byte)(p[32*g:])
		w := binary.LittleEndian.Uint64(b[8*g:])
		binary.LittleEndian.PutUint64(q[0:], binary.LittleEndian.Uint64(q[0:])<<2&high6|w&low2)
		binary.LittleEndian.PutUint64(q[8:], binary.LittleEndian.Uint64(q[8:])<<2&high6|w>>2&low2)
		binary.LittleEndian.PutUint64(q[16:], binary.LittleEndian.Uint64(q[16:])<<2&high6|w>>4&low2)
		binary.LittleEndian.PutUint64(q[24:], binary.LittleEndian.Uint64(q[24:])<<2&high6|w>>6&low2)
	}
	for i := 32 * g; i < n; i++ {
		j := i - 32*g
		p[i] = p[i]<<2 | b[8*g+j%8]>>(2*(j/8))&3
	}
}
