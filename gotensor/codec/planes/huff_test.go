package planes

import (
	"bytes"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/klauspost/compress/huff0"

	"github.com/gotensor/gotensor/gotensor/codec"
	"github.com/gotensor/gotensor/gotensor/codec/internal/shuffle"
	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/internal/testweights"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// huff4X is blk as huff0.Compress4X writes it with table logs up to
// tableLog (0: huff0's default, planes' setting), or nil where huff0
// declines to code it.
func huff4X(blk []byte, tableLog int) []byte {
	s := &huff0.Scratch{TableLog: uint8(tableLog), Reuse: huff0.ReusePolicyNone}
	enc, _, err := huff0.Compress4X(blk, s)
	if err != nil {
		return nil
	}
	return append([]byte(nil), enc...)
}

// huff0Decode4X is huff0's own decoding of a 4X block of n bytes.
func huff0Decode4X(payload []byte, n int) ([]byte, error) {
	s, rem, err := huff0.ReadTable(payload, nil)
	if err != nil {
		return nil, err
	}
	return s.Decoder().Decompress4X(make([]byte, 0, n), rem)
}

// x2Decode4X is the double-symbol decoding of a 4X block of n bytes, into
// a buffer with a guard after it that must stay untouched.
func x2Decode4X(t testing.TB, payload []byte, n int) ([]byte, error) {
	var x2 huffX2
	buf := make([]byte, n+16)
	copy(buf[n:], "GUARDINGGUARDING")
	rem, _, err := x2.readTable(payload, 0)
	if err == nil {
		err = x2.decode4X(buf[:n:n], rem)
	}
	if string(buf[n:]) != "GUARDINGGUARDING" {
		t.Fatalf("the double-symbol decoder wrote past its %d bytes", n)
	}
	if err != nil && !errs.Is(err, errs.CorruptData) {
		t.Fatalf("error of kind %v: %v", errs.KindOf(err), err)
	}
	return buf[:n], err
}

// checkSame decodes payload with both decoders: both fail, or both give the
// same bytes (want, where not nil).
func checkSame(t testing.TB, what string, payload []byte, n int, want []byte) {
	ref, rerr := huff0Decode4X(payload, n)
	got, err := x2Decode4X(t, payload, n)
	switch {
	case (err == nil) != (rerr == nil):
		t.Fatalf("%s: double-symbol decoder says %v, huff0 says %v", what, err, rerr)
	case err == nil && !bytes.Equal(got, ref):
		t.Fatalf("%s: decoders disagree", what)
	case err == nil && want != nil && !bytes.Equal(got, want):
		t.Fatalf("%s: wrong bytes", what)
	}
}

// skewed is n bytes from an alphabet of size symbols, geometrically skewed
// by p: short and long codes mixed, every table log.
func skewed(r *rand.Rand, n, size int, p float64) []byte {
	b := make([]byte, n)
	for i := range b {
		s := 0
		for s < size-1 && r.Float64() > p {
			s++
		}
		b[i] = byte(s)
	}
	return b
}

// eachLoop runs f with the assembly rounds (where the machine has them)
// and with their Go twins.
func eachLoop(t *testing.T, f func(t *testing.T)) {
	was := huffFast
	defer func() { huffFast = was }()
	for _, fast := range []bool{false, true} {
		if fast && !was {
			continue // no BMI2 here: the assembly would fault
		}
		huffFast = fast
		t.Run(map[bool]string{false: "go", true: "fast"}[fast], f)
	}
}

func TestHuffX2MatchesHuff0Random(t *testing.T) { eachLoop(t, testHuffX2Random) }
func TestHuffX2MatchesHuff0Real(t *testing.T)   { eachLoop(t, testHuffX2Real) }
func TestHuffX2Corrupt(t *testing.T)            { eachLoop(t, testHuffX2Corrupt) }

func testHuffX2Random(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	coded := 0
	for _, n := range []int{256, 257, 259, 1000, 4099, 1 << 16} {
		for _, size := range []int{2, 3, 17, 100, 256} {
			for _, p := range []float64{0.02, 0.2, 0.5, 0.9} {
				blk := skewed(r, n, size, p)
				for tl := 5; tl <= 11; tl++ {
					enc := huff4X(blk, tl)
					if enc == nil {
						continue
					}
					coded++
					checkSame(t, "random", enc, n, blk)
				}
			}
		}
	}
	if coded < 100 {
		t.Fatalf("only %d blocks coded", coded)
	}
}

// The top plane (and the others) of real float16 weights, as planes codes
// them and at every table log.
func testHuffX2Real(t *testing.T) {
	w := testweights.Real(t)
	for _, d := range []tensor.DType{tensor.Float16, tensor.BFloat16} {
		src := make([]byte, len(w)*2)
		for i, x := range w {
			testweights.Put(src, i, x, d)
		}
		p := newPlanes(2, len(w))
		shuffle.Split(p, src, 2, true)
		for _, pl := range p {
			for off := 0; off < len(pl); off += planeBlock {
				blk := pl[off:min(off+planeBlock, len(pl))]
				for _, tl := range []int{0, 6, 8, 9, 10, 11} {
					if enc := huff4X(blk, tl); enc != nil {
						checkSame(t, d.String(), enc, len(blk), blk)
					}
				}
			}
		}
	}
}

// Damaged blocks: bit flips, truncations and wrong sizes are CorruptData
// (or, where the damage still decodes, the bytes huff0 gives), never a
// panic or a write outside the destination.
func testHuffX2Corrupt(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, size := range []int{3, 40, 256} {
		blk := skewed(r, 3000, size, 0.3)
		enc := huff4X(blk, 11)
		for i := range 2000 {
			bad := append([]byte(nil), enc...)
			switch i % 4 {
			case 0:
				bad[r.IntN(len(bad))] ^= 1 << r.IntN(8)
			case 1:
				bad = bad[:r.IntN(len(bad))]
			case 2:
				bad[r.IntN(len(bad))] = byte(r.Uint32())
				bad[r.IntN(len(bad))] = byte(r.Uint32())
			}
			n := len(blk)
			if i%4 == 3 {
				n += r.IntN(9) - 4
			}
			checkSame(t, "corrupt", bad, n, nil)
		}
	}
}

// FuzzHuffX2 decodes arbitrary blocks with both decoders.
func FuzzHuffX2(f *testing.F) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, size := range []int{2, 20, 256} {
		blk := skewed(r, 700, size, 0.4)
		f.Add(huff4X(blk, 11), uint16(len(blk)))
	}
	blk := skewed(r, 3000, 30, 0.75) // short codes: a triple table
	f.Add(huff4X(blk, 11), uint16(len(blk)))
	f.Fuzz(func(t *testing.T, payload []byte, n uint16) {
		if n < 256 {
			return // planes codes shorter blocks as 1X
		}
		checkSame(t, "fuzz", payload, int(n), nil)
	})
}

// The planes of real float16 weights, block by block, with each decoder:
// one core, MB of plane per second of this thread's CPU time.
func BenchmarkHuffX2Real(b *testing.B) {
	w := testweights.Real(b)
	src := make([]byte, len(w)*2)
	for i, x := range w {
		testweights.Put(src, i, x, tensor.Float16)
	}
	p := newPlanes(2, len(w))
	shuffle.Split(p, src, 2, true)
	for j, pl := range p {
		var encs [][]byte
		var blks []int
		for off := 0; off < len(pl); off += planeBlock {
			blk := pl[off:min(off+planeBlock, len(pl))]
			if enc := huff4X(blk, 0); enc != nil {
				encs, blks = append(encs, enc), append(blks, len(blk))
			}
		}
		if len(encs) == 0 {
			continue
		}
		total := 0
		for _, n := range blks {
			total += n
		}
		dst := make([]byte, planeBlock)
		name := []string{"plane0", "plane1"}[j]
		b.Run(name+"/huff0", func(b *testing.B) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			b.SetBytes(int64(total))
			var hs huff0.Scratch
			cpu := testweights.ThreadCPU()
			for b.Loop() {
				for i, enc := range encs {
					s, rem, err := huff0.ReadTable(enc, &hs)
					if err == nil {
						_, err = s.Decoder().Decompress4X(dst[:0:blks[i]], rem)
					}
					if err != nil {
						b.Fatal(err)
					}
				}
			}
			testweights.ReportCPU(b, cpu, total)
		})
		b.Run(name+"/x2", func(b *testing.B) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			b.SetBytes(int64(total))
			var x2 huffX2
			cpu := testweights.ThreadCPU()
			for b.Loop() {
				for i, enc := range encs {
					rem, _, err := x2.readTable(enc, 0)
					if err == nil {
						err = x2.decode4X(dst[:blks[i]], rem)
					}
					if err != nil {
						b.Fatal(err)
					}
				}
			}
			testweights.ReportCPU(b, cpu, total)
		})
	}
}

// Planes' decoding of real float16 and bfloat16 weights (stories260K as one
// chunk, one core) with 4X blocks through huff0's decoder and through
// planes' own (x2: the double-symbol decoder where the table
// suits), taking turns within each iteration so that both see the same
// load on a shared machine: each one's MB/s of thread CPU time, and x2's
// speed over huff0's.
func BenchmarkPlanesDecodeX2(b *testing.B) {
	if !huffFast {
		b.Skip("no double-symbol assembly on this machine")
	}
	w := testweights.Real(b)
	defer func() { huffFast = true }()
	for _, d := range []tensor.DType{tensor.Float16, tensor.BFloat16} {
		src := make([]byte, len(w)*2)
		for i, x := range w {
			testweights.Put(src, i, x, d)
		}
		in := codec.Info{Meta: tensor.Meta{DType: d, Shape: []int64{int64(len(w))}}}
		enc, _, err := planes{}.Encode(nil, src, in)
		if err != nil {
			b.Fatal(err)
		}
		dst := make([]byte, len(src))
		b.Run(d.String(), func(b *testing.B) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			var spent [2]float64
			for b.Loop() {
				for i, fast := range []bool{false, true} {
					huffFast = fast
					t0 := testweights.ThreadCPU()
					if err := (planes{}).Decode(dst, enc, in, 0); err != nil {
						b.Fatal(err)
					}
					spent[i] += testweights.ThreadCPU() - t0
				}
			}
			n := float64(len(src)) * float64(b.N) / 1e6
			b.ReportMetric(n/spent[0], "huff0-cpuMB/s")
			b.ReportMetric(n/spent[1], "x2-cpuMB/s")
			b.ReportMetric(spent[0]/spent[1], "x2/huff0")
		})
	}
}

// eachTable calls f with the header of a 4X block huff0 writes and its
// table as planes reads it, for skewed blocks of many alphabet sizes,
// skews and table logs (the same ones for every seed).
func eachTable(t *testing.T, seed uint64, f func(enc []byte, x2 *huffX2)) {
	r := rand.New(rand.NewPCG(seed, seed+1))
	for _, size := range []int{2, 5, 30, 256} {
		for _, p := range []float64{0.05, 0.3, 0.7, 0.9} {
			for tl := 5; tl <= 11; tl++ {
				enc := huff4X(skewed(r, 5000, size, p), tl)
				if enc == nil {
					continue
				}
				var x2 huffX2
				if _, _, err := x2.readTable(enc, 0); err != nil {
					t.Fatal(err)
				}
				f(enc, &x2)
			}
		}
	}
}

// huffPairSlots, which picks the decoder before any table is built, counts
// the built table's two-symbol entries.
func TestHuffPairSlots(t *testing.T) {
	eachTable(t, 13, func(enc []byte, x2 *huffX2) {
		pairs := 0
		if x2.three {
			for _, e := range x2.triple {
				if e>>8&0xff >= 2 {
					pairs++
				}
			}
		} else {
			for _, e := range x2.double {
				if e>>24 == 2 {
					pairs++
				}
			}
		}
		var again huffX2
		if _, built, _ := again.readTable(enc, pairs); !built {
			t.Fatalf("%d pairs counted, huffPairSlots says fewer", pairs)
		}
		if _, built, _ := again.readTable(enc, pairs+1); built {
			t.Fatalf("%d pairs counted, huffPairSlots says more", pairs)
		}
	})
}

// huffTripleSlots, which picks the triple table before any table is built,
// counts the 11-bit windows whose first three codes fit in them (decoded
// one code at a time with the single-symbol table); where the triple
// table is built, its entries say the same.
func TestHuffTripleSlots(t *testing.T) {
	built := 0
	eachTable(t, 15, func(enc []byte, x2 *huffX2) {
		var count [16]uint32 // codes by weight, as readTable's rank
		want := 0
		for i, e := range x2.single {
			l := int(e & 0xff)
			if i%(1<<(huffLogMax-l)) == 0 {
				count[int(x2.log)+1-l]++
			}
			l2 := int(x2.single[(i<<l)&(1<<huffLogMax-1)] & 0xff)
			if l+l2 < huffLogMax {
				l3 := int(x2.single[(i<<(l+l2))&(1<<huffLogMax-1)] & 0xff)
				if l+l2+l3 <= huffLogMax {
					want++
				}
			}
		}
		if got := huffTripleSlots(&count, x2.log); got != want {
			t.Fatalf("huffTripleSlots %d, %d windows hold three codes", got, want)
		}
		if x2.three != (want >= huffMinTriples) {
			t.Fatalf("%d triples: triple table built %v", want, x2.three)
		}
		if x2.three {
			built++
			n := 0
			for _, e := range x2.triple {
				if e>>8&0xff == 3 {
					n++
				}
			}
			if n != want {
				t.Fatalf("triple table has %d three-symbol entries, want %d", n, want)
			}
		}
	})
	if built == 0 {
		t.Fatal("no table took the triple decoder")
	}
}
