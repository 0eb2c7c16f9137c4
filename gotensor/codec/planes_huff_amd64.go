package codec

// huffRounds4 runs k of fast4's rounds (the caller has checked that src
// and dst hold all they read and write) in assembly.
func huffRounds4(hot *[4]huffHot, tb *[1 << huffLogMax]uint32, src, dst []byte, k int) {
	huffRounds4Asm(hot, tb, &src[0], &dst[0], k)
}

//go:noescape
func huffRounds4Asm(hot *[4]huffHot, tb *[1 << huffLogMax]uint32, src, dst *byte, k int)
