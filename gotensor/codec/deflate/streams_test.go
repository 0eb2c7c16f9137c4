package deflate

import (
	"bytes"
	stdflate "compress/flate"
	"encoding/binary"
	"hash/adler32"
	"math/rand/v2"
	"testing"

	"github.com/gotensor/gotensor/gotensor/codec"
	"github.com/gotensor/gotensor/gotensor/codec/internal/bitio"
	"github.com/gotensor/gotensor/gotensor/codec/internal/shuffle"
	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/internal/testweights"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// weightsOf is n elements of dtype d, normal with the given spread.
func weightsOf(r *rand.Rand, d tensor.DType, n int, spread float64) []byte {
	src := make([]byte, n*d.Size())
	for i := 0; i < n; i++ {
		testweights.Put(src, i, float32(r.NormFloat64()*spread), d)
	}
	return src
}

// shuffledHalves is what a two-stream chunk of src inflates to: the
// planes of its first half of elements, then those of the second half.
func shuffledHalves(src []byte, d tensor.DType) []byte {
	k, rot := shuffle.Layout(d)
	h := halfChunk(len(src), k)
	out := make([]byte, len(src))
	var pl [8][]byte
	shuffle.Split(shuffle.Cut(out[:h], k, &pl), src[:h], k, rot)
	shuffle.Split(shuffle.Cut(out[h:], k, &pl), src[h:], k, rot)
	return out
}

// The default layout is two whole raw DEFLATE streams that compress/flate
// (zlib's wbits=-15 format) inflates one by one to the shuffled halves, the
// aux their Adler-32 together; the chunk decodes byte for byte.
func TestShuffleDeflateTwoStreams(t *testing.T) {
	softwareEngine(t)
	r := rand.New(rand.NewPCG(61, 62))
	for _, d := range []tensor.DType{tensor.BFloat16, tensor.Float16, tensor.Float32, tensor.Float64} {
		for _, n := range []int{1, 2, 3, 97, 4099, 150000} {
			src := weightsOf(r, d, n, 0.02)
			in := codec.Info{Meta: tensor.Meta{DType: d, Shape: []int64{int64(n)}}, Param: twoStreams}
			enc, aux, err := shuffleDeflate{}.Encode(nil, src, in)
			if err != nil {
				t.Fatal(err)
			}
			la := int(binary.LittleEndian.Uint32(enc))
			h := halfChunk(len(src), d.Size())
			a, errA := stdInflate(enc[4:4+la], h)
			b, errB := stdInflate(enc[4+la:], len(src)-h)
			want := shuffledHalves(src, d)
			if errA != nil || errB != nil || !bytes.Equal(append(a, b...), want) {
				t.Fatalf("%v n %d: the streams do not inflate to the shuffled halves (%v, %v)", d, n, errA, errB)
			}
			if aux != adler32.Checksum(want) {
				t.Fatalf("%v n %d: aux %08x, Adler-32 of the inflated bytes %08x", d, n, aux, adler32.Checksum(want))
			}
			got := make([]byte, len(src))
			if err := (shuffleDeflate{}).Decode(got, enc, in, aux); err != nil || !bytes.Equal(got, src) {
				t.Fatalf("%v n %d: round trip: %v", d, n, err)
			}
		}
	}
}

// Two streams from another encoder (compress/flate with matches, which the
// literal decoder leaves to the general inflater) decode as well; the
// Adler-32s of the two are joined.
func TestShuffleDeflateTwoForeignStreams(t *testing.T) {
	softwareEngine(t)
	r := rand.New(rand.NewPCG(63, 64))
	d := tensor.BFloat16
	src := weightsOf(r, d, 30000, 1)
	for i := 0; i < len(src)/2; i++ {
		src[i] = src[i%512] // repeats: the encoder finds matches
	}
	want := shuffledHalves(src, d)
	h := halfChunk(len(src), d.Size())
	for _, level := range []int{stdflate.BestSpeed, stdflate.HuffmanOnly} {
		a, b := stdDeflate(t, want[:h], level), stdDeflate(t, want[h:], level)
		enc := binary.LittleEndian.AppendUint32(nil, uint32(len(a)))
		enc = append(append(enc, a...), b...)
		in := codec.Info{Meta: tensor.Meta{DType: d, Shape: []int64{int64(len(src) / 2)}}, Param: twoStreams}
		got := make([]byte, len(src))
		if err := (shuffleDeflate{}).Decode(got, enc, in, adler32.Checksum(want)); err != nil || !bytes.Equal(got, src) {
			t.Fatalf("level %d: %v", level, err)
		}
		if err := (shuffleDeflate{}).Decode(got, enc, in, adler32.Checksum(want)^1); !errs.Is(err, errs.CorruptData) {
			t.Fatalf("level %d: a wrong Adler-32 gave %v", level, err)
		}
	}
}

// Chunks of frames written before the layout parameter (0: one stream)
// still decode; a bad first length, a truncated or flipped chunk is
// CorruptData; a layout this build does not know is Unsupported.
func TestShuffleDeflateLayouts(t *testing.T) {
	softwareEngine(t)
	r := rand.New(rand.NewPCG(65, 66))
	d := tensor.Float16
	src := weightsOf(r, d, 20000, 0.05)
	one := codec.Info{Meta: tensor.Meta{DType: d, Shape: []int64{20000}}, Param: oneStream}
	two := codec.Info{Meta: one.Meta, Param: twoStreams}
	enc1, aux1, _ := shuffleDeflate{}.Encode(nil, src, one)
	if _, err := stdInflate(enc1, len(src)); err != nil {
		t.Fatalf("one-stream chunk: %v", err)
	}
	got := make([]byte, len(src))
	if err := (shuffleDeflate{}).Decode(got, enc1, one, aux1); err != nil || !bytes.Equal(got, src) {
		t.Fatalf("one-stream chunk: %v", err)
	}
	if err := (shuffleDeflate{}).Decode(got, enc1, two, aux1); !errs.Is(err, errs.CorruptData) {
		t.Fatalf("a one-stream chunk read as two: %v", err)
	}
	enc2, aux2, _ := shuffleDeflate{}.Encode(nil, src, two)
	bad := func(name string, enc []byte) {
		t.Helper()
		if err := (shuffleDeflate{}).Decode(got, enc, two, aux2); !errs.Is(err, errs.CorruptData) {
			t.Fatalf("%s: %v", name, err)
		}
	}
	bad("empty", nil)
	bad("3 bytes", enc2[:3])
	bad("truncated", enc2[:len(enc2)-1])
	long := bytes.Clone(enc2)
	binary.LittleEndian.PutUint32(long, uint32(len(enc2)-3))
	bad("first length past the end", long)
	huge := bytes.Clone(enc2)
	binary.LittleEndian.PutUint32(huge, 0xFFFFFFFF)
	bad("first length 2^32-1", huge)
	for i := 0; i < 50; i++ {
		flip := bytes.Clone(enc2)
		flip[4+r.IntN(len(flip)-4)] ^= byte(1 + r.IntN(255))
		if err := (shuffleDeflate{}).Decode(got, flip, two, aux2); err != nil && !errs.Is(err, errs.CorruptData) {
			t.Fatalf("flipped byte: error of kind %v", errs.KindOf(err))
		}
	}
	for _, p := range []uint32{1, 3} {
		in := codec.Info{Meta: one.Meta, Param: p}
		if err := (shuffleDeflate{}).Decode(got, enc2, in, aux2); !errs.Is(err, errs.Unsupported) {
			t.Fatalf("layout %d: %v", p, err)
		}
		if _, _, err := (shuffleDeflate{}).Encode(nil, src, in); !errs.Is(err, errs.Unsupported) {
			t.Fatalf("encode layout %d: %v", p, err)
		}
	}
}

// The spec names the layout: two streams by default, streams=1 as main
// wrote before the parameter.
func TestShuffleDeflateParam(t *testing.T) {
	for spec, want := range map[string]uint32{"shuffle-deflate": twoStreams, "shuffle-deflate:streams=2": twoStreams, "shuffle-deflate:streams=1": oneStream} {
		if _, p, err := codec.Parse(spec); err != nil || p != want {
			t.Fatalf("%s: param %d, %v", spec, p, err)
		}
	}
	for _, spec := range []string{"shuffle-deflate:streams=3", "shuffle-deflate:x"} {
		if _, _, err := codec.Parse(spec); !errs.Is(err, errs.InvalidArgument) {
			t.Fatalf("%s: %v", spec, err)
		}
	}
}

// Both paths of the two-stream decoder decode what the writer writes.
func TestInflateLiterals2GoAndAsm(t *testing.T) {
	softwareEngine(t)
	have := haveBMI2
	defer func() { haveBMI2 = have }()
	r := rand.New(rand.NewPCG(71, 72))
	for _, d := range []tensor.DType{tensor.BFloat16, tensor.Float16, tensor.Float32} {
		src := weightsOf(r, d, 70000, 0.03)
		in := codec.Info{Meta: tensor.Meta{DType: d, Shape: []int64{70000}}, Param: twoStreams}
		enc, aux, _ := shuffleDeflate{}.Encode(nil, src, in)
		for _, asm := range []bool{false, true} {
			haveBMI2 = asm && have
			got := make([]byte, len(src))
			if err := (shuffleDeflate{}).Decode(got, enc, in, aux); err != nil || !bytes.Equal(got, src) {
				t.Fatalf("%v asm %v: %v", d, asm, err)
			}
		}
	}
}

// The encoder writes the same bytes through the assembly packing loops
// as through their Go twins, both layouts, every dtype, sizes that end
// mid-round and blocks of both kinds.
func TestShuffleDeflateEncodeGoAndAsm(t *testing.T) {
	softwareEngine(t)
	have := haveBMI2
	defer func() { haveBMI2 = have }()
	r := rand.New(rand.NewPCG(73, 74))
	for _, d := range []tensor.DType{tensor.BFloat16, tensor.Float16, tensor.Float32, tensor.Float64} {
		for _, n := range []int{1, 9, 4099, 70001} {
			src := weightsOf(r, d, n, 0.03)
			for _, param := range []uint32{oneStream, twoStreams} {
				in := codec.Info{Meta: tensor.Meta{DType: d, Shape: []int64{int64(n)}}, Param: param}
				var enc [2][]byte
				var aux [2]uint32
				for i, asm := range []bool{false, true} {
					haveBMI2 = asm && have
					e, a, err := shuffleDeflate{}.Encode(nil, src, in)
					if err != nil {
						t.Fatal(err)
					}
					enc[i], aux[i] = e, a
				}
				if !bytes.Equal(enc[0], enc[1]) || aux[0] != aux[1] {
					t.Fatalf("%v n %d layout %d: Go twin and assembly differ", d, n, param)
				}
			}
		}
	}
}

// The writer codes the two halves alike, block for block, so that the
// decoder builds a table once for both streams, where one code costs
// little; halves of different scales get a code each.
func TestTwoStreamsCodedAlike(t *testing.T) {
	softwareEngine(t)
	r := rand.New(rand.NewPCG(73, 74))
	for _, d := range []tensor.DType{tensor.BFloat16, tensor.Float16, tensor.Float32} {
		n := 200000
		alike := weightsOf(r, d, n, 0.02)
		apart := append(weightsOf(r, d, n/2, 0.0001), weightsOf(r, d, n/2, 30)...)
		for _, c := range []struct {
			src  []byte
			same bool
		}{{alike, true}, {apart, false}} {
			in := codec.Info{Meta: tensor.Meta{DType: d, Shape: []int64{int64(n)}}, Param: twoStreams}
			enc, aux, _ := shuffleDeflate{}.Encode(nil, c.src, in)
			endA := 4 + int(binary.LittleEndian.Uint32(enc))
			a, b := blockCodes(t, enc[4:endA]), blockCodes(t, enc[endA:])
			if len(a) == 0 || len(a) != len(b) {
				t.Fatalf("%v: %d and %d Huffman blocks", d, len(a), len(b))
			}
			if same := a[0] == b[0]; same != c.same {
				t.Fatalf("%v: first blocks coded alike %v, want %v", d, same, c.same)
			}
			got := make([]byte, len(c.src))
			if err := (shuffleDeflate{}).Decode(got, enc, in, aux); err != nil || !bytes.Equal(got, c.src) {
				t.Fatalf("%v alike %v: %v", d, c.same, err)
			}
		}
	}
}

// blockCodes lists the code lengths of a stream's Huffman blocks.
func blockCodes(t *testing.T, s []byte) (codes []string) {
	st := literalStream{r: bitio.Reader{Src: s}, lt: new(literalTables), dst: make([]byte, 1<<20)}
	for !st.done {
		in := st.inBlock
		if !st.step() {
			t.Fatal("bad block")
		}
		if !in && st.inBlock {
			codes = append(codes, string(st.lt.lens[:st.lt.nlens]))
		}
	}
	return codes
}

// Chunks whose runs change scale at random, differently in each half,
// give streams whose blocks are coded alike or not in every order: the
// decoder's two table slots (shared, own, rebuilt) decode them all.
func TestTwoStreamsTableSlots(t *testing.T) {
	softwareEngine(t)
	r := rand.New(rand.NewPCG(75, 76))
	scales := []float64{0.0001, 0.02, 30}
	for it := 0; it < 40; it++ {
		d := []tensor.DType{tensor.BFloat16, tensor.Float16}[it%2]
		var src []byte
		runs := 2 + r.IntN(12)
		for i := 0; i < runs; i++ {
			src = append(src, weightsOf(r, d, 1+r.IntN(40000), scales[r.IntN(len(scales))])...)
		}
		n := len(src) / d.Size()
		in := codec.Info{Meta: tensor.Meta{DType: d, Shape: []int64{int64(n)}}, Param: twoStreams}
		enc, aux, _ := shuffleDeflate{}.Encode(nil, src, in)
		got := make([]byte, len(src))
		if err := (shuffleDeflate{}).Decode(got, enc, in, aux); err != nil || !bytes.Equal(got, src) {
			t.Fatalf("it %d %v n %d: %v", it, d, n, err)
		}
	}
}

// A two-stream chunk decoded again with the same table slots builds no
// tables: each block finds its code's tables in a slot (either one).
func TestTwoStreamsReuseTables(t *testing.T) {
	softwareEngine(t)
	for _, d := range []tensor.DType{tensor.Float16, tensor.BFloat16, tensor.Float32} {
		src := testweights.As(testweights.Real(t), d)
		src = src[:len(src)/8*8]
		in := codec.Info{Meta: tensor.Meta{DType: d, Shape: []int64{int64(len(src) / d.Size())}}, Param: twoStreams}
		enc, _, err := shuffleDeflate{}.Encode(nil, src, in)
		if err != nil {
			t.Fatal(err)
		}
		var slots literalSlots
		want := shuffledHalves(src, d)
		builds := make([]int, 2)
		for i := range builds {
			dst := make([]byte, len(src))
			h := halfChunk(len(src), d.Size())
			endA := 4 + int(binary.LittleEndian.Uint32(enc))
			a := literalStream{r: bitio.Reader{Src: enc[:endA], Pos: 4}, lt: &slots.t[0], slots: &slots, dst: dst[:h]}
			b := literalStream{r: bitio.Reader{Src: enc, Pos: endA}, lt: &slots.t[1], slots: &slots, dst: dst, o: h}
			before := slots.builds()
			if !inflateLiterals2(&a, &b) || !bytes.Equal(dst, want) {
				t.Fatalf("%v: decode %d differs", d, i)
			}
			builds[i] = slots.builds() - before
		}
		if builds[0] == 0 || builds[1] != 0 {
			t.Fatalf("%v: tables built %v times (want some, then none)", d, builds)
		}
	}
}

func (sl *literalSlots) builds() (n int) {
	for i := range sl.t {
		n += sl.t[i].builds
	}
	return n
}

// The Adler-32 of a two-stream chunk covers the stored planes, which the
// decoder checks as it merges them (float16 and bfloat16) or before: a
// flipped byte in the stored low plane of either stream, or a wrong aux,
// is CorruptData; the untouched chunk decodes.
func TestShuffleDeflateStoredPlaneChecked(t *testing.T) {
	softwareEngine(t)
	r := rand.New(rand.NewPCG(77, 78))
	for _, d := range []tensor.DType{tensor.Float16, tensor.BFloat16, tensor.Float32} {
		for _, n := range []int{5000, 70001} {
			src := weightsOf(r, d, n, 0.02)
			in := codec.Info{Meta: tensor.Meta{DType: d, Shape: []int64{int64(n)}}, Param: twoStreams}
			enc, aux, err := shuffleDeflate{}.Encode(nil, src, in)
			if err != nil {
				t.Fatal(err)
			}
			got := make([]byte, len(src))
			if err := (shuffleDeflate{}).Decode(got, enc, in, aux); err != nil || !bytes.Equal(got, src) {
				t.Fatalf("%v n %d: %v", d, n, err)
			}
			if err := (shuffleDeflate{}).Decode(got, enc, in, aux^1<<16); !errs.Is(err, errs.CorruptData) {
				t.Fatalf("%v n %d: a wrong aux gave %v", d, n, err)
			}
			la := int(binary.LittleEndian.Uint32(enc))
			for _, at := range []int{4 + la - 10, len(enc) - 10} { // the last stored payload of each stream
				flip := bytes.Clone(enc)
				flip[at] ^= 0x10
				if err := (shuffleDeflate{}).Decode(got, flip, in, aux); !errs.Is(err, errs.CorruptData) {
					t.Fatalf("%v n %d: byte %d flipped gave %v", d, n, at, err)
				}
			}
		}
	}
}

// Truncated and corrupted two-stream chunks never panic, and whatever the
// two-stream literal decoder accepts compress/flate decodes, stream by
// stream, to the same bytes (float16's stored low planes, bfloat16's
// coded ones; compress/flate's Huffman-only streams have codes longer
// than the table, which stall the fast path).
func FuzzInflateLiterals2(f *testing.F) {
	r := rand.New(rand.NewPCG(79, 80))
	for _, d := range []tensor.DType{tensor.Float16, tensor.BFloat16} {
		n := 3000
		src := weightsOf(r, d, n, 0.05)
		enc, _, _ := shuffleDeflate{}.Encode(nil, src, codec.Info{Meta: tensor.Meta{DType: d, Shape: []int64{int64(n)}}, Param: twoStreams})
		f.Add(enc, uint16(len(src)), uint32(0))
		f.Add(enc, uint16(len(src)), uint32(len(enc)/2)<<8|0x10)
		f.Add(enc[:len(enc)-3], uint16(len(src)), uint32(0))
		want := shuffledHalves(src, d)
		h := halfChunk(len(src), d.Size())
		a, b := stdDeflate(f, want[:h], stdflate.HuffmanOnly), stdDeflate(f, want[h:], stdflate.HuffmanOnly)
		foreign := append(binary.LittleEndian.AppendUint32(nil, uint32(len(a))), append(a, b...)...)
		f.Add(foreign, uint16(len(src)), uint32(0))
		f.Add(foreign, uint16(len(src)), uint32(9)<<8|0x04)
	}
	f.Fuzz(func(t *testing.T, chunk []byte, size uint16, flip uint32) {
		c := bytes.Clone(chunk)
		if i := int(flip >> 8); len(c) > 0 && flip&0xFF != 0 {
			c[i%len(c)] ^= byte(flip)
		}
		if len(c) < 4 || int64(binary.LittleEndian.Uint32(c)) > int64(len(c)-4) {
			return
		}
		endA := 4 + int(binary.LittleEndian.Uint32(c))
		n := int(size) &^ 1
		h := halfChunk(n, 2)
		got := make([]byte, n)
		var sl literalSlots
		x := literalStream{r: bitio.Reader{Src: c[:endA], Pos: 4}, lt: &sl.t[0], slots: &sl, dst: got[:h]}
		y := literalStream{r: bitio.Reader{Src: c, Pos: endA}, lt: &sl.t[1], slots: &sl, dst: got, o: h}
		if !inflateLiterals2(&x, &y) {
			return
		}
		wa, errA := stdInflate(c[4:endA], h)
		wb, errB := stdInflate(c[endA:], n-h)
		if errA == nil && errB == nil && !bytes.Equal(got, append(wa, wb...)) {
			t.Fatalf("decoded %d bytes differently from compress/flate", n)
		}
	})
}
