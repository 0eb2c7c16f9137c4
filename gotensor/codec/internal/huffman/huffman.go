// Package huffman builds length-limited Huffman codes, the code lengths
// planes' writer (huff0's 4X blocks) and shuffle-deflate's writer
// (DEFLATE's dynamic blocks) give their symbols.
package huffman

import "math/bits"

// Ranks gives the symbols of order (count<<16 | symbol, sorted
// ascending, at least two; a total count under 2^32) Huffman code lengths
// limited to maxBits (at most MaxBits), by rank, the most frequent
// first: nb[r] (lengths ascending) and cnt[r] its count. The lengths are
// Moffat and Katajainen's in-place Huffman ones (depth is their scratch),
// then limited as huff0 (and zstd) limit theirs.
func Ranks(order []uint64, depth []uint32, nb []uint8, cnt []uint32, maxBits uint8) {
	n := len(order)
	a := depth[:n]
	for i, o := range order {
		a[i] = uint32(o >> 16)
	}
	a[0] += a[1] // the tree's internal nodes, in place
	root, leaf := 0, 2
	for next := 1; next < n-1; next++ {
		if leaf >= n || a[root] < a[leaf] {
			a[next], a[root] = a[root], uint32(next)
			root++
		} else {
			a[next] = a[leaf]
			leaf++
		}
		if leaf >= n || (root < next && a[root] < a[leaf]) {
			a[next] += a[root]
			a[root] = uint32(next)
			root++
		} else {
			a[next] += a[leaf]
			leaf++
		}
	}
	a[n-2] = 0 // the internal nodes' depths
	for next := n - 3; next >= 0; next-- {
		a[next] = a[a[next]] + 1
	}
	var count [MaxSyms]int // codes by length
	avail, d := 1, 0
	for r := n - 2; avail > 0; d++ {
		used := 0
		for r >= 0 && int(a[r]) == d {
			used++
			r--
		}
		count[d] += avail - used
		avail = 2 * used
	}
	r := 0 // lengths ascending: the most frequent first
	for l := 1; l < d; l++ {
		for range count[l] {
			nb[r], cnt[r] = uint8(l), uint32(order[n-1-r]>>16)
			r++
		}
	}
	limitLengths(nb[:n], cnt[:n], maxBits)
}

// MaxSyms bounds the symbols of a code Ranks builds: DEFLATE's
// literal/length alphabet.
const MaxSyms = 288

// MaxBits is the longest code length a limit may allow (DEFLATE's).
const MaxBits = 15

// limitLengths limits the code lengths nb (of symbols ranked by count,
// the most frequent first: cnt; lengths ascending, a complete code) to
// maxBits, keeping the code complete: huff0's setMaxHeight (zstd's
// HUF_setMaxHeight). The symbols over the limit are cut to it, and the
// code space that takes is repaid by lengthening the rarest symbols that
// cost least, one bit at a time.
func limitLengths(nb []uint8, cnt []uint32, maxBits uint8) {
	last := len(nb) - 1
	largest := nb[last]
	if largest <= maxBits {
		return
	}
	cost := 0 // in units of 2^-largest
	base := 1 << (largest - maxBits)
	n := last
	for nb[n] > maxBits {
		cost += base - 1<<(largest-nb[n])
		nb[n] = maxBits
		n--
	}
	for nb[n] == maxBits {
		n--
	}
	cost >>= largest - maxBits // now in units of 2^-maxBits
	const none = -1
	var rankLast [MaxBits + 2]int // the last (rarest) symbol of each length below maxBits, by maxBits minus it
	for i := range rankLast {
		rankLast[i] = none
	}
	cur := maxBits
	for pos := n; pos >= 0; pos-- {
		if nb[pos] >= cur {
			continue
		}
		cur = nb[pos]
		rankLast[maxBits-cur] = pos
	}
	for cost > 0 {
		dec := uint8(bits.Len32(uint32(cost)))
		for ; dec > 1; dec-- {
			hi, lo := rankLast[dec], rankLast[dec-1]
			if hi == none {
				continue
			}
			if lo == none || cnt[hi] <= 2*cnt[lo] {
				break
			}
		}
		for dec <= maxBits && rankLast[dec] == none {
			dec++
		}
		cost -= 1 << (dec - 1)
		if rankLast[dec-1] == none {
			rankLast[dec-1] = rankLast[dec]
		}
		nb[rankLast[dec]]++
		if rankLast[dec] == 0 {
			rankLast[dec] = none
		} else {
			rankLast[dec]--
			if nb[rankLast[dec]] != maxBits-dec {
				rankLast[dec] = none
			}
		}
	}
	for cost < 0 { // the repayment overshot
		if rankLast[1] == none {
			for nb[n] == maxBits {
				n--
			}
			nb[n+1]--
			rankLast[1] = n + 1
			cost++
			continue
		}
		nb[rankLast[1]+1]--
		rankLast[1]++
		cost++
	}
}
