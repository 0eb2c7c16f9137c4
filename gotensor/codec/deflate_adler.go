package codec

import "encoding/binary"

// adler32Words is Adler-32 (RFC 1950) eight bytes a step, for builds without
// libdeflate: hash/adler32 adds byte by byte, each sum waiting on the
// last. Per 8 bytes b0..b7, s2 += 8*s1 + 8*b0 + 7*b1 + ... + 1*b7 and
// s1 += b0 + ... + b7, the sums taken in 16-bit lanes of one word and
// added across by multiplication; the reductions modulo 65521 come every
// adlerMax bytes, as zlib's do. hash/adler32 is its twin in tests.
func adler32Words(b []byte) uint32 { return adler32Update(1, b) }

// adler32Update is the Adler-32 of the bytes summed in adler followed by b
// (adler32Words's steps).
func adler32Update(adler uint32, b []byte) uint32 {
	const (
		mod      = 65521
		adlerMax = 5552 // bytes before s2 could overflow 32 bits
	)
	s1, s2 := adler&0xFFFF, adler>>16
	for len(b) > 0 {
		n := min(len(b), adlerMax)
		blk := b[:n]
		b = b[n:]
		for len(blk) >= 16 { // two words: s2 += 16*s1 + 8*sum0 + weighted0 + weighted1
			sum0, w0 := adlerWord(binary.LittleEndian.Uint64(blk))
			sum1, w1 := adlerWord(binary.LittleEndian.Uint64(blk[8:]))
			s2 += 16*s1 + 8*sum0 + w0 + w1
			s1 += sum0 + sum1
			blk = blk[16:]
		}
		if len(blk) >= 8 {
			sum, w := adlerWord(binary.LittleEndian.Uint64(blk))
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

// adler32Blocks adds whole 32-byte blocks of b to adler (as
// adler32Update would), its 1024-block runs summed by adlerKernel (the
// AVX2 kernel where asm, else its Go twin adlerBlocksGo; called directly,
// the lanes stay on the stack) into eight lanes each of the
// bytes (v[0:8]), of the byte sums before each block (v[8:16]) and of the
// bytes weighted 32..1 by their place in their block (v[16:24]); it
// returns adler and the bytes left.
func adler32Blocks(adler uint32, b []byte, asm bool) (uint32, []byte) {
	for len(b) >= 32 {
		m := min(len(b)/32, 1024) * 32 // lane sums stay under 2^32
		var v [24]uint32
		adlerKernel(b[:m], &v, asm)
		adler = adlerFold(adler, m, &v)
		b = b[m:]
	}
	return adler, b
}

// adlerFold adds to adler the m bytes (whole blocks, at most 1024) whose
// lanes the kernel summed into v.
func adlerFold(adler uint32, m int, v *[24]uint32) uint32 {
	const mod = 65521
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

// mergeAdler2 is mergePlanes of two rotated planes (float16, bfloat16)
// that adds hi to the Adler-32 ah and lo to al on the way: one pass over
// the planes where a check and a merge would take two. The AVX2 kernel
// sums up to 1024 blocks of 32 elements at a time (the lanes stay under
// 2^32); the rest, and all without it, is merge2 and adler32Update.
func mergeAdler2(dst, hi, lo []byte, ah, al uint32) (uint32, uint32) {
	for len(hi) >= 32 {
		m := min(len(hi)/32, 1024) * 32
		var v [2][24]uint32
		if !mergeAdlerKernel(dst[:2*m], hi[:m], lo[:m], &v) {
			break
		}
		ah, al = adlerFold(ah, m, &v[0]), adlerFold(al, m, &v[1])
		dst, hi, lo = dst[2*m:], hi[m:], lo[m:]
	}
	merge2(dst, hi, lo)
	return adler32Update(ah, hi), adler32Update(al, lo)
}

// adlerBlocksGo is the AVX2 kernel's twin, lane for lane: lane j of the
// byte sums holds the bytes 8(j/2)..8(j/2)+7 of each block (j even; odd
// lanes stay 0, as the 64-bit sums of VPSADBW leave them); lane j of the
// weighted sums the bytes 4j..4j+3.
func adlerBlocksGo(p []byte, v *[24]uint32) {
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

// adlerWord gives the sum of the 8 bytes of w (little endian) and
// 8*b0 + 7*b1 + ... + 1*b7.
func adlerWord(w uint64) (sum, weighted uint32) {
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

// adler32Combine is the Adler-32 of a || b from a's and b's (b of lenB
// bytes), as zlib's adler32_combine: s1 adds, and s2 gains lenB times
// a's s1 (without the initial 1 counted twice).
func adler32Combine(a, b uint32, lenB int) uint32 {
	const mod = 65521
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
