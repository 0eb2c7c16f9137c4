package deflate

import (
	"slices"
	"sort"

	"github.com/gotensor/gotensor/gotensor/codec/internal/shuffle"
	"github.com/gotensor/gotensor/gotensor/internal/adler32"
)

// storedPiece is a stored block's payload that the two-stream decoder
// leaves in the chunk: src[src:src+n] are the inflated bytes at o, merged
// from there rather than copied first (shuffle-deflate stores the planes
// Huffman coding would not shrink, float16's low bytes among them).
type storedPiece struct{ o, src, n int }

// piecesChecksum is the Adler-32 of the inflated bytes of half, which
// starts at base: half's own, and src's where the pieces (in order) are.
func piecesChecksum(half []byte, base int, src []byte, pieces []storedPiece) uint32 {
	sum, at := uint32(1), 0
	for _, p := range pieces {
		o := p.o - base
		sum = adler32.Combine(sum, adler32.Checksum(half[at:o]), o-at)
		sum = adler32.Combine(sum, adler32.Checksum(src[p.src:p.src+p.n]), p.n)
		at = o + p.n
	}
	return adler32.Combine(sum, adler32.Checksum(half[at:]), len(half)-at)
}

// mergePieces merges the k planes of half (which starts at base) into
// dst, their bytes in half or, where the pieces (in order) are, in src:
// a run of elements at a time, cut where any plane's bytes change from
// one to the other. cuts is scratch. sums, where not nil (two rotated
// planes only), takes the Adler-32 of each plane's bytes on the way
// (mergeAdler2): half's Adler-32 is the two joined.
func mergePieces(dst, half []byte, base int, src []byte, pieces []storedPiece, k int, rot bool, cuts *[]int, sums *[2]uint32) {
	var pls [8][]byte
	n := len(half) / k
	merge := func(dst []byte, pl [][]byte) {
		if sums != nil {
			sums[0], sums[1] = mergeAdler2(dst, pl[0], pl[1], sums[0], sums[1])
		} else {
			shuffle.Merge(dst, pl, k, rot)
		}
	}
	if len(pieces) == 0 || n == 0 {
		merge(dst, shuffle.Cut(half, k, &pls))
		return
	}
	c := append((*cuts)[:0], 0, n)
	for _, p := range pieces {
		lo, hi := p.o-base, p.o-base+p.n
		for j := lo / n; j < k && j*n < hi; j++ {
			c = append(c, max(lo, j*n)-j*n, min(hi, (j+1)*n)-j*n)
		}
	}
	slices.Sort(c)
	c = slices.Compact(c)
	*cuts = c
	pl := pls[:k]
	for i := 0; i+1 < len(c); i++ {
		e0, e1 := c[i], c[i+1]
		for j := range pl {
			at := j*n + e0 // in half
			pl[j] = half[at : at+e1-e0]
			// the last piece starting at or before at
			q := sort.Search(len(pieces), func(q int) bool { return pieces[q].o-base > at }) - 1
			if q >= 0 && pieces[q].o-base+pieces[q].n > at {
				s := pieces[q].src + at - (pieces[q].o - base)
				pl[j] = src[s : s+e1-e0]
			}
		}
		merge(dst[e0*k:e1*k], pl)
	}
}
