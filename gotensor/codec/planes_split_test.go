package codec

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// The fast split/merge paths must match their plain twins bit for bit.
func TestSplitFastPathsMatchGeneric(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, k := range []int{1, 2, 4, 8} {
		for _, n := range []int{0, 1, 7, 8, 9, 63, 1000} {
			src := make([]byte, n*k)
			for i := range src {
				src[i] = byte(r.Uint32())
			}
			for _, rot := range []bool{false, true} {
				fast, slow := newPlanes(k, n), newPlanes(k, n)
				splitPlanes(fast, src, k, rot)
				splitGeneric(slow, src, k, rot)
				for j := range fast {
					if !bytes.Equal(fast[j], slow[j]) {
						t.Fatalf("k=%d n=%d rot=%v plane %d differs", k, n, rot, j)
					}
				}
				back := make([]byte, len(src))
				mergePlanes(back, fast, k, rot)
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
	splitPlanes(p, src, 2, true)
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
