package codec

import (
	"encoding/binary"
	"slices"

	"github.com/klauspost/compress/fse"
)

// planes' own writer of the 4-stream Huffman blocks huff0.Compress4X
// writes (same format: either decoder reads them). huff0 counts a block
// with one table and codes its four streams one after another; this one
// counts with four tables, builds optimal length-limited codes
// (package-merge), and codes the four streams in turns within one loop:
// four independent chains of shifts for the CPU to overlap.

// huffEnc is the scratch of one block's coding.
type huffEnc struct {
	hist    [4][256]uint32
	count   [256]uint32
	vals    [256]uint16 // each symbol's code
	lens    [256]uint8  // its length; 0: the symbol is absent
	weights [256]byte
	order   []uint64 // symbols sorted by count: count<<8 | symbol
	merged  [huffLogMax][2 * huffMaxSyms]uint64
	leaf    [huffLogMax][2 * huffMaxSyms]bool
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

// histogram counts blk into h.count with four tables in turns, which
// keeps runs of one symbol from waiting on their own stores.
func (h *huffEnc) histogram(blk []byte) {
	h.hist = [4][256]uint32{}
	i := 0
	for ; i+8 <= len(blk); i += 8 {
		v := binary.LittleEndian.Uint64(blk[i:])
		h.hist[0][byte(v)]++
		h.hist[1][byte(v>>8)]++
		h.hist[2][byte(v>>16)]++
		h.hist[3][byte(v>>24)]++
		h.hist[0][byte(v>>32)]++
		h.hist[1][byte(v>>40)]++
		h.hist[2][byte(v>>48)]++
		h.hist[3][byte(v>>56)]++
	}
	for ; i < len(blk); i++ {
		h.hist[0][blk[i]]++
	}
	for s := range h.count {
		h.count[s] = h.hist[0][s] + h.hist[1][s] + h.hist[2][s] + h.hist[3][s]
	}
}

// lengths gives the present symbols (at least two) optimal code lengths
// of at most huffLogMax bits by package-merge, and their canonical codes
// as huff0's table reader assigns them, in h.code; it returns the table
// log, the longest length.
func (h *huffEnc) lengths() uint8 {
	h.order = h.order[:0]
	for s, c := range h.count {
		if c != 0 {
			h.order = append(h.order, uint64(c)<<8|uint64(s))
		}
	}
	slices.Sort(h.order)
	n := len(h.order)
	// Level 0 is the deepest: the leaves alone. Each level above merges
	// the leaves with the pairs of the level below; the first 2n-2 items
	// of the top level pick the codes, and a symbol's length is the
	// number of levels whose chosen prefix includes its leaf.
	const levels = huffLogMax
	for i, o := range h.order {
		h.merged[0][i], h.leaf[0][i] = o>>8, true
	}
	size := n
	for l := 1; l < levels; l++ {
		below, pairs := h.merged[l-1][:size], size/2
		m, a, b := 0, 0, 0
		for a < n || b < pairs {
			if b >= pairs || (a < n && h.order[a]>>8 <= below[2*b]+below[2*b+1]) {
				h.merged[l][m], h.leaf[l][m] = h.order[a]>>8, true
				a++
			} else {
				h.merged[l][m], h.leaf[l][m] = below[2*b]+below[2*b+1], false
				b++
			}
			m++
		}
		size = m
	}
	var length [huffMaxSyms]uint8 // by rank in h.order
	take := 2*n - 2
	for l := levels - 1; l >= 0 && take > 0; l-- {
		leaves := 0
		for i := 0; i < take; i++ {
			if h.leaf[l][i] {
				leaves++
			}
		}
		for i := 0; i < leaves; i++ {
			length[i]++
		}
		take = 2 * (take - leaves)
	}
	log := length[0] // the rarest symbol's code is a longest one
	h.vals, h.lens = [256]uint16{}, [256]uint8{}
	var next [huffLogMax + 2]uint32 // each weight's first table entry, weights ascending
	for i := range n {
		next[log+1-length[i]] += 1 << (log - length[i])
	}
	for w, start := 1, uint32(0); w <= int(log); w++ {
		next[w], start = start, start+next[w]
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
		h.vals[s], h.lens[s] = uint16(next[w]>>(w-1)), l
		next[w] += 1 << (w - 1)
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
	var ends [4]int
	var st [4]huffBits
	for i := range st {
		lo, hi := min(i*seg, len(blk)), min((i+1)*seg, len(blk))
		need := (hi-lo)*huffLogMax/8 + 16
		if cap(h.stream[i]) < need {
			h.stream[i] = make([]byte, need)
		}
		st[i] = huffBits{buf: h.stream[i][:cap(h.stream[i])], lo: lo, p: hi}
		ends[i] = hi
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
// multiple of four, then rounds of four symbols apiece in turns while
// the last stream (the shortest) has some, then the rest of each alone.
func huffCode4(st *[4]huffBits, vals *[256]uint16, lens *[256]uint8, blk []byte) {
	for i := range st {
		w := &st[i]
		for (w.p-w.lo)&3 != 0 {
			w.p--
			s := blk[w.p]
			w.c |= uint64(vals[s]) << w.nb
			w.nb += uint(lens[s])
		}
		w.flush()
	}
	k := (st[3].p - st[3].lo) / 4
	huffRounds2(&st[0], &st[1], vals, lens, blk, k)
	huffRounds2(&st[2], &st[3], vals, lens, blk, k)
	for i := range st {
		w := &st[i]
		if r := (w.p - w.lo) / 4; r > 0 {
			huffEncRounds1(w, vals, lens, blk, r)
		}
	}
}

// huffRounds2Go runs k rounds of four symbols for streams a and b in
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

// round codes the four symbols before p, the last first, and flushes.
func (w *huffBits) round(vals *[256]uint16, lens *[256]uint8, blk []byte) {
	p := w.p - 4
	v := binary.LittleEndian.Uint32(blk[p:])
	c, nb := w.c, w.nb
	for sh := 24; sh >= 0; sh -= 8 {
		s := byte(v >> sh)
		c |= uint64(vals[s]) << nb
		nb += uint(lens[s])
	}
	binary.LittleEndian.PutUint64(w.buf[w.pos:], c)
	w.pos += int(nb >> 3)
	w.c = c >> (nb &^ 7)
	w.nb = nb & 7
	w.p = p
}
