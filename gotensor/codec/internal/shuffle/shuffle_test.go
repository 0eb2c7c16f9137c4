package shuffle

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// The fast split/merge paths must match their plain twins bit for bit.
func TestSplitFastPathsMatchGeneric(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, k := range []int{1, 2, 4, 8} {
		for _, n := range []int{0, 1, 7, 8, 9, 31, 32, 33, 63, 71, 1000} {
			src := make([]byte, n*k)
			for i := range src {
				src[i] = byte(r.Uint32())
			}
			for _, rot := range []bool{false, true} {
				fast, slow := newPlanes(k, n), newPlanes(k, n)
				Split(fast, src, k, rot)
				splitGeneric(slow, src, k, rot)
				for j := range fast {
					if !bytes.Equal(fast[j], slow[j]) {
						t.Fatalf("k=%d n=%d rot=%v plane %d differs", k, n, rot, j)
					}
				}
				back := make([]byte, len(src))
				Merge(back, fast, k, rot)
				if !bytes.Equal(back, src) {
					t.Fatalf("k=%d n=%d rot=%v: merge does not invert split", k, n, rot)
				}
			}
		}
	}
}

// After rotation the top plane of bfloat16 is exactly the exponent.
func TestBFloat16TopPlaneIsExponent(t *testing.T) {
	src := []byte{0x80, 0x3F, 0xC0, 0xBF} // bf16 1.0 (0x3F80) and -1.5 (0xBFC0)
	p := newPlanes(2, 2)
	Split(p, src, 2, true)
	if p[0][0] != 127 || p[0][1] != 127 {
		t.Fatalf("exponents %v", p[0])
	}
	if p[1][1]&1 != 1 || p[1][0]&1 != 0 {
		t.Fatalf("sign bits not in the low plane: %v", p[1])
	}
}

func newPlanes(k, n int) [][]byte {
	p := make([][]byte, k)
	for i := range p {
		p[i] = make([]byte, n)
	}
	return p
}

// FuzzPlanesSplit checks the SSSE3 split and merge against their plain
// twins on arbitrary bytes, widths, offsets (unaligned vectors) and tails.
func FuzzPlanesSplit(f *testing.F) {
	for _, k := range []uint8{1, 2, 4, 8} {
		for _, n := range []int{0, 1, 7, 8, 9, 33, 100} {
			src := make([]byte, n*int(k)+3)
			for i := range src {
				src[i] = byte(i*131 + int(k))
			}
			f.Add(k, uint8(n%3), true, src)
			f.Add(k, uint8(0), false, src)
		}
	}
	f.Fuzz(func(t *testing.T, k, off uint8, rot bool, data []byte) {
		k = []uint8{1, 2, 4, 8}[k%4]
		o := int(off % 16)
		if o > len(data) {
			return
		}
		src := data[o:]
		src = src[:len(src)/int(k)*int(k)]
		n := len(src) / int(k)
		fast, slow := newPlanes(int(k), n), newPlanes(int(k), n)
		Split(fast, src, int(k), rot)
		splitGeneric(slow, src, int(k), rot)
		for j := range fast {
			if !bytes.Equal(fast[j], slow[j]) {
				t.Fatalf("k=%d n=%d rot=%v: plane %d differs from the generic split", k, n, rot, j)
			}
		}
		back, want := make([]byte, len(src)+int(off%16)), make([]byte, len(src))
		back = back[off%16:]
		Merge(back, fast, int(k), rot)
		mergeGeneric(want, slow, int(k), rot)
		if !bytes.Equal(back, want) || !bytes.Equal(back, src) {
			t.Fatalf("k=%d n=%d rot=%v: merge differs from the generic merge or does not invert split", k, n, rot)
		}
	})
}

// GOTENSOR_WRITE_CORPUS=1 go test -run TestWritePlanesSplitCorpus ./gotensor/codec/internal/shuffle
// writes the seed corpus of FuzzPlanesSplit to testdata/fuzz.
func TestWritePlanesSplitCorpus(t *testing.T) {
	if os.Getenv("GOTENSOR_WRITE_CORPUS") == "" {
		t.Skip("set GOTENSOR_WRITE_CORPUS=1 to rewrite the seed corpus")
	}
	dir := filepath.Join("testdata", "fuzz", "FuzzPlanesSplit")
	os.MkdirAll(dir, 0o755)
	r := rand.New(rand.NewPCG(9, 10))
	for i, k := range []uint8{1, 2, 4, 8, 2, 4} {
		data := make([]byte, 1+r.IntN(300))
		for j := range data {
			data[j] = byte(r.Uint32())
		}
		body := fmt.Sprintf("go test fuzz v1\nuint8(%d)\nuint8(%d)\nbool(%v)\n[]byte(%q)\n", k, i, i%2 == 0, data)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("seed-%02d", i)), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// A large merge (non-temporal stores, where the destination is aligned)
// and one at an odd offset give the bytes the plain merge gives.
func TestLargeMerges(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, k := range []int{2, 4} {
		n := 300_001
		src := make([]byte, n*k)
		for i := range src {
			src[i] = byte(r.Uint32())
		}
		pl := newPlanes(k, n)
		splitGeneric(pl, src, k, true)
		for _, off := range []int{0, 1, 4, 16} {
			buf := make([]byte, n*k+off)
			dst := buf[off:]
			Merge(dst, pl, k, true)
			if !bytes.Equal(dst, src) {
				t.Fatalf("k=%d offset %d: merged bytes differ", k, off)
			}
		}
	}
}
