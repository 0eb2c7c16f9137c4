package planes

import (
	"encoding/binary"
	"math/bits"
)

// Two 4X blocks decoded at once, one symbol a lookup. huff0's decoder
// runs a block's four streams in turns, and each stream's lookups form a
// chain (shift, load, shift) whose latency, not the CPU's width, sets the
// pace; eight streams, two full blocks', give the CPU twice the work to
// overlap. Planes uses it for tables that give two symbols too seldom for
// the double-symbol decoder (float16's top plane).

// huff8 is the eight streams' state: each one's window in sentinel form
// (the 8 bytes src[off-8:off], a 1 below them, shifted left past the bits
// used: its trailing zeros count those), and the symbols each has decoded.
// The assembly reads and writes it.
type huff8 struct {
	v   [8]uint64
	off [8]int
	op  int
}

const huff8Seg = planeBlock / 4 // a full block's symbols per stream

// huff8Out is where stream j's symbols go in dst: block j/4, its stream j%4.
func huff8Out(j int) int { return j/4*planeBlock + j%4*huff8Seg }

// decodeTwo decodes the 4X blocks payA and payB (full blocks, lying in src
// in that order) into dst (two blocks) with tables ta and tb. It returns
// how many blocks it decoded: 1 where payA's table suits the double-symbol
// decoder (it decodes that one), 0 where only payB's does (the caller
// decodes payA alone), else 2.
func decodeTwo(dst, src, payA, payB []byte, ta, tb *huffX2) (int, error) {
	remA, pairs, err := ta.readTable(payA, huffMinPairs)
	if err != nil {
		return 0, err
	}
	if pairs {
		return 1, ta.decode4X(dst[:planeBlock], remA)
	}
	remB, pairs, err := tb.readTable(payB, huffMinPairs)
	if err != nil || pairs {
		return 0, err
	}
	var st [8]huffStream
	base := func(b []byte) int { return cap(src) - cap(b) } // b's offset in src
	for b, rem := range [2][]byte{remA, remB} {
		if len(rem) < 6+4 {
			return 0, corrupt("planes: huffman block of %d bytes", len(rem))
		}
		lo := 6
		at := base(rem)
		for i := range 4 {
			hi := len(rem)
			if i < 3 {
				hi = lo + int(binary.LittleEndian.Uint16(rem[2*i:]))
				if hi >= len(rem) {
					return 0, corrupt("planes: huffman stream %d overruns the block", i)
				}
			}
			if hi <= lo || rem[hi-1] == 0 {
				return 0, corrupt("planes: huffman stream %d has no end mark", i)
			}
			j := 4*b + i
			st[j] = huffStream{used: 9 - uint(bits.Len8(rem[hi-1])), off: at + hi, lo: at + lo, hi: at + hi,
				op: huff8Out(j), end: huff8Out(j) + huff8Seg}
			lo = hi
		}
	}
	var h huff8
	for j := range st {
		h.v[j] = (load(src, st[j].off) | 1) << st[j].used
		h.off[j] = st[j].off
	}
	for {
		k := (huff8Seg - h.op) / 5
		for j := range h.off {
			k = min(k, (h.off[j]-8)/7) // a round moves a window down 7 bytes at most
		}
		if k <= 0 {
			break
		}
		huffRounds8(&h, &ta.single, &tb.single, src, dst, k)
	}
	for j := range st {
		s := &st[j]
		s.used = uint(bits.TrailingZeros64(h.v[j]))
		s.off = h.off[j]
		s.op += h.op
		t := ta
		if j >= 4 {
			t = tb
		}
		if err := t.finish1(dst, src, s, j%4); err != nil {
			return 0, err
		}
	}
	return 2, nil
}

// finish1 decodes the rest of stream s one symbol a lookup, checking
// that it ends exactly at its first bit.
func (t *huffX2) finish1(dst, src []byte, s *huffStream, i int) error {
	for s.op < s.end {
		s.reload(src)
		e := t.single[(s.c<<s.used)>>(64-huffLogMax)]
		dst[s.op] = byte(e >> 8)
		s.op++
		s.used += uint(e & 0xff)
		if s.over() > 0 {
			return corrupt("planes: huffman stream %d overread", i)
		}
	}
	if s.over() != 0 {
		return corrupt("planes: huffman stream %d: %d bits left", i, -s.over())
	}
	return nil
}

// huffRounds8Go runs k rounds of the eight streams: five lookups each,
// then a reload. The Go twin of the amd64 assembly, which must match it.
func huffRounds8Go(h *huff8, ta, tb *[1 << huffLogMax]uint16, src, dst []byte, k int) {
	for ; k > 0; k-- {
		for j := range 8 {
			t := ta
			if j >= 4 {
				t = tb
			}
			v := h.v[j]
			out := dst[huff8Out(j)+h.op:][:5]
			for s := range out {
				e := t[v>>(64-huffLogMax)]
				v <<= e & 63
				out[s] = byte(e >> 8)
			}
			u := bits.TrailingZeros64(v)
			h.off[j] -= u >> 3
			h.v[j] = (binary.LittleEndian.Uint64(src[h.off[j]-8:]) | 1) << (u & 7)
		}
		h.op += 5
	}
}
