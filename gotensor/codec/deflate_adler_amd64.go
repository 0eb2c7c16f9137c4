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
