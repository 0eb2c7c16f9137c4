package codec

// adlerBlocksAVX2 is adlerBlocksGo in AVX2 assembly; p holds at least one
// whole block.
//
//go:noescape
func adlerBlocksAVX2(p []byte, v *[24]uint32)

// adler32Go is Adler-32 without libdeflate: AVX2 over whole blocks where
// the CPU has it, adler32Words otherwise and for the tail.
func adler32Go(b []byte) uint32 {
	if !haveAVX2 || len(b) < 64 {
		return adler32Words(b)
	}
	adler, rest := adler32Blocks(1, b, true)
	return adler32Update(adler, rest)
}

// adlerKernel sums whole blocks of p into v: adlerBlocksAVX2 where asm,
// else adlerBlocksGo.
func adlerKernel(p []byte, v *[24]uint32, asm bool) {
	if asm {
		adlerBlocksAVX2(p, v)
	} else {
		adlerBlocksGo(p, v)
	}
}

// mergeAdler2AVX2 is merge2AVX2 adding the Adler-32 lanes of hi to v[0]
// and of lo to v[1] (as adlerBlocksAVX2 does); n is a multiple of 32.
//
//go:noescape
func mergeAdler2AVX2(dst, hi, lo *byte, n int, v *[2][24]uint32)

// mergeAdlerKernel runs mergeAdler2AVX2 on whole blocks (len(hi) a
// multiple of 32, dst twice as long); false without AVX2.
func mergeAdlerKernel(dst, hi, lo []byte, v *[2][24]uint32) bool {
	if !haveAVX2 {
		return false
	}
	_, _ = dst[2*len(hi)-1], lo[len(hi)-1]
	mergeAdler2AVX2(&dst[0], &hi[0], &lo[0], len(hi), v)
	return true
}
