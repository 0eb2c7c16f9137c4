package deflate

import (
	"bytes"
	"compress/flate"
	"io"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gotensor/gotensor/gotensor/codec"
	"github.com/gotensor/gotensor/gotensor/codec/internal/bitio"
	"github.com/gotensor/gotensor/gotensor/codec/internal/shuffle"
	"github.com/gotensor/gotensor/gotensor/internal/testweights"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// writerStream is p as shuffle-deflate's writer codes it: literal blocks,
// then the final empty stored block.
func writerStream(p []byte) []byte {
	var hs huffmanScratch
	w := bitWriter{}
	if len(p) > 0 {
		w.literalBlocks(p, &hs)
	}
	w.stored(nil, true)
	return w.Bytes()
}

// planeInputs are byte planes of every shape the writer must code:
// empty, one byte, one value repeated, two values, skewed (long codes),
// uniform, and real exponent and mantissa planes whose statistics change
// along the chunk.
func planeInputs(t *testing.T) [][]byte {
	r := rand.New(rand.NewPCG(41, 42))
	in := [][]byte{{}, {7}, bytes.Repeat([]byte{0x3F}, 100_000), {1, 2, 1, 1, 2}}
	skewed := make([]byte, 300_000) // geometric: code lengths far past 14 before the limit
	for i := range skewed {
		b := 0
		for b < 255 && r.IntN(2) == 0 {
			b++
		}
		skewed[i] = byte(b)
	}
	in = append(in, skewed)
	uniform := make([]byte, 70_000)
	for i := range uniform {
		uniform[i] = byte(r.Uint32())
	}
	in = append(in, uniform)
	w := testweights.Real(t)
	for _, d := range []tensor.DType{tensor.BFloat16, tensor.Float16, tensor.Float32} {
		src := testweights.As(w, d)
		pl := newPlanes(d.Size(), len(w))
		shuffle.Split(pl, src, d.Size(), true)
		in = append(in, pl...)
	}
	return in
}

// compress/flate inflates what the writer writes, whatever the plane;
// the literal decoder decodes it to the same bytes.
func TestLiteralWriterStreamsInflate(t *testing.T) {
	var lt literalTables
	for i, p := range planeInputs(t) {
		s := writerStream(p)
		got, err := io.ReadAll(flate.NewReader(bytes.NewReader(s)))
		if err != nil || !bytes.Equal(got, p) {
			t.Fatalf("input %d (%d bytes): compress/flate: %v", i, len(p), err)
		}
		dst := make([]byte, len(p))
		if !inflateLiterals(dst, s, &lt) || !bytes.Equal(dst, p) {
			t.Fatalf("input %d (%d bytes): the literal decoder refused or differs", i, len(p))
		}
	}
}

// Code lengths are a complete prefix code within the limit, with a code
// for every symbol used (counts adding up to under 2^32, as a chunk's do).
func TestBuildLengths(t *testing.T) {
	r := rand.New(rand.NewPCG(43, 44))
	var tree huffmanTree
	for it := 0; it < 500; it++ {
		limit := []int{7, 11, 15}[it%3]
		n := 2 + r.IntN(286)
		if limit == 7 { // the code-length code: 19 symbols
			n = 2 + r.IntN(18)
		}
		freq := make([]uint32, n)
		for i := range freq {
			switch r.IntN(3) {
			case 0: // unused
			case 1:
				freq[i] = 1 + uint32(r.IntN(10))
			default:
				freq[i] = uint32(1) << r.IntN(23)
			}
		}
		lens := make([]uint8, n)
		buildLengths(freq, lens, limit, &tree)
		kraft, used := 0, 0
		for s, l := range lens {
			if int(l) > limit || (freq[s] > 0 && l == 0) {
				t.Fatalf("it %d: symbol %d freq %d has length %d (limit %d)", it, s, freq[s], l, limit)
			}
			if l > 0 {
				kraft += 1 << (limit - int(l))
				used++
			}
		}
		if used > 0 && kraft != 1<<limit {
			t.Fatalf("it %d: Kraft sum %d, want %d (a complete code)", it, kraft, 1<<limit)
		}
	}
	// a lone symbol gets a partner: every code written is complete
	lens := make([]uint8, 19)
	buildLengths([]uint32{0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, lens, 7, &tree)
	if lens[2] != 1 || lens[3] != 1 {
		t.Fatalf("lone symbol: lengths %v", lens)
	}
}

// Blocks follow the data: a plane whose statistics change halfway gets
// a block per half, one whose statistics do not stays one block.
func TestLiteralBlocksFollowTheData(t *testing.T) {
	r := rand.New(rand.NewPCG(47, 48))
	half := 256 << 10
	p := make([]byte, 2*half)
	for i := range p {
		if i < half {
			p[i] = byte(120 + r.IntN(4))
		} else {
			p[i] = byte(r.IntN(64))
		}
	}
	if n := countBlocks(t, writerStream(p)); n != 2 {
		t.Fatalf("%d blocks for two halves, want 2", n)
	}
	if n := countBlocks(t, writerStream(p[:half])); n != 1 {
		t.Fatalf("%d blocks for one distribution, want 1", n)
	}
}

func countBlocks(t *testing.T, s []byte) int {
	st := literalStream{r: bitio.Reader{Src: s}, lt: new(literalTables), dst: make([]byte, 1<<20)}
	n := 0
	for !st.done {
		if !st.step() {
			t.Fatal("bad block")
		}
		if st.inBlock {
			n++
			for st.inBlock {
				if !st.step() {
					t.Fatal("bad Huffman block")
				}
			}
		}
	}
	return n
}

// On real weights shuffle-deflate keeps planes' ratio (within 0.5%) in
// every float type: the blocks follow the tensors a chunk spans.
func TestShuffleDeflateRatioKeepsPlanes(t *testing.T) {
	softwareEngine(t) // gotensor's writer, not a device's
	w := testweights.Real(t)
	for _, d := range []tensor.DType{tensor.BFloat16, tensor.Float16, tensor.Float32} {
		src := testweights.As(w, d)
		in := codec.Info{Meta: tensor.Meta{DType: d, Shape: []int64{int64(len(w))}}}
		pc, _ := codec.ByName("planes")
		pl, _, err := pc.Encode(nil, src, in)
		if err != nil {
			t.Fatal(err)
		}
		for _, layout := range []uint32{oneStream, twoStreams} {
			in.Param = layout
			sd, _, err := shuffleDeflate{}.Encode(nil, src, in)
			if err != nil {
				t.Fatal(err)
			}
			if float64(len(sd)) > 1.005*float64(len(pl)) {
				t.Errorf("%v layout %d: shuffle-deflate %d bytes, planes %d", d, layout, len(sd), len(pl))
			}
		}
	}
}

// Whatever the plane, compress/flate and the literal decoder read back
// what the writer wrote. Seeds: the shapes of planeInputs, small.
func FuzzLiteralWriter(f *testing.F) {
	f.Add([]byte{}, uint8(0))
	f.Add([]byte{0x3F}, uint8(200))
	f.Add(bytes.Repeat([]byte{1, 2, 3, 4, 250}, 5000), uint8(3))
	f.Add([]byte("gotensor shuffle-deflate"), uint8(7))
	f.Fuzz(func(t *testing.T, seed []byte, skew uint8) {
		// stretch the seed over a few segments, skewed towards small values
		p := make([]byte, len(seed)*int(1+skew%64))
		for i := range p {
			b := seed[i%len(seed)]
			if skew&0x80 != 0 {
				b >>= b & 7
			}
			p[i] = b
		}
		s := writerStream(p)
		got, err := io.ReadAll(flate.NewReader(bytes.NewReader(s)))
		if err != nil || !bytes.Equal(got, p) {
			t.Fatalf("%d bytes: compress/flate: %v", len(p), err)
		}
		var lt literalTables
		dst := make([]byte, len(p))
		if !inflateLiterals(dst, s, &lt) || !bytes.Equal(dst, p) {
			t.Fatalf("%d bytes: the literal decoder refused or differs", len(p))
		}
	})
}

// entropyCost's and segmentCosts' table of c·ln(c) gives the very costs
// the logs give, bit for bit, counts under and over the table's bound
// alike: the writer's block decisions do not depend on it.
func TestEntropyCostTable(t *testing.T) {
	r := rand.New(rand.NewPCG(93, 94))
	byLogs := func(a, b *[288]uint32) float64 {
		var total, sum float64
		for s := range 256 {
			if c := a[s] + b[s]; c > 0 {
				f := float64(c)
				total += f
				sum += f * math.Log(f)
			}
		}
		if total == 0 {
			return 0
		}
		return (total*math.Log(total) - sum) * (1 / math.Ln2)
	}
	var zero [288]uint32
	for it := 0; it < 300; it++ {
		var a, b [288]uint32
		for s := range 256 {
			switch r.IntN(4) {
			case 0: // absent
			case 1:
				a[s] = uint32(r.IntN(xlnxCounts))
			case 2:
				a[s] = uint32(r.IntN(4 * xlnxCounts))
			default:
				a[s], b[s] = uint32(r.IntN(xlnxCounts)), uint32(r.IntN(xlnxCounts))
			}
		}
		if got, want := entropyCost(&a, &b, true), byLogs(&a, &b); got != want {
			t.Fatalf("it %d, both: %v, by logs %v", it, got, want)
		}
		if got, want := entropyCost(&a, &b, false), byLogs(&a, &zero); got != want {
			t.Fatalf("it %d: %v, by logs %v", it, got, want)
		}
		if seg, merged := segmentCosts(&a, &b); seg != byLogs(&b, &zero) || merged != byLogs(&a, &b) {
			t.Fatalf("it %d: segmentCosts %v, %v; by logs %v, %v", it, seg, merged, byLogs(&b, &zero), byLogs(&a, &b))
		}
	}
}
