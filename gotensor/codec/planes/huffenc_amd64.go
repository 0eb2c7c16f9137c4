//go:build amd64 && !noasm

package planes

// huffRounds2 runs k of huffCode4's rounds for streams a and b (the
// caller has checked that blk and their buffers hold all they read and
// write): in assembly where the machine has BMI2 (huffFast), else in Go.
func huffRounds2(a, b *huffBits, vals *[256]uint16, lens *[256]uint8, blk []byte, k int) {
	if !huffFast || k <= 0 {
		huffRounds2Go(a, b, vals, lens, blk, k)
		return
	}
	huffRounds2BMI2(a, b, vals, lens, &blk[0], &a.Buf[0], &b.Buf[0], k)
}

//go:noescape
func huffRounds2BMI2(a, b *huffBits, vals *[256]uint16, lens *[256]uint8, src, outA, outB *byte, k int)
