package planes

import (
	"bytes"
	"math/rand/v2"
	"runtime"
	"testing"
	"unsafe"

	"github.com/klauspost/compress/huff0"

	"github.com/gotensor/gotensor/gotensor/codec/internal/bitio"
	"github.com/gotensor/gotensor/gotensor/codec/internal/shuffle"
	"github.com/gotensor/gotensor/gotensor/internal/testweights"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// topPlaneBlocks is the top plane of stories260K stored as d, in planes'
// 64 KiB blocks.
func topPlaneBlocks(tb testing.TB, d tensor.DType) [][]byte {
	src := testweights.As(testweights.Real(tb), d)
	k, rot := shuffle.Layout(d)
	p := newPlanes(k, len(src)/k)
	shuffle.Split(p, src, k, rot)
	var blks [][]byte
	for off := 0; off < len(p[0]); off += planeBlock {
		blks = append(blks, p[0][off:min(off+planeBlock, len(p[0]))])
	}
	return blks
}

// Planes' 4X writer and huff0's on the top plane of real float16 and
// bfloat16 weights, taking turns within each iteration: each one's MB/s
// of thread CPU time, the writer's speed over huff0's, and the sizes.
func BenchmarkHuffEncodeReal(b *testing.B) {
	for _, d := range []tensor.DType{tensor.Float16, tensor.BFloat16} {
		blks := topPlaneBlocks(b, d)
		b.Run(d.String(), func(b *testing.B) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			var he huffEnc
			hs := &huff0.Scratch{Reuse: huff0.ReusePolicyNone}
			var spent [2]float64
			var size [2]int
			total := 0
			for b.Loop() {
				size = [2]int{}
				total = 0
				t0 := testweights.ThreadCPU()
				for _, blk := range blks {
					enc, _, _ := huff0.Compress4X(blk, hs)
					size[0] += len(enc)
					total += len(blk)
				}
				t1 := testweights.ThreadCPU()
				var out []byte
				for _, blk := range blks {
					out, _, _ = he.huffEncode4X(out[:0], blk, false)
					size[1] += len(out)
				}
				spent[0] += t1 - t0
				spent[1] += testweights.ThreadCPU() - t1
			}
			n := float64(total) * float64(b.N) / 1e6
			b.ReportMetric(n/spent[0], "huff0-cpuMB/s")
			b.ReportMetric(n/spent[1], "own-cpuMB/s")
			b.ReportMetric(spent[0]/spent[1], "own/huff0")
			b.ReportMetric(float64(size[1])/float64(size[0]), "own/huff0-size")
		})
	}
}

// Blocks planes' writer codes decode with huff0's decoder and the
// double-symbol one to the same bytes: random skews, alphabet sizes and
// lengths, the real top planes, with the assembly and with the Go loops.
func TestHuffEncodeDecodes(t *testing.T) { eachLoop(t, testHuffEncodeDecodes) }

func testHuffEncodeDecodes(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	var blks [][]byte
	for _, size := range []int{2, 3, 17, 128, 129, 200, 256} {
		for _, p := range []float64{0.01, 0.1, 0.4, 0.8} {
			for _, n := range []int{256, 257, 1000, 4099, planeBlock} {
				blks = append(blks, skewed(r, n, size, p))
			}
		}
	}
	uniform := make([]byte, planeBlock)
	for i := range uniform {
		uniform[i] = byte(r.Uint32())
	}
	blks = append(blks, uniform, bytes.Repeat([]byte{7}, 300))
	for _, d := range []tensor.DType{tensor.Float16, tensor.BFloat16, tensor.Float32} {
		blks = append(blks, topPlaneBlocks(t, d)...)
	}
	var he huffEnc
	coded := 0
	for i, blk := range blks {
		enc, ok, rle := he.huffEncode4X([]byte("prefix"), blk, false)
		if string(enc[:6]) != "prefix" {
			t.Fatalf("block %d: the writer overwrote what came before", i)
		}
		if rle != (bytes.Count(blk, blk[:1]) == len(blk)) {
			t.Fatalf("block %d: rle %v", i, rle)
		}
		if !ok {
			continue
		}
		coded++
		if len(enc)-6 >= len(blk) {
			t.Fatalf("block %d: coded %d bytes to %d", i, len(blk), len(enc)-6)
		}
		checkSame(t, "own writer", enc[6:], len(blk), blk)
	}
	if coded < len(blks)/2 {
		t.Fatalf("only %d of %d blocks coded", coded, len(blks))
	}
}

// The writer's blocks are no larger than huff0's on the same data (both
// limit code lengths the same way; a few bytes of slack for ties), the
// real top planes included.
func TestHuffEncodeNoLargerThanHuff0(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	var he huffEnc
	var blks [][]byte
	for _, size := range []int{5, 40, 256} {
		for _, p := range []float64{0.02, 0.2, 0.6} {
			blks = append(blks, skewed(r, planeBlock, size, p))
		}
	}
	for _, d := range []tensor.DType{tensor.Float16, tensor.BFloat16} {
		blks = append(blks, topPlaneBlocks(t, d)...)
	}
	for i, blk := range blks {
		ref := huff4X(blk, 0)
		enc, ok, _ := he.huffEncode4X(nil, blk, false)
		if ref == nil || !ok {
			continue
		}
		// the streams' bytes: at most one byte of end mark each over the bits
		if len(enc) > len(ref)+8 {
			t.Errorf("block %d: %d bytes, huff0 %d", i, len(enc), len(ref))
		}
	}
}

// The assembly rounds and their Go twin write the same streams.
func TestHuffRounds2MatchesGo(t *testing.T) {
	if !huffFast {
		t.Skip("no assembly on this machine")
	}
	r := rand.New(rand.NewPCG(25, 26))
	for it := 0; it < 200; it++ {
		m := 1 + r.IntN(2000)
		blk := skewed(r, 10*m, 1+r.IntN(256), r.Float64())
		var he huffEnc
		he.histogram(blk)
		if bytes.Count(blk, blk[:1]) == len(blk) {
			continue
		}
		he.lengths()
		var out [2][2][]byte
		for pass, fast := range []bool{true, false} {
			huffFast = fast
			var st [2]huffBits
			for i := range st {
				st[i] = huffBits{Writer: bitio.Writer{Buf: make([]byte, len(blk)+16)}, lo: i * 5 * m, p: (i + 1) * 5 * m}
			}
			huffRounds2(&st[0], &st[1], &he.vals, &he.lens, blk, m)
			for i := range st {
				out[pass][i] = st[i].close()
			}
		}
		huffFast = true
		for i := range 2 {
			if !bytes.Equal(out[0][i], out[1][i]) {
				t.Fatalf("iteration %d stream %d: assembly and Go differ", it, i)
			}
		}
	}
}

// The assembly reads and writes huffBits' state at fixed offsets.
func TestHuffBitsLayout(t *testing.T) {
	var w huffBits
	if unsafe.Offsetof(w.Acc) != 0 || unsafe.Offsetof(w.N) != 8 || unsafe.Offsetof(w.Pos) != 16 || unsafe.Offsetof(w.p) != 48 {
		t.Fatalf("huffBits' fields moved: the assembly reads Acc, N, Pos and p at 0, 8, 16 and 48")
	}
}

// The four-table histogram counts what a plain loop counts, whatever the
// length (its tail past the last whole 8 bytes included).
func TestHistogramCounts(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	var h huffEnc
	for _, n := range []int{0, 1, 7, 8, 9, 255, 4096, 65536 - 3} {
		blk := skewed(r, n, 40, 0.3)
		var want [256]uint32
		for _, v := range blk {
			want[v]++
		}
		h.histogram(blk)
		if h.count != want {
			t.Fatalf("%d bytes: counts differ", n)
		}
	}
}

// A plane's later blocks reuse the first block's table where it costs
// next to nothing (their table bytes are the same, which the decoder
// skips building), never across chunks, and decode bit for bit through
// the cache as through a fresh table.
func TestTablesReusedWithinAChunk(t *testing.T) {
	if !huffFast {
		t.Skip("tables are reused by planes' own writer (BMI2)")
	}
	r := rand.New(rand.NewPCG(3, 3))
	w := make([]float32, 1<<18) // one layer's weights: its blocks alike
	for i := range w {
		w[i] = float32(r.NormFloat64() * 0.02)
	}
	src := testweights.As(w, tensor.Float16) // top plane: 4 blocks
	tables := func(enc []byte) (hdrs []string) {
		rest := enc[1+2:]
		if enc[0] == splitHalf {
			rest = rest[shuffle.Low2Len(1<<18):]
		}
		if enc[2] == planeRaw { // the low plane, raw ahead of the coded one
			rest = rest[1<<18:]
		}
		for i := 0; i < 4; i++ {
			mode, pay, after, err := readBlock(rest)
			if err != nil || mode != modeHuff0 {
				t.Fatalf("block %d: mode %d, %v", i, mode, err)
			}
			hdrs = append(hdrs, string(pay[:headerLen(pay)]))
			rest = after
		}
		return hdrs
	}
	in := info(tensor.Float16, 1<<18)
	enc, _, _ := planes{}.Encode(nil, src, in)
	h := tables(enc)
	reused := 0
	for i := 1; i < len(h); i++ {
		if h[i] == h[i-1] {
			reused++
		}
	}
	if reused == 0 {
		t.Errorf("no block reused its predecessor's table")
	}
	again, _, _ := planes{}.Encode(nil, src, in) // after another chunk: the same bytes
	if !bytes.Equal(again, enc) {
		t.Fatal("a chunk's coding depends on the chunk coded before it")
	}
	roundTrip(t, enc, src, tensor.Float16)
	var x huffX2 // through the cache and without it: the same tables
	for _, hd := range h {
		_, ok1, err1 := x.readTable([]byte(hd+"x"), huffMinPairs)
		single, triple := x.single, x.triple
		var fresh huffX2
		_, ok2, err2 := fresh.readTable([]byte(hd+"x"), huffMinPairs)
		if ok1 != ok2 || err1 != nil || err2 != nil || single != fresh.single || (ok1 && x.three && triple != fresh.triple) {
			t.Fatal("a cached table differs from a fresh one")
		}
	}
}
