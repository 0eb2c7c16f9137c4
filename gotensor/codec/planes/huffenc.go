package planes

import (
	"encoding/binary"
	"slices"

	"github.com/klauspost/compress/fse"

	"github.com/gotensor/gotensor/gotensor/codec/internal/bitio"
	"github.com/gotensor/gotensor/gotensor/codec/internal/huffman"
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

	// the last table written in this chunk, which the next block reuses
	// where its own would save under reuseSlack of its bits: the decoder
	// then finds the same table bytes and skips building its table
	// (huffX2.readTable)
	prevTable []byte
	prevVals  [256]uint16
	prevLens  [256]uint8
}

// reuseSlack is the most, as a share of a block's coded bits, that coding
// it with the previous block's table may cost over its own: building a
// decoding table (2048 entries) costs about a tenth of decoding a 64 KiB
// block, and adjacent blocks of one plane have near-identical statistics.
const reuseSlack = 0.002

// huffEncode4X appends blk (at least 256 bytes, at most 64 KiB) coded as
// a huff0 4X block with its table; more says blocks of the same chunk
// follow (which may reuse its table). ok is false where the block should
// be stored otherwise: one symbol only (rle), or no gain.
func (h *huffEnc) huffEncode4X(out, blk []byte, more bool) (_ []byte, ok, rle bool) {
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
	size := 0 // the data's bits, known before coding: give up early
	for s, c := range h.count {
		size += int(c) * int(h.lens[s])
	}
	start := len(out)
	if prev, ok := h.reusable(size); ok {
		h.vals, h.lens, size = h.prevVals, h.prevLens, prev
		out = append(out, h.prevTable...)
	} else {
		if out, ok = h.appendTable(out, log); !ok {
			h.prevTable = h.prevTable[:0]
			return out[:start], false, false
		}
		h.prevTable = h.prevTable[:0]
		if more {
			h.prevTable = append(h.prevTable, out[start:]...)
			h.prevVals, h.prevLens = h.vals, h.lens
		}
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

// reusable reports whether the previous table codes every symbol of the
// block counted in h.count in at most reuseSlack more bits than its own
// (size bits), and its size in bits with it.
func (h *huffEnc) reusable(size int) (int, bool) {
	if len(h.prevTable) == 0 {
		return 0, false
	}
	prev := 0
	for s, c := range h.count {
		if c != 0 {
			if h.prevLens[s] == 0 {
				return 0, false
			}
			prev += int(c) * int(h.prevLens[s])
		}
	}
	return prev, float64(prev) <= float64(size)*(1+reuseSlack)
}

// histogram counts blk into h.count (huffman.Counts: four tables).
func (h *huffEnc) histogram(blk []byte) {
	var c huffman.Counts
	c.Add(blk)
	c.Sum(&h.count)
}

// lengths gives the present symbols (at least two) Huffman code lengths
// limited to huffLogMax bits (huffman.Ranks), and their canonical codes as
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
	huffman.Ranks(h.order, h.depth[:n], nb, h.cnt[:n], huffLogMax)
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
		st[i] = huffBits{Writer: bitio.Writer{Buf: h.stream[i][:cap(h.stream[i])]}, lo: lo, p: hi}
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

// huffBits is one stream's writer: it codes blk[lo:p] backwards (the
// reader reads a stream from its end), p moving down. The assembly reads
// and writes the writer's state and p (at these offsets).
type huffBits struct {
	bitio.Writer
	p, lo int
}

// close adds the end mark and returns the stream's bytes.
func (w *huffBits) close() []byte {
	w.Bits(1, 1)
	w.Align()
	return w.Bytes()
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
			w.Bits(uint64(vals[s]), uint(lens[s]))
		}
		w.Flush()
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
	st := w.State
	for i := 4; i >= 0; i-- {
		s := blk[p+i]
		st.Acc |= uint64(vals[s]) << st.N
		st.N += uint64(lens[s])
	}
	st.Store(w.Buf)
	w.State = st
	w.p = p
}
