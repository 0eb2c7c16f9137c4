//go:build amd64 && !noasm

package deflate

import (
	"github.com/gotensor/gotensor/gotensor/internal/kernels"
	"golang.org/x/sys/cpu"

	"github.com/gotensor/gotensor/gotensor/internal/adler32"
)

// haveAVX2: the merge and check kernel runs (tests turn it off).
var haveAVX2 = cpu.X86.HasAVX2

// mergeAdler2AVX2 is shuffle's AVX2 merge of two rotated planes adding
// the Adler-32 lanes of hi to v[0] and of lo to v[1] (as adler32's kernel
// sums them); n is a multiple of 32.
//
//go:noescape
func mergeAdler2AVX2(dst, hi, lo *byte, n int, v *[2]adler32.Lanes)

// mergeAdlerKernel runs mergeAdler2AVX2 on whole blocks (len(hi) a
// multiple of 32, dst twice as long); false without AVX2.
func mergeAdlerKernel(dst, hi, lo []byte, v *[2]adler32.Lanes) bool {
	if !haveAVX2 {
		return false
	}
	_, _ = dst[2*len(hi)-1], lo[len(hi)-1]
	mergeAdler2AVX2(&dst[0], &hi[0], &lo[0], len(hi), v)
	return true
}

func init() {
	kernels.Register("deflate.merge-adler-avx2", &haveAVX2)
}
