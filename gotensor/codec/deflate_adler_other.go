//go:build !amd64

package codec

// adler32Go is Adler-32 without libdeflate.
func adler32Go(b []byte) uint32 { return adler32Words(b) }

// adlerKernel sums whole blocks of p into v (adlerBlocksGo: no assembly
// here).
func adlerKernel(p []byte, v *[24]uint32, _ bool) { adlerBlocksGo(p, v) }

// mergeAdlerKernel has no kernel here: mergeAdler2 merges and sums in Go.
func mergeAdlerKernel(_, _, _ []byte, _ *[2][24]uint32) bool { return false }
