package codec

import (
	"encoding/binary"
	"math/bits"
	"slices"

	"github.com/klauspost/compress/fse"
)

// planes' own writer of the 4-stream Huffman blocks huff0.Compress4X
// writes (same format: huff0's decoder and planes' read them). huff0
// codes a block's four streams one after another; this one codes two
// at a time in turns (assembly: independent chains of shifts for the CPU
// to overlap), with code lengths limited as huff0 limits them, at the
// same sizes on real weights.

// huffEnc is the scratch of one block's coding.
type huffEnc struct {
	count   [256]uint32
	vals    [256]uint16 // each symbol's code
	lens    [256]uint8  // its length; 0: the symbol is absent
	weights [256]byte
	order   []uint64 // symbols sorted by count: count<<8 | symbol
	depth   [huffMaxSyms]uint32
	nb      [huffMaxSyms]uint8  // code lengths by rank, the most frequent first
	cnt     [huffMaxSyms]uint32 // their counts
	stream  [4][]byte
	fse     fse.Scratch
}

// huffEncode4X appends blk (at least 256 bytes, at most 64 KiB) coded as
// a huff0 4X block with its table. ok is false where the block should be
// stored otherwise: one symbol only (rle), or no gain.
func (h *huffEnc) huffEncode4X(out, blk []byte) (_ []byte, ok, rle bool) {
	h.histogram(blk)
	syms := 0
	for _, c := range h.count {
		if c != 0 {
			syms++
		}
	}
	if syms == 1 {
		return out, false, true
	}
	log := h.lengths()
	start := len(out)
	out, ok = h.appendTable(out, log)
	if !ok {
		return out[:start], false, false
	}
	size := 0 // the data's bits, known before coding: give up early
	for s, c := range h.count {
		size += int(c) * int(h.lens[s])
	}
	if len(out)-start+6+size/8+4 >= len(blk) {
		return out[:start], false, false
	}
	out = h.appendStreams(out, blk)
	if len(out)-start >= len(blk) {
		return out[:start], false, false
	}
	return out, true, false
}

// histogram counts blk into h.count.
func (h *huffEnc) histogram(blk []byte) {
	h.count = [256]uint32{}
	for _, v := range blk {
		h.count[v]++
	}
}

// lengths gives the present symbols (at least two) Huffman code lengths
// limited to huffLogMax bits (huffmanRanks), and their canonical codes as
// huff0's table reader assigns them, in h.vals and h.lens; it returns the
// table log, the longest length.
func (h *huffEnc) lengths() uint8 {
	h.order = h.order[:0]
	for s, c := range h.count {
		if c != 0 {
			h.order = append(h.order, uint64(c)<<16|uint64(s))
		}
	}
	slices.Sort(h.order)
	n := len(h.order)
	nb := h.nb[:n]
	huffmanRanks(h.order, h.depth[:n], nb, h.cnt[:n], huffLogMax)
	var length [huffMaxSyms]uint8 // by rank in h.order: the rarest longest
	var count [huffMaxSyms]int
	for r, l := range nb {
		length[n-1-r] = l
		count[l]++
	}
	log := length[0]
	h.vals, h.lens = [256]uint16{}, [256]uint8{}
	var starts [huffLogMax + 2]uint32 // each weight's first table entry, weights ascending
	for l := 1; l <= int(log); l++ {
		starts[int(log)+1-l] = uint32(count[l]) << (int(log) - l)
	}
	for w, start := 1, uint32(0); w <= int(log); w++ {
		starts[w], start = start, start+starts[w]
	}
	var bySym [256]uint8
	for i, o := range h.order {
		bySym[byte(o)] = length[i]
	}
	h.weights = [256]byte{}
	for s, l := range bySym { // symbols ascending within each weight
		if l == 0 {
			continue
		}
		w := log + 1 - l
		h.weights[s] = w
		h.vals[s], h.lens[s] = uint16(starts[w]>>(w-1)), l
		starts[w] += 1 << (w - 1)
	}
	return log
}

// appendTable appends the table header as huff0 writes it: the weights
// of all symbols but the last present one, FSE-coded where that is
// shorter, else as nibbles (at most 128 of them).
func (h *huffEnc) appendTable(out []byte, log uint8) ([]byte, bool) {
	last := 255
	for h.count[last] == 0 {
		last--
	}
	w := h.weights[:last]
	if last >= 2 {
		h.fse.TableLog = 6
		h.fse.Out = h.fse.Out[:0]
		if b, err := fse.Compress(w, &h.fse); err == nil && len(b) < (last+1)/2 {
			out = append(out, byte(len(b)))
			return append(out, b...), true
		}
	}
	if last > 128 {
		return out, false
	}
	out = append(out, byte(127+last))
	for i := 0; i < last; i += 2 {
		lo := byte(0)
		if i+1 < last {
			lo = w[i+1]
		}
		out = append(out, w[i]<<4|lo)
	}
	return out, true
}

// appendStreams appends the jump table and the four streams of blk.
func (h *huffEnc) appendStreams(out, blk []byte) []byte {
	seg := (len(blk) + 3) / 4
	var st [4]huffBits
	for i := range st {
		lo, hi := min(i*seg, len(blk)), min((i+1)*seg, len(blk))
		need := (hi-lo)*huffLogMax/8 + 16
		if cap(h.stream[i]) < need {
			h.stream[i] = make([]byte, need)
		}
		st[i] = huffBits{buf: h.stream[i][:cap(h.stream[i])], lo: lo, p: hi}
	}
	huffCode4(&st, &h.vals, &h.lens, blk)
	jump := len(out)
	out = append(out, 0, 0, 0, 0, 0, 0)
	for i := range st {
		b := st[i].close()
		if i < 3 {
			binary.LittleEndian.PutUint16(out[jump+2*i:], uint16(len(b)))
		}
		out = append(out, b...)
	}
	return out
}

// huffBits is one stream's writer: bits go in from the bottom of c, nb
// of them, and whole bytes out at buf[pos:]. It codes blk[lo:p]
// backwards (the reader reads a stream from its end), p moving down. The
// assembly reads and writes the first four fields.
type huffBits struct {
	c   uint64
	nb  uint
	pos int
	p   int
	buf []byte
	lo  int
}

// flush writes c's whole bytes: at most 7 bits stay.
func (w *huffBits) flush() {
	binary.LittleEndian.PutUint64(w.buf[w.pos:], w.c)
	w.pos += int(w.nb >> 3)
	w.c >>= w.nb &^ 7
	w.nb &= 7
}

// close adds the end mark and returns the stream's bytes.
func (w *huffBits) close() []byte {
	w.c |= 1 << w.nb
	w.nb++
	w.flush()
	if w.nb > 0 {
		w.pos++
	}
	return w.buf[:w.pos]
}

// huffCode4 codes the four streams: first each one's symbols past a
// multiple of five, then rounds of five symbols apiece in turns while
// the last stream (the shortest) has some, then the rest of each alone.
func huffCode4(st *[4]huffBits, vals *[256]uint16, lens *[256]uint8, blk []byte) {
	for i := range st {
		w := &st[i]
		for (w.p-w.lo)%5 != 0 {
			w.p--
			s := blk[w.p]
			w.c |= uint64(vals[s]) << w.nb
			w.nb += uint(lens[s])
		}
		w.flush()
	}
	k := (st[3].p - st[3].lo) / 5
	huffRounds2(&st[0], &st[1], vals, lens, blk, k)
	huffRounds2(&st[2], &st[3], vals, lens, blk, k)
	for i := range st {
		w := &st[i]
		if r := (w.p - w.lo) / 5; r > 0 {
			huffEncRounds1(w, vals, lens, blk, r)
		}
	}
}

// huffRounds2Go runs k rounds of five symbols for streams a and b in
// turns: the Go twin of the amd64 assembly, which must match it.
func huffRounds2Go(a, b *huffBits, vals *[256]uint16, lens *[256]uint8, blk []byte, k int) {
	for ; k > 0; k-- {
		a.round(vals, lens, blk)
		b.round(vals, lens, blk)
	}
}

// huffEncRounds1 runs k rounds for one stream.
func huffEncRounds1(w *huffBits, vals *[256]uint16, lens *[256]uint8, blk []byte, k int) {
	for ; k > 0; k-- {
		w.round(vals, lens, blk)
	}
}

// round codes the five symbols before p, the last first, and flushes:
// at most 7 + 5*11 bits are held.
func (w *huffBits) round(vals *[256]uint16, lens *[256]uint8, blk []byte) {
	p := w.p - 5
	c, nb := w.c, w.nb
	for i := 4; i >= 0; i-- {
		s := blk[p+i]
		c |= uint64(vals[s]) << nb
		nb += uint(lens[s])
	}
	binary.LittleEndian.PutUint64(w.buf[w.pos:], c)
	w.pos += int(nb >> 3)
	w.c = c >> (nb &^ 7)
	w.nb = nb & 7
	w.p = p
}

// huffmanRanks gives the symbols of order (count<<16 | symbol, sorted
// ascending, at least two; a total count under 2^32) Huffman code lengths
// limited to maxBits (at most litMaxBits), by rank, the most frequent
// first: nb[r] (lengths ascending) and cnt[r] its count. The lengths are
// Moffat and Katajainen's in-place Huffman ones (depth is their scratch),
// then limited as huff0 (and zstd) limit theirs. planes' writer and
// shuffle-deflate's build their codes with it.
func huffmanRanks(order []uint64, depth []uint32, nb []uint8, cnt []uint32, maxBits uint8) {
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
	var count [maxHuffmanSyms]int // codes by length
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

// maxHuffmanSyms bounds the symbols of a code huffmanRanks builds: DEFLATE's
// literal/length alphabet.
const maxHuffmanSyms = 288

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
	var rankLast [litMaxBits + 2]int // the last (rarest) symbol of each length below maxBits, by maxBits minus it
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
