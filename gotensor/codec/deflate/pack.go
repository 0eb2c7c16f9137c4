package deflate

// The packing loops code rounds of five literals and store the bit
// buffer once a round, as planes' writer does: at
// most 7 bits held and five codes of at most litCodeLimit (11) bits fit
// in 64. The two streams of a two-stream chunk are packed in one loop, a
// round of each in turns, so their dependency chains (each through its
// bit buffer) run side by side.

// packRound is how many literals a round codes.
const packRound = 5

// packTable is a block's literal code as the packing loops read it: each
// literal's bit-reversed code and its length apart (two loads, nothing
// to unpack). The assembly reads this layout.
type packTable struct {
	vals [256]uint16
	lens [256]uint8
}

// set makes t the literals of codes (bit-reversed code | length<<16).
func (t *packTable) set(codes *[288]uint32) {
	for s := range 256 {
		c := codes[s]
		t.vals[s], t.lens[s] = uint16(c), uint8(c>>16)
	}
}

// packCodes is the tables of the two streams' current blocks, the
// second after the first (pack2BMI2 reads this layout).
type packCodes [2]packTable

// round codes p[st.i:st.i+5] into the bit buffer and stores it at
// buf[st.pos:] (a word of room); st.n is under 8 before and after.
func (t *packTable) round(p, buf []byte, st *packState) {
	acc, n := st.Acc, st.N
	for _, s := range p[st.i : st.i+packRound] {
		acc |= uint64(t.vals[s]) << (n & 63)
		n += uint64(t.lens[s])
	}
	st.Acc, st.N = acc, n
	st.Store(buf)
	st.i += packRound
}

// packGo packs p[st.i:] into buf[st.pos:] a round at a time while p has
// a round left and buf a word of room: packBMI2's Go twin.
func packGo(t *packTable, p, buf []byte, st *packState) {
	for st.i+packRound <= len(p) && st.Pos+8 <= len(buf) {
		t.round(p, buf, st)
	}
}

// pack2Go packs pa into bufA (state sa, table t[0]) and pb into bufB
// (sb, t[1]), a round of each in turns, while both have a round left and
// a word of room: pack2BMI2's Go twin.
func pack2Go(t *packCodes, pa, pb, bufA, bufB []byte, sa, sb *packState) {
	for sa.i+packRound <= len(pa) && sb.i+packRound <= len(pb) && sa.Pos+8 <= len(bufA) && sb.Pos+8 <= len(bufB) {
		t[0].round(pa, bufA, sa)
		t[1].round(pb, bufB, sb)
	}
}

// literals2 appends the codes of a to wa (codes[0], bits in all) and of b
// to wb (codes[1], bitsB), packing the two in one loop; t is scratch.
func literals2(wa, wb *bitWriter, a, b []byte, codes *[2][288]uint32, t *packCodes, bitsA, bitsB int) {
	t[0].set(&codes[0])
	t[1].set(&codes[1])
	bufA, sa := wa.packStart(bitsA)
	bufB, sb := wb.packStart(bitsB)
	pack2Fast(t, a, b, bufA, bufB, &sa, &sb)
	wa.packFinish(&codes[0], &t[0], a, bufA, sa)
	wb.packFinish(&codes[1], &t[1], b, bufB, sb)
}
