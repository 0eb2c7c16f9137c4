package shuffle

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// low2Plain is the packed layout written out element by element: the
// reference CutLow2 and JoinLow2 (kernel or not) must agree with.
func low2Plain(p []byte) (b, rest []byte) {
	b, rest = make([]byte, Low2Len(len(p))), make([]byte, len(p))
	for i, v := range p {
		g, j := i/32, i%32
		b[8*g+j%8] |= (v & 3) << (2 * (j / 8))
		rest[i] = v >> 2
	}
	return b, rest
}

func TestLow2CutAndJoin(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{0, 1, 7, 8, 31, 32, 33, 63, 64, 95, 1000, 65536 + 17} {
		p := make([]byte, n)
		for i := range p {
			p[i] = byte(r.Uint32())
		}
		wantB, wantRest := low2Plain(p)
		var got, b []byte
		for _, fast := range []bool{true, false} {
			got = bytes.Clone(p)
			b = make([]byte, Low2Len(n))
			for i := range b {
				b[i] = 0xAA // CutLow2 writes every byte
			}
			had := haveAVX2
			haveAVX2 = haveAVX2 && fast
			CutLow2(b, got)
			haveAVX2 = had
			if !bytes.Equal(b, wantB) || !bytes.Equal(got, wantRest) {
				t.Fatalf("n=%d fast=%v: CutLow2 differs from the layout", n, fast)
			}
		}
		for _, fast := range []bool{true, false} {
			back := bytes.Clone(got)
			had := haveAVX2
			haveAVX2 = haveAVX2 && fast
			JoinLow2(back, b)
			haveAVX2 = had
			if !bytes.Equal(back, p) {
				t.Fatalf("n=%d fast=%v: JoinLow2 does not invert CutLow2", n, fast)
			}
		}
	}
}

// Bytes over 63 (a corrupt plane) join the same way in the kernel and in
// Go: their top bits are dropped.
func TestJoinLow2DropsHighBitsAlike(t *testing.T) {
	p := make([]byte, 96)
	for i := range p {
		p[i] = 0xFF - byte(i)
	}
	b := bytes.Repeat([]byte{0x1B}, Low2Len(96))
	fast, slow := bytes.Clone(p), bytes.Clone(p)
	JoinLow2(fast, b)
	had := haveAVX2
	haveAVX2 = false
	JoinLow2(slow, b)
	haveAVX2 = had
	if !bytes.Equal(fast, slow) {
		t.Fatal("the kernel and the Go code join a corrupt plane differently")
	}
}
