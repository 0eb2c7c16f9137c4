package deflate

import (
	"encoding/binary"
	"math/bits"

	"github.com/gotensor/gotensor/gotensor/codec/internal/bitio"
)

// inflateLiterals is the decoder of the raw DEFLATE streams gotensor's
// shuffle-deflate encoder writes (dynamic Huffman blocks of literals
// only, and stored blocks, which it copies into place): a lookup table of
// 2^11 entries decodes up to four literals at once, where a general
// inflater, libdeflate too, decodes one symbol per lookup (exponent codes
// average 2.5-3 bits). Streams it does not handle (matches, as a hardware
// encoder writes) make it return false and the caller inflates them the
// general way; so do malformed ones, leaving the general inflater to
// report them. It never reads or writes out of bounds.
func inflateLiterals(dst, src []byte, lt *literalTables) bool {
	s := literalStream{r: bitio.Reader{Src: src}, lt: lt, dst: dst}
	return s.run()
}

// literalStream is one stream's decoding state between runs of the fast
// path: its bit reader, its tables, and where it writes. dst[:o] is
// written; the stream ends where dst and src end.
type literalStream struct {
	r       bitio.Reader
	lt      *literalTables
	dst     []byte
	o       int
	inBlock bool // within a Huffman block, its tables built
	final   bool // the block read last is the final one
	done    bool // the final block has ended
	// peer is the stream decoded alongside (nil: none); the two take
	// their tables from slots
	peer  *literalStream
	slots *literalSlots
	lens  [288 + 32]uint8 // a dynamic header's code lengths
	// pieces, where set, notes the stored blocks, left in src, where
	// dst's bytes would be their copy
	pieces *[]storedPiece
}

// run decodes the rest of the stream.
func (s *literalStream) run() bool {
	for !s.done {
		if s.inBlock {
			st := s.fastState()
			literalsFast(&s.lt.multi, s.dst, s.r.Src, &st)
			s.setFastState(st)
		}
		if !s.step() {
			return false
		}
	}
	return s.ended()
}

// ended reports whether the stream filled dst and ended where src ends.
func (s *literalStream) ended() bool {
	return s.done && s.o == len(s.dst) && s.r.BytePos() == len(s.r.Src)
}

func (s *literalStream) fastState() literalState {
	return literalState{bits: s.r.Bits, n: uint64(s.r.N), pos: s.r.Pos, p: s.o}
}

func (s *literalStream) setFastState(st literalState) {
	s.r.Bits, s.r.N, s.r.Pos, s.o = st.bits, uint(st.n), st.pos, st.p
}

// step does one piece of the work the fast path leaves: within a block,
// one symbol decoded bit by bit (a long code, the end of the block, the
// last bytes of dst or of src); between blocks, the next block's header
// (a stored block is copied whole). false: malformed, or a stream this
// decoder does not handle (matches).
func (s *literalStream) step() bool {
	r := &s.r
	r.Refill()
	if s.inBlock {
		sym, ok := s.lt.slowSymbol(r)
		switch {
		case !ok || sym > endOfBlock || r.Overrun():
			return false
		case sym == endOfBlock:
			s.inBlock, s.done = false, s.final
			return true
		case s.o >= len(s.dst):
			return false
		}
		s.dst[s.o] = byte(sym)
		s.o++
		return true
	}
	s.final = r.Take(1) == 1
	switch r.Take(2) {
	case 0:
		p, n, ok := storedBlock(r, len(s.dst)-s.o)
		if !ok {
			return false
		}
		if s.pieces == nil {
			copy(s.dst[s.o:], r.Src[p:p+n])
		} else if n > 0 {
			*s.pieces = append(*s.pieces, storedPiece{o: s.o, src: p, n: n})
		}
		s.o += n
		s.done = s.final
	case 1:
		if !s.useTable(fixedLengths()) {
			return false
		}
		s.inBlock = true
	case 2:
		lens, ok := dynamicLengths(r, &s.lens)
		if !ok || !s.useTable(lens) {
			return false
		}
		s.inBlock = true
	default:
		return false
	}
	return !r.Overrun()
}

const (
	litTableBits = 11
	litMaxBits   = 15
	endOfBlock   = 256
)

// literalTables is the per-block decoding state. An entry of multi
// holds the literals the next litTableBits bits of the stream code, as
// many (up to 4) as fit: bits 0-7 the bits they use, 8-15 their count
// (0: a longer code, the end of the block or a length: the slow path),
// 16-31 zero (the count is the low word shifted, as the fast paths read
// it), 32-63 the literals, first in the low byte.
type literalTables struct {
	multi [1 << litTableBits]uint64
	canonicalCode
	lens   [288]uint8 // the code's lengths
	nlens  int
	builds int    // how often built (for tests)
	used   uint64 // when a block last took them (literalSlots.clock)
}

// built reports whether the tables are those of the code with these lengths.
func (lt *literalTables) built(lens []uint8) bool {
	return lt.nlens == len(lens) && string(lt.lens[:lt.nlens]) == string(lens)
}

// canonicalCode is a Huffman code for the bit-by-bit slow path.
type canonicalCode struct {
	count  [litMaxBits + 1]uint16 // codes per length
	symbol [288]uint16            // symbols in canonical order
}

// fixed is the literal/length code lengths of fixed Huffman blocks.
var fixed = func() (l [288]uint8) {
	for i := range l {
		switch {
		case i < 144, i >= 280:
			l[i] = 8
		case i < 256:
			l[i] = 9
		default:
			l[i] = 7
		}
	}
	return l
}()

func fixedLengths() []uint8 { return fixed[:] }

// build makes the tables of the literal/length code with these lengths;
// false for an over-subscribed code.
func (lt *literalTables) build(lens []uint8) bool {
	lt.nlens = 0
	if !lt.canonical(lens) {
		return false
	}
	lt.nlens = copy(lt.lens[:], lens)
	var next [litMaxBits + 1]uint16
	code := uint16(0)
	for l := 1; l <= litMaxBits; l++ {
		code = (code + lt.count[l-1]) << 1
		next[l] = code
	}
	// single: the first literal of each index (0: a longer code, the
	// end of the block or a length)
	var single [1 << litTableBits]uint16
	for s, l := range lens {
		if l == 0 || l > litTableBits {
			continue
		}
		c := next[l]
		next[l]++
		if s >= endOfBlock {
			continue
		}
		for k := int(bits.Reverse16(c) >> (16 - l)); k < 1<<litTableBits; k += 1 << l {
			single[k] = uint16(s) | uint16(l)<<8
		}
	}
	// multi[idx] is its first literal (l bits) followed by the literals of
	// multi[idx>>l] that end within the litTableBits-l bits left (idx>>l
	// < idx: index 0 repeats its first literal); ends[idx] is where its
	// literals end (bit i: a literal ends after i+1 bits)
	var ends [1 << litTableBits]uint16
	for idx := range lt.multi {
		f := single[idx]
		l := uint64(f>>8) & 15
		if l == 0 {
			lt.multi[idx], ends[idx] = 0, 0
			continue
		}
		var rest, restEnds uint64
		if r := idx >> l; r != idx {
			rest, restEnds = lt.multi[r], uint64(ends[r])
		} else {
			rest, restEnds = repeated(f, l)
		}
		// rest's literals that end within the bits left, the first three
		e := restEnds & lowBits[litTableBits-l]
		more := e & (e - 1)
		more &= more - 1
		more &= more - 1
		e ^= more
		k := uint64(bits.OnesCount64(e)) & 3
		e = e<<l | 1<<(l-1)
		lits := (uint64(f&0xFF) | rest>>24&0xFFFFFF00) & litsMask[k]
		lt.multi[idx] = lits<<32 | (k+1)<<8 | uint64(bits.Len64(e))
		ends[idx] = uint16(e)
	}
	return true
}

var (
	lowBits  = [litTableBits + 1]uint64{0, 1, 3, 7, 0xF, 0x1F, 0x3F, 0x7F, 0xFF, 0x1FF, 0x3FF, 0x7FF}
	litsMask = [4]uint64{0xFF, 0xFFFF, 0xFFFFFF, 0xFFFFFFFF} // by literals less one
)

// repeated is the entry of index 0, whose first literal (l bits, all
// zero) repeats as often as it fits, and where its literals end.
func repeated(f uint16, l uint64) (e, ends uint64) {
	n := uint64(0)
	for ; n < 4 && (n+1)*l <= litTableBits; n++ {
		ends |= 1 << ((n+1)*l - 1)
		e |= uint64(f&0xFF) << (32 + 8*n)
	}
	return e | n*l | n<<8, ends
}

// useTable points the stream at tables for the code with these lengths:
// its own when they are that code (the last block's, or the last
// chunk's); else, where it shares slots with a peer, a slot that holds
// that code (the writer codes the two halves of a chunk alike, and one
// table stays in the L1 cache where two would not; a chunk's later block
// may repeat an earlier one's code, a chunk the last chunk's); else the
// slot used least recently, rebuilt (never the one its peer decodes
// with).
func (s *literalStream) useTable(lens []uint8) bool {
	sl := s.slots
	if sl == nil {
		if s.lt.built(lens) {
			return true
		}
		s.lt.builds++
		return s.lt.build(lens)
	}
	if !s.lt.built(lens) {
		var peer *literalTables
		if s.peer != nil {
			peer = s.peer.lt
		}
		if t := sl.find(lens); t != nil {
			s.lt = t
		} else {
			s.lt = sl.leastRecent(peer)
			s.lt.builds++
			if !s.lt.build(lens) {
				return false
			}
		}
	}
	sl.clock++
	s.lt.used = sl.clock
	return true
}

// tableSlots is how many codes' tables a two-stream chunk's decoder
// keeps: the stories260K chunks have three distinct codes.
const tableSlots = 4

// literalSlots are the tables two streams share.
type literalSlots struct {
	t     [tableSlots]literalTables
	clock uint64 // stamps each use (literalTables.used)
}

// find is the slot with the tables of this code; nil: none.
func (sl *literalSlots) find(lens []uint8) *literalTables {
	for i := range sl.t {
		if sl.t[i].built(lens) {
			return &sl.t[i]
		}
	}
	return nil
}

// leastRecent is the slot used least recently other than not.
func (sl *literalSlots) leastRecent(not *literalTables) *literalTables {
	var best *literalTables
	for i := range sl.t {
		if t := &sl.t[i]; t != not && (best == nil || t.used < best.used) {
			best = t
		}
	}
	return best
}

// literalState is the bit reader and output position the fast path
// works on (its assembly twin reads the fields at these offsets).
type literalState struct {
	bits uint64
	n    uint64
	pos  int
	p    int
}

// literalsGo decodes literals while each of four lookups finds some and
// dst has room for 16 more and src a whole word: the bit buffer in
// registers, four lookups per refill (each consumes at most 11 of the 56
// bits a refill guarantees). The bits an entry uses are its low byte, so
// the shift feeding the next lookup is one instruction.
func literalsGo(multi *[1 << litTableBits]uint64, dst, src []byte, st *literalState) {
	const mask = 1<<litTableBits - 1
	bv, n, pos, p := st.bits, st.n, st.pos, st.p
	defer func() { st.bits, st.n, st.pos, st.p = bv, n, pos, p }()
	for p+16 <= len(dst) && pos+8 <= len(src) {
		bv |= binary.LittleEndian.Uint64(src[pos:]) << (n & 63)
		pos += int((63 - n) >> 3)
		n |= 56
		for range 4 {
			e := multi[bv&mask]
			if e&0xFF00 == 0 {
				return
			}
			binary.LittleEndian.PutUint32(dst[p:], uint32(e>>32))
			p += int(e >> 8 & 7)
			bv >>= e & 63
			n -= e & 0xFF
		}
	}
}

// slowSymbol decodes one symbol bit by bit (canonical decoding).
func (lt *canonicalCode) slowSymbol(r *bitio.Reader) (int, bool) {
	code, first, index := 0, 0, 0
	for l := 1; l <= litMaxBits; l++ {
		code |= int(r.Take(1))
		c := int(lt.count[l])
		if code-c < first {
			return int(lt.symbol[index+code-first]), true
		}
		index += c
		first = (first + c) << 1
		code <<= 1
	}
	return 0, false
}

// storedBlock reads a stored block's header (after its 3 header bits)
// and skips its payload, src[p:p+n]; false where it is malformed or
// longer than room.
func storedBlock(r *bitio.Reader, room int) (p, n int, ok bool) {
	r.Take(r.N % 8) // to a byte boundary
	if r.Overrun() {
		return 0, 0, false
	}
	p = r.BytePos()
	if p+4 > len(r.Src) {
		return 0, 0, false
	}
	n = int(binary.LittleEndian.Uint16(r.Src[p:]))
	if uint16(n) != ^binary.LittleEndian.Uint16(r.Src[p+2:]) || p+4+n > len(r.Src) || n > room {
		return 0, 0, false
	}
	r.Seek(p + 4 + n)
	return p + 4, n, true
}

var clOrder = [19]uint8{16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15}

// dynamicLengths reads a dynamic block's code lengths and returns those
// of the literal/length code.
func dynamicLengths(r *bitio.Reader, scratch *[288 + 32]uint8) ([]uint8, bool) {
	r.Refill()
	nlit := int(r.Take(5)) + 257
	ndist := int(r.Take(5)) + 1
	ncl := int(r.Take(4)) + 4
	if nlit > 286 || ndist > 30 {
		return nil, false
	}
	var cl [19]uint8
	for i := 0; i < ncl; i++ {
		if i%8 == 0 {
			r.Refill()
		}
		cl[clOrder[i]] = uint8(r.Take(3))
	}
	// the code-length code, decoded bit by bit with the slow path's tables
	var clt canonicalCode
	if !clt.canonical(cl[:]) {
		return nil, false
	}
	lens := scratch[:nlit+ndist]
	for i := 0; i < len(lens); {
		r.Refill()
		s, ok := clt.slowSymbol(r)
		if !ok {
			return nil, false
		}
		rep, val := 1, uint8(s)
		switch s {
		case 16:
			if i == 0 {
				return nil, false
			}
			rep, val = 3+int(r.Take(2)), lens[i-1]
		case 17:
			rep, val = 3+int(r.Take(3)), 0
		case 18:
			rep, val = 11+int(r.Take(7)), 0
		}
		if i+rep > len(lens) {
			return nil, false
		}
		for ; rep > 0; rep-- {
			lens[i] = val
			i++
		}
	}
	if r.Overrun() || lens[endOfBlock] == 0 {
		return nil, false
	}
	return lens[:nlit], true
}

// canonical builds the code with these lengths; false for an
// over-subscribed one.
func (lt *canonicalCode) canonical(lens []uint8) bool {
	lt.count = [litMaxBits + 1]uint16{}
	for _, l := range lens {
		lt.count[l]++
	}
	lt.count[0] = 0
	left := 1
	for l := 1; l <= litMaxBits; l++ {
		left = left<<1 - int(lt.count[l])
		if left < 0 {
			return false
		}
	}
	var offs [litMaxBits + 2]uint16
	for l := 1; l <= litMaxBits; l++ {
		offs[l+1] = offs[l] + lt.count[l]
	}
	for s, l := range lens {
		if l != 0 {
			lt.symbol[offs[l]] = uint16(s)
			offs[l]++
		}
	}
	return true
}

// inflateLiterals2 decodes two streams in one loop: a Huffman decode is a
// chain of dependent lookups (each waits on the bits the last consumed),
// and two independent chains keep the core busy where one leaves it idle.
// The streams share the buffers their readers and dst slices start in
// (a.dst and b.dst, a.r.Src and b.r.Src begin at the same addresses), as
// the fast path takes one base for each, and the tables of the slots
// a.slots and b.slots point to, a.lt and b.lt being the two to start
// with. When one ends, the other runs alone.
func inflateLiterals2(a, b *literalStream) bool {
	a.peer, b.peer = b, a
	for !a.done && !b.done {
		s := a
		switch {
		case a.inBlock && b.inBlock:
			st := literalState2{a: a.fastState(), b: b.fastState(),
				aDst: len(a.dst) - 4*lookups2, aSrc: len(a.r.Src) - 8, bDst: len(b.dst) - 4*lookups2, bSrc: len(b.r.Src) - 8}
			literalsFast2(&a.lt.multi, &b.lt.multi, b.dst, b.r.Src, &st)
			a.setFastState(st.a)
			b.setFastState(st.b)
			if st.stop == stopB {
				s = b
			}
		case a.inBlock:
			s = b
		}
		if !s.step() {
			return false
		}
	}
	a.peer, b.peer = nil, nil // alone, each keeps to the tables it has
	return a.run() && b.run()
}

// literalState2 is the state of two streams' fast path: each one's bit
// reader and output position, and the last positions each may start a
// round of lookups2 lookups at (dst: 4 bytes of room a lookup; src: a
// whole word).
type literalState2 struct {
	a, b       literalState
	aDst, aSrc int
	bDst, bSrc int
	stop       int // which stream left the fast path: stopA or stopB
}

const (
	stopA = 1
	stopB = 2
)

// lookups2 is how many lookups of each stream a round of literalsGo2
// takes: a refill guarantees 56 bits and an entry uses at most 11.
const lookups2 = 5

// literalsGo2 is literalsGo on two streams, a lookup of each in turn,
// lookups2 of each a round; it stops where either would have stopped
// alone, and says which one did. No lookup leaves the round: an entry of
// no literals (a longer code, the end of the block, a length) uses no
// bits, writes zeros past the output and advances nothing, so the stream
// stays on it until the round's last lookup finds it and stops the loop
// there, as if it had stopped before consuming. dst and src are the
// longer of the two streams' slices (the other ends within it).
func literalsGo2(ma, mb *[1 << litTableBits]uint64, dst, src []byte, st *literalState2) {
	const mask = 1<<litTableBits - 1
	a, b := st.a, st.b
	defer func() { st.a, st.b = a, b }()
	for {
		if a.p > st.aDst || a.pos > st.aSrc {
			st.stop = stopA
			return
		}
		if b.p > st.bDst || b.pos > st.bSrc {
			st.stop = stopB
			return
		}
		a.bits |= binary.LittleEndian.Uint64(src[a.pos:]) << (a.n & 63)
		a.pos += int((63 - a.n) >> 3)
		a.n |= 56
		b.bits |= binary.LittleEndian.Uint64(src[b.pos:]) << (b.n & 63)
		b.pos += int((63 - b.n) >> 3)
		b.n |= 56
		for j := range lookups2 {
			e := ma[a.bits&mask]
			binary.LittleEndian.PutUint32(dst[a.p:], uint32(e>>32))
			a.p += int(uint32(e) >> 8)
			a.bits >>= e & 63
			a.n -= e & 0xFF
			if j == lookups2-1 && e&0xFF00 == 0 {
				st.stop = stopA
				return
			}
			e = mb[b.bits&mask]
			binary.LittleEndian.PutUint32(dst[b.p:], uint32(e>>32))
			b.p += int(uint32(e) >> 8)
			b.bits >>= e & 63
			b.n -= e & 0xFF
			if j == lookups2-1 && e&0xFF00 == 0 {
				st.stop = stopB
				return
			}
		}
	}
}
