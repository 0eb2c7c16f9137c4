package deflate

import (
	"github.com/gotensor/gotensor/gotensor/codec/internal/shuffle"
	"github.com/gotensor/gotensor/gotensor/internal/adler32"
)

// mergeAdler2 is shuffle.Merge of two rotated planes (float16, bfloat16)
// that adds hi to the Adler-32 ah and lo to al on the way: one pass over
// the planes where a check and a merge would take two. The AVX2 kernel
// sums up to 1024 blocks of 32 elements at a time (the lanes stay under
// 2^32); the rest, and all without it, is shuffle.Merge (its kernels)
// and adler32.Update (its kernel): the two passes the fused kernel saves.
func mergeAdler2(dst, hi, lo []byte, ah, al uint32) (uint32, uint32) {
	for len(hi) >= 32 {
		m := min(len(hi)/32, 1024) * 32
		var v [2]adler32.Lanes
		if !mergeAdlerKernel(dst[:2*m], hi[:m], lo[:m], &v) {
			break
		}
		ah, al = adler32.Fold(ah, m, &v[0]), adler32.Fold(al, m, &v[1])
		dst, hi, lo = dst[2*m:], hi[m:], lo[m:]
	}
	shuffle.Merge(dst, [][]byte{hi, lo}, 2, true)
	return adler32.Update(ah, hi), adler32.Update(al, lo)
}
