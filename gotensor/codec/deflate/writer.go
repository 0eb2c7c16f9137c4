package deflate

import (
	"encoding/binary"
	"math"
	"slices"
	"sync"

	"github.com/gotensor/gotensor/gotensor/codec/internal/bitio"
	"github.com/gotensor/gotensor/gotensor/codec/internal/huffman"
	"github.com/gotensor/gotensor/gotensor/internal/pool"
)

// shuffle-deflate's writer of raw DEFLATE: dynamic Huffman blocks of
// literals only (no LZ77: byte planes of weights have no repeats worth
// finding) and stored blocks, through bitio's writer. Its
// codes are at most as long as the decoder's table index is wide
// (literals.go), so that each lookup finds at least one literal:
// only a block's end leaves the fast path. 11 bits rather than 12 cost
// ~0.1% of the ratio on real weights; a table of half the size, built in
// half the time, decodes small chunks 15-20% faster.

const (
	litCodeLimit = litTableBits // longest literal code (DEFLATE allows 15)
	clCodeLimit  = 7            // longest code-length code (DEFLATE's limit)
)

// bitWriter appends a DEFLATE bit stream (bitio's writer).
type bitWriter struct {
	bitio.Writer
	// held, where not nil, takes the stored blocks' payloads in place of
	// the stream: it then lacks them, to be copied in once, where the
	// stream is assembled (heldStream)
	held *[]heldPayload
}

// newBitWriter is a writer that appends to out (and may grow it).
func newBitWriter(out []byte) bitWriter {
	return bitWriter{Writer: bitio.Writer{Buf: out[:cap(out)], State: bitio.State{Pos: len(out)}}}
}

// heldPayload is a stored block's payload a writer left out of its bytes:
// it belongs at out[at:].
type heldPayload struct {
	at int
	p  []byte
}

// heldStream appends w's stream to dst: its bytes with the payloads it
// held put back in place.
func (w *bitWriter) heldStream(dst []byte) []byte {
	prev, out := 0, w.Bytes()
	for _, h := range *w.held {
		dst = append(dst, out[prev:h.at]...)
		dst = append(dst, h.p...)
		prev = h.at
	}
	return append(dst, out[prev:]...)
}

// stored appends p as stored blocks; final marks the last one, which
// may be empty.
func (w *bitWriter) stored(p []byte, final bool) {
	for {
		m := min(len(p), 0xFFFF)
		last := final && m == len(p)
		var hdr uint32
		if last {
			hdr = 1 // BFINAL, BTYPE 00
		}
		w.Put(hdr, 3)
		w.Align()
		w.Append(binary.LittleEndian.AppendUint32(nil, uint32(m)|uint32(^uint16(m))<<16))
		switch {
		case w.held == nil:
			w.Append(p[:m])
		case m > 0:
			*w.held = append(*w.held, heldPayload{at: w.Pos, p: p[:m]})
		}
		p = p[m:]
		if len(p) == 0 && (!final || last) {
			return
		}
	}
}

// literalBlocks appends p (not empty) as dynamic Huffman blocks of
// literals. A block grows by segments of litSegment bytes while one
// code for both costs fewer bits (order-0 entropy) than a new block,
// whose header and decoding table are worth litBlockCost bits: a chunk
// of weights spans tensors of different scales.
func (w *bitWriter) literalBlocks(p []byte, hs *huffmanScratch) {
	start := 0
	histogram(p[:min(litSegment, len(p))], &hs.freq)
	cost := entropyCost(&hs.freq, &hs.freq, false)
	for off := litSegment; off < len(p); off += litSegment {
		histogram(p[off:min(off+litSegment, len(p))], &hs.seg)
		segCost, merged := segmentCosts(&hs.freq, &hs.seg)
		if merged <= cost+segCost+litBlockCost {
			for s := range 256 {
				hs.freq[s] += hs.seg[s]
			}
			cost = merged
			continue
		}
		w.literalBlock(p[start:off], hs)
		start, hs.freq, cost = off, hs.seg, segCost
	}
	w.literalBlock(p[start:], hs)
}

const (
	litSegment   = 16 << 10
	litBlockCost = 4096
)

// literalBlocksJoint appends pa to wa and pb to wb (the same plane of
// the two halves of a chunk) as literalBlocks does, the blocks cut at
// the same offsets (a segment joins a pair of blocks as it would join
// each alone; a pair costs two headers), and each pair coded alike, for the
// counts of both, unless that costs more than jointLoss: the decoder
// then decodes the two streams with one table (deflate_literals.go).
func literalBlocksJoint(wa, wb *bitWriter, pa, pb []byte, hs *huffmanScratch) {
	seg := func(p []byte, off int) []byte { return p[min(off, len(p)):min(off+litSegment, len(p))] }
	n := max(len(pa), len(pb))
	start := 0
	histogram(seg(pa, 0), &hs.freqA)
	histogram(seg(pb, 0), &hs.freqB)
	costA, costB := entropyCost(&hs.freqA, &hs.freqA, false), entropyCost(&hs.freqB, &hs.freqB, false)
	for off := litSegment; off < n; off += litSegment {
		histogram(seg(pa, off), &hs.seg)
		histogram(seg(pb, off), &hs.segB)
		segA, mergedA := segmentCosts(&hs.freqA, &hs.seg)
		segB, mergedB := segmentCosts(&hs.freqB, &hs.segB)
		if mergedA+mergedB <= costA+costB+segA+segB+2*litBlockCost {
			for s := range 256 {
				hs.freqA[s] += hs.seg[s]
				hs.freqB[s] += hs.segB[s]
			}
			costA, costB = mergedA, mergedB
			continue
		}
		jointBlocks(wa, wb, pa[min(start, len(pa)):min(off, len(pa))], pb[min(start, len(pb)):min(off, len(pb))], costA+costB, hs)
		start, hs.freqA, hs.freqB, costA, costB = off, hs.seg, hs.segB, segA, segB
	}
	jointBlocks(wa, wb, pa[min(start, len(pa)):], pb[min(start, len(pb)):], costA+costB, hs)
}

// jointLoss is how much larger (in order-0 entropy) a pair of blocks may
// be for one code than for a code each.
const jointLoss = 1.01

// jointBlocks appends a and b (counted in hs.freqA and hs.freqB, apart
// their entropy coded apart) as a block each, coded alike where that
// costs at most jointLoss more.
func jointBlocks(wa, wb *bitWriter, a, b []byte, apart float64, hs *huffmanScratch) {
	if entropyCost(&hs.freqA, &hs.freqB, true) <= jointLoss*apart {
		for s := range 256 {
			hs.freq[s] = hs.freqA[s] + hs.freqB[s]
		}
		wa.blockHeader(hs)
		wb.dynamicHeader(hs)
		hs.codes2[0], hs.codes2[1] = hs.codes, hs.codes
		literals2(wa, wb, a, b, &hs.codes2, &hs.pack, codedBits(&hs.freqA, &hs.lens), codedBits(&hs.freqB, &hs.lens))
	} else {
		hs.freq = hs.freqA
		wa.blockHeader(hs)
		hs.codes2[0] = hs.codes
		bitsA := codedBits(&hs.freq, &hs.lens)
		hs.freq = hs.freqB
		wb.blockHeader(hs)
		hs.codes2[1] = hs.codes
		literals2(wa, wb, a, b, &hs.codes2, &hs.pack, bitsA, codedBits(&hs.freq, &hs.lens))
	}
	wa.endBlock(&hs.codes2[0])
	wb.endBlock(&hs.codes2[1])
}

// entropyCost is the order-0 entropy in bits of the bytes counted in a
// (plus those in b when both).
func entropyCost(a, b *[288]uint32, both bool) float64 {
	t := xlnx()
	var total, sum float64
	for s := range 256 {
		c := a[s]
		if both {
			c += b[s]
		}
		if c != 0 {
			total += float64(c)
			sum += cLnC(t, c)
		}
	}
	return bitsOf(total, sum)
}

// segmentCosts is entropyCost of the segment counted in seg and of it
// joined to the block counted in freq, in one pass.
func segmentCosts(freq, seg *[288]uint32) (segCost, merged float64) {
	t := xlnx()
	var total, sum, totalM, sumM float64
	for s := range 256 {
		c := seg[s]
		if c != 0 {
			total += float64(c)
			sum += cLnC(t, c)
		}
		if m := freq[s] + c; m != 0 {
			totalM += float64(m)
			sumM += cLnC(t, m)
		}
	}
	return bitsOf(total, sum), bitsOf(totalM, sumM)
}

// cLnC is c·ln(c), from the table t where it holds c.
func cLnC(t *[xlnxCounts]float64, c uint32) float64 {
	if c < xlnxCounts {
		return t[c]
	}
	f := float64(c)
	return f * math.Log(f)
}

// bitsOf is the entropy in bits of total bytes whose counts' c·ln(c) add
// up to sum.
func bitsOf(total, sum float64) float64 {
	if total == 0 {
		return 0
	}
	return (total*math.Log(total) - sum) * (1 / math.Ln2)
}

// xlnxCounts bounds the counts xlnx holds: a segment's, and most of a
// block's.
const xlnxCounts = litSegment + 1

// xlnx is c·ln(c) for the counts under xlnxCounts, the very values
// entropyCost computes for larger ones (natural logs, scaled once at the
// end: Log2 costs a Frexp more a count): a lookup where a Log takes tens
// of cycles, and the same costs, bit for bit.
var xlnx = sync.OnceValue(func() *[xlnxCounts]float64 {
	var t [xlnxCounts]float64
	for c := 1; c < xlnxCounts; c++ {
		f := float64(c)
		t[c] = f * math.Log(f)
	}
	return &t
})

// literalBlock appends p as one block coded for the counts in hs.freq.
func (w *bitWriter) literalBlock(p []byte, hs *huffmanScratch) {
	w.blockHeader(hs)
	w.literals(p, &hs.codes, &hs.pack[0], codedBits(&hs.freq, &hs.lens))
	w.endBlock(&hs.codes)
}

// blockHeader builds the code for the counts in hs.freq (and the end of
// block), in hs.lens and hs.codes, and appends the block's header.
func (w *bitWriter) blockHeader(hs *huffmanScratch) {
	hs.freq[endOfBlock] = 1
	buildLengths(hs.freq[:endOfBlock+1], hs.lens[:endOfBlock+1], litCodeLimit, &hs.tree)
	canonicalCodes(hs.lens[:endOfBlock+1], &hs.codes)
	w.dynamicHeader(hs)
}

// codedBits is the length in bits of the literals counted in freq, coded
// with the lengths lens.
func codedBits(freq *[288]uint32, lens *[288]uint8) int {
	bits := 0
	for s, f := range freq[:endOfBlock] {
		bits += int(f) * int(lens[s])
	}
	return bits
}

// endBlock appends the end-of-block code.
func (w *bitWriter) endBlock(codes *[288]uint32) {
	eob := codes[endOfBlock]
	w.Put(eob&0xFFFF, uint(eob>>16))
}

// literals appends the codes of p (bits in all), a round of five per
// 64-bit store (deflate_pack2.go); t is scratch.
func (w *bitWriter) literals(p []byte, codes *[288]uint32, t *packTable, bits int) {
	t.set(codes)
	buf, st := w.packStart(bits)
	w.packFinish(codes, t, p, buf, st)
}

// packStart makes room for bits more bits and hands the packing loop the
// stream's buffer, its bit buffer emptied to under 8 bits.
func (w *bitWriter) packStart(bits int) ([]byte, packState) {
	w.Grow(bits/8 + 16)
	w.Flush()
	return w.Buf, packState{State: w.State}
}

// packFinish packs the rest of p, from st on (t is codes' packing table),
// and takes the stream back.
func (w *bitWriter) packFinish(codes *[288]uint32, t *packTable, p, buf []byte, st packState) {
	packFast(t, p, buf, &st)
	w.State = st.State
	for i := st.i; i < len(p); i++ {
		c := codes[p[i]]
		w.Put(c&0xFFFF, uint(c>>16))
	}
}

var huffmanPool = pool.New(func() *huffmanScratch { return new(huffmanScratch) })

// packState is the bit buffer and positions the packing loop works on
// (its assembly twin reads the fields at these offsets).
type packState struct {
	bitio.State     // fewer than 8 bits held between rounds
	i           int // next byte of p
}

// huffmanScratch is the writer's per-chunk state.
type huffmanScratch struct {
	freq [288]uint32
	seg  [288]uint32 // a segment's counts
	// literalBlocksJoint's: the counts of the two halves' blocks, and
	// of the second half's segment
	freqA, freqB, segB [288]uint32
	other              []byte        // the second stream of a two-stream chunk, while the first is written
	otherHeld          []heldPayload // its stored blocks' payloads
	lens               [288]uint8
	codes              [288]uint32    // bit-reversed code | length<<16
	codes2             [2][288]uint32 // the two streams' codes, for literals2
	pack               packCodes      // the packing loops' tables
	tree               huffmanTree
	cl                 [19]uint32 // code-length code: frequencies, then codes
	clLen              [19]uint8
	rle                [288 + 32]uint16 // code-length symbols | extra bits<<8
}

// dynamicHeader writes the header of a final-less dynamic block whose
// literal/length code has the lengths hs.lens[:257] and whose distance
// code is one unused code of length 1 (as zlib and Go write for blocks
// without matches).
func (w *bitWriter) dynamicHeader(hs *huffmanScratch) {
	var all [258]uint8
	copy(all[:], hs.lens[:endOfBlock+1])
	all[endOfBlock+1] = 1 // the distance code
	rle := hs.rle[:0]
	hs.cl = [19]uint32{}
	for i := 0; i < len(all); {
		v := all[i]
		run := 1
		for i+run < len(all) && all[i+run] == v {
			run++
		}
		i += run
		if v == 0 {
			for run >= 11 {
				r := min(run, 138)
				rle = append(rle, 18|uint16(r-11)<<8)
				run -= r
			}
			if run >= 3 {
				rle = append(rle, 17|uint16(run-3)<<8)
				run = 0
			}
		} else {
			rle = append(rle, uint16(v))
			run--
			for run >= 3 {
				r := min(run, 6)
				rle = append(rle, 16|uint16(r-3)<<8)
				run -= r
			}
		}
		for ; run > 0; run-- {
			rle = append(rle, uint16(v))
		}
	}
	for _, s := range rle {
		hs.cl[s&0xFF]++
	}
	buildLengths(hs.cl[:], hs.clLen[:], clCodeLimit, &hs.tree)
	var clCodes [288]uint32
	codes := canonicalCodes(hs.clLen[:], &clCodes)
	ncl := 19
	for ncl > 4 && hs.clLen[clOrder[ncl-1]] == 0 {
		ncl--
	}
	w.Put(2<<1, 3) // BFINAL 0, BTYPE 10
	w.Put(0, 5)    // HLIT: 257 literal/length codes
	w.Put(0, 5)    // HDIST: 1 distance code
	w.Put(uint32(ncl-4), 4)
	for i := 0; i < ncl; i++ {
		w.Put(uint32(hs.clLen[clOrder[i]]), 3)
	}
	for _, s := range rle {
		c := codes[s&0xFF]
		w.Put(c&0xFFFF, uint(c>>16))
		switch s & 0xFF {
		case 16:
			w.Put(uint32(s>>8), 2)
		case 17:
			w.Put(uint32(s>>8), 3)
		case 18:
			w.Put(uint32(s>>8), 7)
		}
	}
}

// histogram counts the bytes of p into freq[:256], four counters per
// byte value to keep repeated values from stalling on one counter.
func histogram(p []byte, freq *[288]uint32) {
	var h [4][256]uint32
	i := 0
	for ; i+4 <= len(p); i += 4 {
		h[0][p[i]]++
		h[1][p[i+1]]++
		h[2][p[i+2]]++
		h[3][p[i+3]]++
	}
	for ; i < len(p); i++ {
		h[0][p[i]]++
	}
	*freq = [288]uint32{}
	for s := range 256 {
		freq[s] = h[0][s] + h[1][s] + h[2][s] + h[3][s]
	}
}

// huffmanTree is scratch for buildLengths.
type huffmanTree struct {
	order [huffman.MaxSyms]uint64 // the used symbols: count<<16 | symbol
	depth [huffman.MaxSyms]uint32
	nb    [huffman.MaxSyms]uint8 // lengths by rank
	cnt   [huffman.MaxSyms]uint32
}

// buildLengths sets lens to the lengths of a Huffman code for freq (a
// total under 2^32), at most limit bits, zero for unused symbols:
// huffman.Ranks' lengths, as planes' writer's. A lone used symbol gets
// a partner so that every code written is complete.
func buildLengths(freq []uint32, lens []uint8, limit int, t *huffmanTree) {
	clear(lens)
	order := t.order[:0]
	for s, f := range freq {
		if f > 0 {
			order = append(order, uint64(f)<<16|uint64(s))
		}
	}
	switch len(order) {
	case 0:
		return
	case 1:
		s := int(uint16(order[0]))
		lens[s] = 1
		lens[(s+1)%len(freq)] = 1
		return
	}
	slices.Sort(order)
	n := len(order)
	huffman.Ranks(order, t.depth[:n], t.nb[:n], t.cnt[:n], uint8(limit))
	for r, l := range t.nb[:n] { // the most frequent first
		lens[uint16(order[n-1-r])] = l
	}
}

// canonicalCodes gives DEFLATE's canonical codes for lens, bit-reversed
// (DEFLATE sends Huffman codes most significant bit first) | length<<16.
func canonicalCodes(lens []uint8, codes *[288]uint32) *[288]uint32 {
	var count, next [litMaxBits + 2]uint32
	for _, l := range lens {
		count[l]++
	}
	count[0] = 0
	code := uint32(0)
	for l := 1; l <= litMaxBits; l++ {
		code = (code + count[l-1]) << 1
		next[l] = code
	}
	for s, l := range lens {
		if l == 0 {
			codes[s] = 0
			continue
		}
		c := next[l]
		next[l]++
		codes[s] = reverseBits(c, uint(l)) | uint32(l)<<16
	}
	return codes
}

func reverseBits(c uint32, l uint) uint32 {
	var r uint32
	for range l {
		r = r<<1 | c&1
		c >>= 1
	}
	return r
}
