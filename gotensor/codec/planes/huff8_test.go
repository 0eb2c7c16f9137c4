package planes

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// twoBlocks lays out 4X payloads a and b as planes does: each behind its
// u32 header.
func twoBlocks(a, b []byte) (src, payA, payB []byte) {
	src = binary.LittleEndian.AppendUint32(nil, uint32(len(a))|modeHuff0<<30)
	src = append(src, a...)
	src = binary.LittleEndian.AppendUint32(src, uint32(len(b))|modeHuff0<<30)
	src = append(src, b...)
	return src, src[4 : 4+len(a)], src[8+len(a):]
}

// lowPairBlocks are pairs of full blocks whose tables give two symbols too
// seldom for the double-symbol decoder: float16's top plane of real
// weights, and random skews with long codes.
func lowPairBlocks(t *testing.T) [][2][]byte {
	r := rand.New(rand.NewPCG(31, 32))
	var out [][2][]byte
	f16 := topPlaneBlocks(t, tensor.Float16)
	for i := 0; i+1 < len(f16); i++ {
		if len(f16[i+1]) == planeBlock {
			out = append(out, [2][]byte{f16[i], f16[i+1]})
		}
	}
	for _, size := range []int{30, 120, 256} {
		for _, p := range []float64{0.01, 0.05} {
			out = append(out, [2][]byte{skewed(r, planeBlock, size, p), skewed(r, planeBlock, size, p)})
		}
	}
	var x2 huffX2
	low := out[:0]
	for _, pair := range out {
		_, pa, _ := x2.readTable(huff4X(pair[0], 0), huffMinPairs)
		_, pb, _ := x2.readTable(huff4X(pair[1], 0), huffMinPairs)
		if !pa && !pb {
			low = append(low, pair)
		}
	}
	if len(low) < 6 {
		t.Fatalf("only %d pairs of blocks with few two-symbol entries", len(low))
	}
	return low
}

// decodeTwoGuarded runs decodeTwo into two blocks with a guard after them
// that must stay untouched; errors must be CorruptData.
func decodeTwoGuarded(t *testing.T, src, payA, payB []byte) ([]byte, int, error) {
	var ta, tb huffX2
	buf := make([]byte, 2*planeBlock+16)
	copy(buf[2*planeBlock:], "GUARDINGGUARDING")
	n, err := decodeTwo(buf[:2*planeBlock:2*planeBlock], src, payA, payB, &ta, &tb)
	if string(buf[2*planeBlock:]) != "GUARDINGGUARDING" {
		t.Fatal("decodeTwo wrote past its two blocks")
	}
	if err != nil && !errs.Is(err, errs.CorruptData) {
		t.Fatalf("error of kind %v: %v", errs.KindOf(err), err)
	}
	return buf[:2*planeBlock], n, err
}

// decodeTwo gives huff0's bytes for both blocks, with planes' writer's
// blocks and huff0's, with the assembly and with the Go loops.
func TestDecodeTwoMatchesHuff0(t *testing.T) { eachLoop(t, testDecodeTwoMatchesHuff0) }

func testDecodeTwoMatchesHuff0(t *testing.T) {
	var he huffEnc
	for i, pair := range lowPairBlocks(t) {
		for w, write := range []func([]byte) []byte{
			func(b []byte) []byte { return huff4X(b, 0) },
			func(b []byte) []byte { enc, _, _ := he.huffEncode4X(nil, b); return enc },
		} {
			src, payA, payB := twoBlocks(write(pair[0]), write(pair[1]))
			got, n, err := decodeTwoGuarded(t, src, payA, payB)
			if err != nil || n != 2 {
				t.Fatalf("pair %d writer %d: decoded %d blocks: %v", i, w, n, err)
			}
			if !bytes.Equal(got[:planeBlock], pair[0]) || !bytes.Equal(got[planeBlock:], pair[1]) {
				t.Fatalf("pair %d writer %d: wrong bytes", i, w)
			}
		}
	}
}

// Corrupt blocks: decodeTwo fails with CorruptData, or gives what huff0
// gives where huff0 decodes both blocks; it never writes outside its
// blocks nor panics.
func TestDecodeTwoCorrupt(t *testing.T) { eachLoop(t, testDecodeTwoCorrupt) }

func testDecodeTwoCorrupt(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 34))
	pairs := lowPairBlocks(t)
	for it := 0; it < 300; it++ {
		pair := pairs[r.IntN(len(pairs))]
		a, b := huff4X(pair[0], 0), huff4X(pair[1], 0)
		for range 1 + r.IntN(3) {
			c := [][]byte{a, b}[r.IntN(2)]
			switch r.IntN(3) {
			case 0:
				c[r.IntN(len(c))] ^= byte(1 + r.IntN(255))
			case 1:
				i := r.IntN(min(len(c), 200)) // the table and the jump table
				c[i] = byte(r.IntN(256))
			case 2:
				c[len(c)-1] = 0
			}
		}
		if r.IntN(4) == 0 {
			b = b[:r.IntN(len(b))]
		}
		src, payA, payB := twoBlocks(a, b)
		got, n, err := decodeTwoGuarded(t, src, payA, payB)
		refA, errA := huff0Decode4X(a, planeBlock)
		refB, errB := huff0Decode4X(b, planeBlock)
		if err == nil && n == 2 {
			if errA != nil || errB != nil {
				t.Fatalf("iteration %d: decodeTwo decoded blocks huff0 rejects (%v, %v)", it, errA, errB)
			}
			if !bytes.Equal(got[:planeBlock], refA) || !bytes.Equal(got[planeBlock:], refB) {
				t.Fatalf("iteration %d: decodeTwo and huff0 disagree", it)
			}
		}
		if err != nil && errA == nil && errB == nil {
			t.Fatalf("iteration %d: decodeTwo says %v, huff0 decodes both", it, err)
		}
	}
}

// The assembly rounds and their Go twin leave the same state and bytes.
func TestHuffRounds8MatchesGo(t *testing.T) {
	if !huffFast {
		t.Skip("no assembly on this machine")
	}
	pair := lowPairBlocks(t)[0]
	src, payA, payB := twoBlocks(huff4X(pair[0], 0), huff4X(pair[1], 0))
	var ta, tb huffX2
	if _, _, err := ta.readTable(payA, 1<<30); err != nil {
		t.Fatal(err)
	}
	if _, _, err := tb.readTable(payB, 1<<30); err != nil {
		t.Fatal(err)
	}
	var h huff8
	for j := range h.off { // any windows inside src will do
		h.off[j] = len(src) - 64*j
		h.v[j] = (load(src, h.off[j]) | 1) << (j % 8)
	}
	var dst [2][]byte
	var end [2]huff8
	for pass, fast := range []bool{true, false} {
		huffFast = fast
		hh := h
		dst[pass] = make([]byte, 2*planeBlock)
		huffRounds8(&hh, &ta.single, &tb.single, src, dst[pass], 100)
		end[pass] = hh
	}
	huffFast = true
	if end[0] != end[1] || !bytes.Equal(dst[0], dst[1]) {
		t.Fatal("assembly and Go differ")
	}
}

// FuzzDecodeTwo decodes two arbitrary blocks at once, starting from real
// ones: CorruptData or huff0's bytes, never a write outside or a panic.
func FuzzDecodeTwo(f *testing.F) {
	pair := [2][]byte{skewed(rand.New(rand.NewPCG(35, 36)), planeBlock, 200, 0.02), nil}
	pair[1] = skewed(rand.New(rand.NewPCG(37, 38)), planeBlock, 150, 0.03)
	f.Add(huff4X(pair[0], 0), huff4X(pair[1], 0))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		src, payA, payB := twoBlocks(a, b)
		got, n, err := decodeTwoGuarded(t, src, payA, payB)
		if err != nil || n != 2 {
			return
		}
		refA, errA := huff0Decode4X(a, planeBlock)
		refB, errB := huff0Decode4X(b, planeBlock)
		if errA != nil || errB != nil || !bytes.Equal(got[:planeBlock], refA) || !bytes.Equal(got[planeBlock:], refB) {
			t.Fatalf("decodeTwo decoded what huff0 does not (%v, %v)", errA, errB)
		}
	})
}
