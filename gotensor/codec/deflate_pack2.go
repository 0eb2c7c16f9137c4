package codec

import "encoding/binary"

// Packing the two streams of a two-stream chunk in one loop: each step
// packs four codes of each, so the two streams' dependency chains
// (through each bit buffer) run side by side, as planes' writer runs its
// streams in turns (planes_huffenc.go).

// packCodes is the code tables of the two streams' current blocks, the
// second after the first (pack2BMI2 reads it at this layout).
type packCodes [2][288]uint32

// packStep stores the codes of the four bytes of v in buf at pos, through
// the bit buffer acc of n bits; buf has a word of room at pos.
func packStep(codes *[288]uint32, v uint32, buf []byte, acc, n uint64, pos int) (uint64, uint64, int) {
	c0, c1, c2, c3 := codes[byte(v)], codes[byte(v>>8)], codes[byte(v>>16)], codes[v>>24]
	// join the four codes first, off the chain through n (shift
	// counts masked: Go then shifts without a range check)
	l0, l2 := uint64(c0>>16), uint64(c2>>16)
	lo := uint64(c0&0xFFFF) | uint64(c1&0xFFFF)<<(l0&63)
	hi := uint64(c2&0xFFFF) | uint64(c3&0xFFFF)<<(l2&63)
	l01 := l0 + uint64(c1>>16)
	acc |= (lo | hi<<(l01&63)) << (n & 63)
	n += l01 + l2 + uint64(c3>>16)
	binary.LittleEndian.PutUint64(buf[pos:], acc)
	pos += int(n >> 3)
	acc >>= n & 56
	n &= 7
	return acc, n, pos
}

// pack2Go packs pa into bufA (state sa) and pb into bufB (state sb), four
// bytes of each a step, while both have four bytes left and a word of
// room: packGo on each, in turns.
func pack2Go(codes *packCodes, pa, pb, bufA, bufB []byte, sa, sb *packState) {
	for sa.i+4 <= len(pa) && sb.i+4 <= len(pb) && sa.pos+8 <= len(bufA) && sb.pos+8 <= len(bufB) {
		sa.acc, sa.n, sa.pos = packStep(&codes[0], binary.LittleEndian.Uint32(pa[sa.i:]), bufA, sa.acc, sa.n, sa.pos)
		sa.i += 4
		sb.acc, sb.n, sb.pos = packStep(&codes[1], binary.LittleEndian.Uint32(pb[sb.i:]), bufB, sb.acc, sb.n, sb.pos)
		sb.i += 4
	}
}

// literals2 appends the codes of a to wa (codes[0], bits in all) and of b
// to wb (codes[1], bitsB), packing the two in one loop.
func literals2(wa, wb *bitWriter, a, b []byte, codes *packCodes, bitsA, bitsB int) {
	bufA, sa := wa.packStart(bitsA)
	bufB, sb := wb.packStart(bitsB)
	pack2Fast(codes, a, b, bufA, bufB, &sa, &sb)
	wa.packFinish(&codes[0], a, bufA, sa)
	wb.packFinish(&codes[1], b, bufB, sb)
}
