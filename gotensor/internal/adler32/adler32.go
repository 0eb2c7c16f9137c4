// Package adler32 is gotensor's one Adler-32 (RFC 1950), the checksum
// DOCA's deflate tasks report and shuffle-deflate's chunk table keeps:
// whole 32-byte blocks summed in AVX2 lanes (blocksAVX2, amd64 without
// the tag noasm) or by their Go twin (blocksGo), the rest eight bytes a
// step. hash/adler32 adds byte by byte, each sum waiting on the last
// (about 1.5 GB/s here, where a shuffle-deflate chunk decodes at 2); it is
// the twin the tests hold this package to.
package adler32

import "encoding/binary"

const (
	mod      = 65521
	wordsMax = 5552 // bytes before s2 could overflow 32 bits
	// runMax is the most 32-byte blocks one kernel call sums: the lanes
	// stay under 2^32
	runMax = 1024
)

// Lanes are the running sums of a run of whole 32-byte blocks: eight
// lanes each of the bytes ([0:8]), of the byte sums before each block
// ([8:16]) and of the bytes weighted 32..1 by their place in their
// block ([16:24]). Fold adds them to a checksum.
type Lanes [24]uint32

// Checksum is the Adler-32 of b.
func Checksum(b []byte) uint32 { return Update(1, b) }

// Update is the Adler-32 of the bytes summed in adler followed by b.
func Update(adler uint32, b []byte) uint32 {
	if asm && len(b) >= 64 {
		for len(b) >= 32 {
			m := min(len(b)/32, runMax) * 32
			var v Lanes
			blocksAVX2(b[:m], &v)
			adler = Fold(adler, m, &v)
			b = b[m:]
		}
	}
	return words(adler, b)
}

// words adds b to adler eight bytes a step: per 8 bytes b0..b7,
// s2 += 8*s1 + 8*b0 + 7*b1 + ... + 1*b7 and s1 += b0 + ... + b7, the sums
// taken in 16-bit lanes of one word and added across by multiplication;
// the reductions modulo 65521 come every wordsMax bytes, as zlib's do.
func words(adler uint32, b []byte) uint32 {
	s1, s2 := adler&0xFFFF, adler>>16
	for len(b) > 0 {
		n := min(len(b), wordsMax)
		blk := b[:n]
		b = b[n:]
		for len(blk) >= 16 { // two words: s2 += 16*s1 + 8*sum0 + weighted0 + weighted1
			sum0, w0 := word(binary.LittleEndian.Uint64(blk))
			sum1, w1 := word(binary.LittleEndian.Uint64(blk[8:]))
			s2 += 16*s1 + 8*sum0 + w0 + w1
			s1 += sum0 + sum1
			blk = blk[16:]
		}
		if len(blk) >= 8 {
			sum, w := word(binary.LittleEndian.Uint64(blk))
			s2 += 8*s1 + w
			s1 += sum
			blk = blk[8:]
		}
		for _, c := range blk {
			s1 += uint32(c)
			s2 += s1
		}
		s1 %= mod
		s2 %= mod
	}
	return s2<<16 | s1
}

// blocks adds the whole 32-byte blocks of b to adler (the kernel where
// asm, else blocksGo) and returns adler and the bytes left; the tests
// run both.
func blocks(adler uint32, b []byte, useAsm bool) (uint32, []byte) {
	for len(b) >= 32 {
		m := min(len(b)/32, runMax) * 32
		var v Lanes
		if useAsm {
			blocksAVX2(b[:m], &v)
		} else {
			blocksGo(b[:m], &v)
		}
		adler = Fold(adler, m, &v)
		b = b[m:]
	}
	return adler, b
}

// Fold adds to adler the m bytes (whole blocks, at most 1024 of them)
// whose lanes a kernel summed into v.
func Fold(adler uint32, m int, v *Lanes) uint32 {
	s1, s2 := uint64(adler&0xFFFF), uint64(adler>>16)
	var sum, before, weighted uint64
	for i := 0; i < 8; i++ {
		sum += uint64(v[i])
		before += uint64(v[8+i])
		weighted += uint64(v[16+i])
	}
	// each byte counts in s2 once for every byte from it to the end
	s2 = (s2 + uint64(m)*s1 + 32*before + weighted) % mod
	s1 = (s1 + sum) % mod
	return uint32(s2<<16 | s1)
}

// blocksGo adds the whole 32-byte blocks of p to the lanes v: the AVX2
// kernels' twin, lane for lane. Lane j of the byte sums holds the bytes
// 8(j/2)..8(j/2)+7 of each block (j even; odd lanes stay 0, as the 64-bit
// sums of VPSADBW leave them); lane j of the weighted sums the bytes
// 4j..4j+3.
func blocksGo(p []byte, v *Lanes) {
	for ; len(p) >= 32; p = p[32:] {
		for j := 0; j < 8; j++ {
			v[8+j] += v[j]
		}
		for j := 0; j < 8; j += 2 {
			for _, c := range p[4*j : 4*j+8] {
				v[j] += uint32(c)
			}
		}
		for j := 0; j < 8; j++ {
			for i := 4 * j; i < 4*j+4; i++ {
				v[16+j] += uint32(32-i) * uint32(p[i])
			}
		}
	}
}

// word gives the sum of the 8 bytes of w (little endian) and
// 8*b0 + 7*b1 + ... + 1*b7.
func word(w uint64) (sum, weighted uint32) {
	const (
		lanes   = 0x00FF00FF00FF00FF
		ones    = 0x0001000100010001
		weights = 8<<48 | 6<<32 | 4<<16 | 2 // pair weights, first pair highest
	)
	odd := w >> 8 & lanes
	pair := w&lanes + odd // lane j: b[2j] + b[2j+1]
	// 8b0+7b1 = 8(b0+b1) - b1, ...: weigh the pairs, less the odd bytes
	return uint32(pair * ones >> 48), uint32(pair*weights>>48) - uint32(odd*ones>>48)
}

// Combine is the Adler-32 of a || b from a's and b's (b of lenB bytes),
// as zlib's adler32_combine: s1 adds, and s2 gains lenB times a's s1
// (without the initial 1 counted twice).
func Combine(a, b uint32, lenB int) uint32 {
	rem := uint32(lenB % mod)
	s1 := a & 0xFFFF
	s2 := rem * s1 % mod
	s1 += b&0xFFFF + mod - 1
	s2 += a>>16 + b>>16 + mod - rem
	if s1 >= mod {
		s1 -= mod
	}
	if s1 >= mod {
		s1 -= mod
	}
	if s2 >= 2*mod {
		s2 -= 2 * mod
	}
	if s2 >= mod {
		s2 -= mod
	}
	return s2<<16 | s1
}
