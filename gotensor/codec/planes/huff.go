package planes

import (
	"encoding/binary"
	"math/bits"

	"github.com/klauspost/compress/fse"
)

// A double-symbol decoder for the 4-stream Huffman blocks huff0.Compress4X
// writes (zstd's HUF_decompress4X2): one lookup of tableLog bits yields
// one or two symbols, where huff0's decoder yields one. Planes' top plane
// (exponent and mantissa bits, table log 11) has short codes enough that
// most lookups give two; an exponent plane's, enough that most give three,
// and its table (triple) holds three. Same stream format, read by either
// decoder.

const (
	huffLogMax  = 11 // huff0's (and zstd's) largest table log
	huffMaxSyms = 256
)

// huffX2 is one block's table, indexed by the next 11 bits of a stream
// whatever the block's table log (shorter tables repeat each entry), so
// that the second of two symbols may use the bits a short table log
// leaves: single[i] is the first symbol's bits | the symbol<<8 (huff0's
// layout, for the single-symbol decoders); double[i] is the
// bits used | the symbols<<8 (the first in bits 8-15) | their count (1
// or 2)<<24.
type huffX2 struct {
	log     uint8
	weights [huffMaxSyms + 1]byte
	single  [1 << huffLogMax]uint16
	double  [1 << huffLogMax]uint32
	second  [1 << huffLogMax]uint32 // readTable's second symbols by first length
	fse     fse.Scratch

	// triple is the table where lookups give three symbols often enough
	// (huffMinTriples): triple[i] is the bits used | their count<<8 | the
	// symbols<<16 (the first in bits 16-23); three says it is the one
	// built, in place of double.
	triple [1 << huffLogMax]uint64
	three  bool
	tails  [1 << huffLogMax]uint64 // readTable's second and third symbols by first length

	// the header the tables were last built from, and what readTable
	// returned for it: a block with the same header (planes' writer
	// reuses a table where it costs next to nothing) skips the build
	built      [1 + 128]byte
	builtLen   int
	builtPairs int  // the minPairs it was built for
	builtOK    bool // its pairs result
}

// headerLen is the length of the huff0 table header at the start of in,
// or 0 where in is too short to say.
func headerLen(in []byte) int {
	if len(in) == 0 {
		return 0
	}
	n := 1 + int(in[0])
	if in[0] >= 128 {
		n = 1 + (int(in[0])-127+1)/2
	}
	if n > len(in) {
		return 0
	}
	return n
}

// huffMinTriples is the share of a table's entries (of 2048) that must
// give three symbols for the block to be decoded with triple rather than
// double: a lookup costs the same in either (one more load, no more
// instructions), so any sizeable share pays; bfloat16's and float32's top
// planes (exponents, under 3 bits a code) give three in most entries,
// float16's (exponent and mantissa bits, about 6) in few.
const huffMinTriples = 2048 / 4

// huffMinPairs is the share of a table's entries (of 2048) that must give
// two symbols for planes to decode a block with huffX2 rather than huff0:
// with its four streams' lookups interleaved in registers huffX2 decodes
// the top plane of float16 weights (58-99% pairs on the three weight
// sets of bench-codecs) at 1.5x the speed of the eight-stream
// single-symbol loop planes had for it (BenchmarkTopPlaneDecode), and
// bfloat16's and float32's (98-100%) at 1.2x huff0's decoder.
const huffMinPairs = 2048 * 5 / 10

// huffMinX2Block is the least block the double- and triple-symbol
// decoders take: building their 2048-entry tables costs about as much as
// decoding 12 KiB with huff0's table, which is sized to the block's table
// log (BenchmarkSmallChunkDecode: a 12 KiB float32 chunk, planes of 3 KiB,
// decodes in 5.0 us through huff0 against 7.2 us through the triple
// table; at 12 KiB planes float32's triple table is 1.2x huff0, float16's
// double table 0.92x; at 16 KiB and beyond they win). Small blocks are
// small chunks: a KV cache's rows, one per chunk.
var huffMinX2Block = 12 << 10

// readTable reads a huff0 table header (as huff0.ReadTable does, with its
// checks) into t.single and, where its codes are short enough that at
// least minPairs of the 2048 entries give two symbols, t.double too
// (built). It returns what follows the header.
func (t *huffX2) readTable(in []byte, minPairs int) ([]byte, bool, error) {
	hl := headerLen(in)
	if hl > 0 && hl == t.builtLen && minPairs == t.builtPairs && string(in[:hl]) == string(t.built[:hl]) {
		return in[hl:], t.builtOK, nil
	}
	t.builtLen = 0
	rest, ok, err := t.build(in, minPairs)
	if err == nil && hl > 0 && hl <= len(t.built) {
		t.builtLen, t.builtPairs, t.builtOK = copy(t.built[:], in[:hl]), minPairs, ok
	}
	return rest, ok, err
}

// build is readTable without the cache.
func (t *huffX2) build(in []byte, minPairs int) ([]byte, bool, error) {
	if len(in) <= 1 {
		return nil, false, corrupt("planes: huffman table truncated")
	}
	size := int(in[0])
	in = in[1:]
	var n int
	if size >= 128 { // weights stored as nibbles
		n = size - 127
		nb := (n + 1) / 2
		if nb > len(in) {
			return nil, false, corrupt("planes: huffman table truncated")
		}
		for i := 0; i < n; i += 2 {
			t.weights[i], t.weights[i+1] = in[i/2]>>4, in[i/2]&15
		}
		in = in[nb:]
	} else { // FSE-coded weights
		if len(in) < size {
			return nil, false, corrupt("planes: huffman table truncated")
		}
		if in[0]&15+5 > 6 {
			return nil, false, corrupt("planes: huffman weights' table log too big")
		}
		t.fse.DecompressLimit = huffMaxSyms - 1
		t.fse.Out = t.weights[:0]
		w, err := fse.Decompress(in[:size], &t.fse)
		t.fse.Out = nil
		if err != nil {
			return nil, false, corrupt("planes: huffman weights: %v", err)
		}
		if len(w) > huffMaxSyms-1 {
			return nil, false, corrupt("planes: huffman table too large")
		}
		n = copy(t.weights[:], w)
		in = in[size:]
	}
	var rank [16]uint32
	total := uint32(0)
	for _, w := range t.weights[:n] {
		if w > huffLogMax {
			return nil, false, corrupt("planes: huffman weight %d too large", w)
		}
		rank[w]++
		if w > 0 {
			total += 1 << (w - 1)
		}
	}
	if total == 0 {
		return nil, false, corrupt("planes: huffman weights all zero")
	}
	log := uint8(bits.Len32(total)) // highBit(total)+1
	if log > huffLogMax {
		return nil, false, corrupt("planes: huffman table log too big")
	}
	rest := 1<<log - total // the implied last weight: a power of two
	if rest&(rest-1) != 0 {
		return nil, false, corrupt("planes: huffman last weight not a power of two")
	}
	last := uint8(bits.Len32(rest))
	t.weights[n] = last
	n++
	rank[last]++
	if rank[1] < 2 || rank[1]&1 != 0 {
		return nil, false, corrupt("planes: huffman weights: odd count of the longest codes")
	}
	t.log = log
	pairs := huffPairSlots(&rank, log) >= minPairs
	t.three = pairs && huffTripleSlots(&rank, log) >= huffMinTriples
	var next uint32 // each weight's first entry, weights ascending (huff0's canonical order)
	for w := 1; w <= int(log); w++ {
		next, rank[w] = next+rank[w]<<(w-1), next
	}
	up := huffLogMax - log // index bits past the table log
	var lens uint32        // the code lengths present, a bit each
	for s, w := range t.weights[:n] {
		if w == 0 {
			continue
		}
		e := uint16(log+1-w) | uint16(s)<<8
		lens |= 1 << (log + 1 - w)
		start := rank[w]
		rank[w] += 1 << (w - 1)
		for i := start << up; i < rank[w]<<up; i++ {
			t.single[i] = e
		}
	}
	if !pairs {
		return in, false, nil
	}
	if t.three {
		if !t.buildTriple(lens) { // the weights' checks leave no code of 0 or more than 11 bits
			return nil, false, corrupt("planes: huffman table with a code out of range")
		}
		return in, true, nil
	}
	// A code of l bits spans 2^(11-l) entries, whose other bits start the
	// next code: the same second symbols after every first one of that
	// length. second holds them for each length present (at offset
	// 2048-2^(12-l)): the bits and symbol of a code that fits, else 0.
	for l := uint32(1); l <= huffLogMax; l++ {
		if lens&(1<<l) == 0 {
			continue
		}
		sec := t.second[1<<huffLogMax-1<<(huffLogMax+1-l):][:1<<(huffLogMax-l)]
		for j := range sec {
			s2 := t.single[j<<l]
			l2 := uint32(s2 & 0xff)
			fits := uint32(int32(l+l2-huffLogMax-1) >> 31) // all ones where it fits
			sec[j] = fits & (l2 | uint32(s2>>8)<<16 | 1<<24)
		}
	}
	for i := 0; i < len(t.double); {
		s1 := t.single[i]
		l := uint32(s1 & 0xff)
		if l == 0 || l > huffLogMax { // the weights' checks leave no such entry
			return nil, false, corrupt("planes: huffman table with a code of %d bits", l)
		}
		base := l | uint32(s1>>8)<<8 | 1<<24
		sec := t.second[1<<huffLogMax-1<<(huffLogMax+1-l):][:1<<(huffLogMax-l)]
		for j, d := range sec {
			t.double[i+j] = base + d
		}
		i += len(sec)
	}
	return in, true, nil
}

// huffPairSlots is how many of the 2048 entries give two symbols, from
// the count of codes of each weight (count[w], codes of log+1-w bits): a
// first code of l bits spans 2^(11-l) entries, of which a second code of
// m <= 11-l bits takes 2^(11-l-m).
func huffPairSlots(count *[16]uint32, log uint8) int {
	var n [huffLogMax + 1]int // codes by length
	for w := 1; w <= int(log); w++ {
		n[int(log)+1-w] = int(count[w])
	}
	slots := 0
	for l := 1; l <= huffLogMax; l++ {
		for m := 1; l+m <= huffLogMax; m++ {
			slots += n[l] * n[m] << (huffLogMax - l - m)
		}
	}
	return slots
}

// huffTripleSlots is how many of the 2048 entries give three symbols, from
// the count of codes of each weight as for huffPairSlots: a first code of
// l bits and a second of m span 2^(11-l-m) entries, of which the codes of
// o <= 11-l-m bits take fits[11-l-m].
func huffTripleSlots(count *[16]uint32, log uint8) int {
	var n [huffLogMax + 1]int // codes by length
	for w := 1; w <= int(log); w++ {
		n[int(log)+1-w] = int(count[w])
	}
	var fits [huffLogMax + 1]int // fits[k]: entries of a k-bit window whose first code fits in it
	for k := 1; k <= huffLogMax; k++ {
		for o := 1; o <= k; o++ {
			fits[k] += n[o] << (k - o)
		}
	}
	slots := 0
	for l := 1; l <= huffLogMax; l++ {
		for m := 1; l+m < huffLogMax; m++ {
			slots += n[l] * n[m] * fits[huffLogMax-l-m]
		}
	}
	return slots
}

// buildTriple fills triple from single, for a table whose code lengths
// present are the bits of lens: as double is built, the entries of a
// first code of l bits share their tails (the second and third symbols
// the other 11-l bits hold), worked out once per length present.
func (t *huffX2) buildTriple(lens uint32) bool {
	for l := uint32(1); l <= huffLogMax; l++ {
		if lens&(1<<l) == 0 {
			continue
		}
		w := huffLogMax - l // the bits after the first code
		tail := t.tails[1<<huffLogMax-1<<(w+1):][:1<<w]
		for j := range tail {
			s2 := t.single[j<<l]
			l2 := uint32(s2 & 0xff)
			if l2 > w {
				tail[j] = 0
				continue
			}
			e := uint64(l2) | 1<<8 | uint64(s2>>8)<<24
			if rest := w - l2; rest > 0 {
				s3 := t.single[(j<<(l+l2))&(1<<huffLogMax-1)]
				if l3 := uint32(s3 & 0xff); l3 <= rest {
					e += uint64(l3) | 1<<8 | uint64(s3>>8)<<32
				}
			}
			tail[j] = e
		}
	}
	for i := 0; i < len(t.triple); {
		s1 := t.single[i]
		l := uint32(s1 & 0xff)
		if l == 0 || l > huffLogMax {
			return false
		}
		base := uint64(l) | 1<<8 | uint64(s1>>8)<<16
		tail := t.tails[1<<huffLogMax-1<<(huffLogMax+1-l):][:1<<(huffLogMax-l)]
		for j, e := range tail {
			t.triple[i+j] = base + e
		}
		i += len(tail)
	}
	return true
}

// huffStream is one stream's backward bit reader: the 8 bytes ending at
// off, read from the top, used bits of them consumed. Bytes below the
// stream's first byte lo may be read, but a stream must end exactly at
// lo's lowest bit: it has (hi-lo)*8 bits.
type huffStream struct {
	c           uint64
	used        uint
	off, lo, hi int
	op, end     int
}

// load is the 8 bytes ending at off, zeros standing in below src[0].
func load(src []byte, off int) uint64 {
	if off >= 8 {
		return binary.LittleEndian.Uint64(src[off-8 : off])
	}
	var b [8]byte
	copy(b[8-off:], src[:off])
	return binary.LittleEndian.Uint64(b[:])
}

// over is how many bits the reader has consumed past the stream's end (<= 0
// while within it).
func (s *huffStream) over() int { return (s.hi-s.off)*8 + int(s.used) - (s.hi-s.lo)*8 }

// reload moves the window down by the whole bytes consumed.
func (s *huffStream) reload(src []byte) {
	nb := min(int(s.used>>3), s.off) // short of used>>3 only for a stream already overread
	s.off -= nb
	s.used -= uint(8 * nb)
	s.c = load(src, s.off)
}

// decode4X fills dst from the 4-stream block src with table t. Corrupt
// input is a CorruptData error; nothing is written outside dst.
func (t *huffX2) decode4X(dst, src []byte) error {
	if len(src) < 6+4 {
		return corrupt("planes: huffman block of %d bytes", len(src))
	}
	var st [4]huffStream
	every := (len(dst) + 3) / 4
	lo := 6
	for i := range st {
		hi := len(src)
		if i < 3 {
			hi = lo + int(binary.LittleEndian.Uint16(src[2*i:]))
			if hi >= len(src) {
				return corrupt("planes: huffman stream %d overruns the block", i)
			}
		}
		if hi <= lo || src[hi-1] == 0 {
			return corrupt("planes: huffman stream %d has no end mark", i)
		}
		st[i] = huffStream{c: load(src, hi), used: 9 - uint(bits.Len8(src[hi-1])), off: hi, lo: lo, hi: hi,
			op: min(i*every, len(dst)), end: min((i+1)*every, len(dst))}
		lo = hi
	}
	t.fast4(dst, src, &st)
	for i := range st {
		s := &st[i]
		t.fast1(dst, src, s)
		for s.op < s.end {
			s.reload(src)
			idx := (s.c << s.used) >> (64 - huffLogMax)
			if t.three && s.end-s.op >= 4 {
				e := t.triple[idx&(1<<huffLogMax-1)]
				binary.LittleEndian.PutUint32(dst[s.op:], uint32(e>>16))
				s.op += int(e >> 8 & 0xff)
				s.used += uint(e & 0xff)
			} else if !t.three && s.end-s.op >= 2 {
				e := t.double[idx&(1<<huffLogMax-1)]
				binary.LittleEndian.PutUint16(dst[s.op:], uint16(e>>8))
				s.op += int(e >> 24)
				s.used += uint(e & 0xff)
			} else {
				e := t.single[idx&(1<<huffLogMax-1)]
				dst[s.op] = byte(e >> 8)
				s.op++
				s.used += uint(e & 0xff)
			}
			if s.over() > 0 {
				return corrupt("planes: huffman stream %d overread", i)
			}
		}
		if s.over() != 0 {
			return corrupt("planes: huffman stream %d: %d bits left", i, -s.over())
		}
	}
	return nil
}

// huffHot is one stream's state in fast4: the window shifted past the
// bits used, the bits used of the 8 bytes ending at off, the output offset.
// A round sets the window's lowest bit, a bit no round reaches (at most 62
// are used, and a lookup looks 11 bits ahead from at most the 51st): its
// trailing zeros are then the bits used.
type huffHot struct {
	v       uint64
	used    uint
	off, op int
}

// fast4 decodes the four streams while each has room for 10 more bytes
// and 8 whole bytes of window. A round, per stream: a reload, then 5
// lookups of at most 11 bits (62 bits with the 7 left from the reload),
// each writing 2 bytes and keeping 1 or 2. The streams take turns within a
// round: four independent chains of lookups for the CPU to overlap.
func (t *huffX2) fast4(dst, src []byte, st *[4]huffStream) {
	var hot [4]huffHot
	for i := range hot {
		hot[i] = huffHot{used: st[i].used, off: st[i].off, op: st[i].op}
	}
	room := t.roundRoom()
	for {
		k := 1 << 30
		for i := range hot {
			k = min(k, (st[i].end-hot[i].op)/room, huffRounds(hot[i].off, hot[i].used))
		}
		if k <= 0 {
			break
		}
		if t.three {
			huffRounds4X3(&hot, &t.triple, src, dst, k)
		} else {
			huffRounds4(&hot, &t.double, src, dst, k)
		}
	}
	for i := range hot {
		st[i].used, st[i].off, st[i].op = hot[i].used, hot[i].off, hot[i].op
	}
}

// fast1 goes on with one stream as fast4 does while it has room and
// window: the streams fast4 left behind when the first ran short.
func (t *huffX2) fast1(dst, src []byte, s *huffStream) {
	h := huffHot{used: s.used, off: s.off, op: s.op}
	room := t.roundRoom()
	for {
		k := min((s.end-h.op)/room, huffRounds(h.off, h.used))
		if k <= 0 {
			break
		}
		if t.three {
			huffRounds1X3(&h, &t.triple, src, dst, k)
		} else {
			huffRounds1(&h, &t.double, src, dst, k)
		}
	}
	s.used, s.off, s.op = h.used, h.off, h.op
}

// huffRounds1Go is huffRounds4Go for one stream.
func huffRounds1Go(h *huffHot, tb *[1 << huffLogMax]uint32, src, dst []byte, k int) {
	for ; k > 0; k-- {
		h.round(tb, src, dst)
	}
}

// round refills h's bits from src and decodes five lookups into dst.
func (h *huffHot) round(tb *[1 << huffLogMax]uint32, src, dst []byte) {
	h.off -= int(h.used >> 3)
	h.used &= 7
	h.v = (binary.LittleEndian.Uint64(src[h.off-8:]) | 1) << h.used
	for range 5 {
		e := tb[h.v>>(64-huffLogMax)]
		binary.LittleEndian.PutUint16(dst[h.op:], uint16(e>>8))
		h.op += int(e >> 24)
		h.v <<= e & 63
	}
	h.used = uint(bits.TrailingZeros64(h.v))
}

// roundRoom is the output a round may write: 5 lookups' symbols, and the
// bytes past them the last lookup's store covers (double stores 2 bytes,
// triple 4).
func (t *huffX2) roundRoom() int {
	if t.three {
		return 16
	}
	return 10
}

// round3 is round with the triple table.
func (h *huffHot) round3(tb *[1 << huffLogMax]uint64, src, dst []byte) {
	h.off -= int(h.used >> 3)
	h.used &= 7
	h.v = (binary.LittleEndian.Uint64(src[h.off-8:]) | 1) << h.used
	for range 5 {
		e := tb[h.v>>(64-huffLogMax)]
		binary.LittleEndian.PutUint32(dst[h.op:], uint32(e>>16))
		h.op += int(e >> 8 & 0xff)
		h.v <<= e & 63
	}
	h.used = uint(bits.TrailingZeros64(h.v))
}

// huffRounds4X3Go is huffRounds4Go with the triple table.
func huffRounds4X3Go(hot *[4]huffHot, tb *[1 << huffLogMax]uint64, src, dst []byte, k int) {
	for ; k > 0; k-- {
		for i := range hot {
			hot[i].round3(tb, src, dst)
		}
	}
}

// huffRounds1X3Go is huffRounds1Go with the triple table.
func huffRounds1X3Go(h *huffHot, tb *[1 << huffLogMax]uint64, src, dst []byte, k int) {
	for ; k > 0; k-- {
		h.round3(tb, src, dst)
	}
}

// huffRounds4Go runs k of fast4's rounds: the Go twin of the amd64
// assembly, which must match it.
func huffRounds4Go(hot *[4]huffHot, tb *[1 << huffLogMax]uint32, src, dst []byte, k int) {
	for ; k > 0; k-- {
		for i := range hot {
			hot[i].round(tb, src, dst)
		}
	}
}

// huffRounds is how many of fast4's rounds a stream's window allows: the
// first needs 8 bytes below off once used is dropped, each later one at
// most 7 more.
func huffRounds(off int, used uint) int {
	if r := off - int(used>>3) - 8; r >= 0 {
		return r/7 + 1
	}
	return 0
}
