//go:build amd64 && !noasm

package deflate

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/gotensor/gotensor/gotensor/codec/internal/bitio"
)

// The assembly fast paths and their Go twins decode every stream alike,
// stopping at the same place, and pack codes alike.
func TestLiteralsFastPathTwins(t *testing.T) {
	if !haveBMI2 {
		t.Skip("no BMI2: the Go twin is the only path")
	}
	var lt literalTables
	for i, p := range planeInputs(t) {
		s := writerStream(p)
		for _, asm := range []bool{true, false} {
			haveBMI2 = asm
			dst := make([]byte, len(p))
			ok := inflateLiterals(dst, s, &lt)
			haveBMI2 = true
			if !ok || !bytes.Equal(dst, p) {
				t.Fatalf("input %d, asm %v: decode failed", i, asm)
			}
		}
	}
	r := rand.New(rand.NewPCG(45, 46))
	for it := 0; it < 200; it++ {
		for i := range lt.multi {
			// the entries build can make: up to 4 literals in up to 12 bits
			lt.multi[i] = r.Uint64()&^0xFFFF | uint64(r.IntN(13)) | uint64(r.IntN(5))<<8
		}
		src := make([]byte, r.IntN(200))
		for i := range src {
			src[i] = byte(r.Uint32())
		}
		dst := make([]byte, r.IntN(300))
		st := literalState{bits: r.Uint64() & (1<<20 - 1), n: 20, pos: r.IntN(len(src) + 1), p: r.IntN(len(dst) + 1)}
		a, g := st, st
		da, dg := bytes.Clone(dst), bytes.Clone(dst)
		literalsBMI2(&lt.multi, da, src, &a)
		literalsGo(&lt.multi, dg, src, &g)
		if a != g || !bytes.Equal(da, dg) {
			t.Fatalf("it %d: asm %+v, Go %+v", it, a, g)
		}
	}
	// the packing loop: any codes of up to litCodeLimit bits, any room
	var codes [288]uint32
	var tab packTable
	for it := 0; it < 200; it++ {
		for i := range codes {
			l := 1 + r.IntN(litCodeLimit)
			codes[i] = uint32(r.IntN(1<<l)) | uint32(l)<<16
		}
		tab.set(&codes)
		p := make([]byte, r.IntN(300))
		for i := range p {
			p[i] = byte(r.Uint32())
		}
		buf := make([]byte, r.IntN(400))
		st := packState{State: bitio.State{Acc: uint64(r.IntN(128)), N: 7, Pos: r.IntN(len(buf) + 1)}, i: r.IntN(len(p) + 1)}
		a, g := st, st
		ba, bg := bytes.Clone(buf), bytes.Clone(buf)
		packBMI2(&tab, p, ba, &a)
		packGo(&tab, p, bg, &g)
		if a != g || !bytes.Equal(ba, bg) {
			t.Fatalf("pack it %d: asm %+v, Go %+v", it, a, g)
		}
	}
}

// The two-stream fast path in assembly and its Go twin stop alike, at the
// same place, having written the same bytes.
func TestLiteralsFastPath2Twins(t *testing.T) {
	if !haveBMI2 {
		t.Skip("no BMI2: the Go twin is the only path")
	}
	r := rand.New(rand.NewPCG(69, 70))
	var ta, tb literalTables
	for it := 0; it < 300; it++ {
		for _, lt := range []*literalTables{&ta, &tb} {
			for i := range lt.multi {
				lt.multi[i] = r.Uint64()&^0xFFFFFFFF | uint64(r.IntN(litTableBits+1)) | uint64(1+r.IntN(4))<<8
				if r.IntN(400) == 0 {
					lt.multi[i] = 0 // the slow path
				}
			}
		}
		src := make([]byte, r.IntN(600))
		for i := range src {
			src[i] = byte(r.Uint32())
		}
		dst := make([]byte, r.IntN(900))
		srcA, dstA := r.IntN(len(src)+1), r.IntN(len(dst)+1)
		st := literalState2{
			a:    literalState{bits: r.Uint64() & (1<<20 - 1), n: 20, pos: r.IntN(srcA + 1), p: r.IntN(dstA + 1)},
			b:    literalState{bits: r.Uint64() & (1<<9 - 1), n: 9, pos: srcA + r.IntN(len(src)-srcA+1), p: dstA + r.IntN(len(dst)-dstA+1)},
			aDst: dstA - 4*lookups2, aSrc: srcA - 8, bDst: len(dst) - 4*lookups2, bSrc: len(src) - 8,
		}
		a, g := st, st
		da, dg := bytes.Clone(dst), bytes.Clone(dst)
		literalsBMI2x2(&ta.multi, &tb.multi, da, src, &a)
		literalsGo2(&ta.multi, &tb.multi, dg, src, &g)
		if a != g || !bytes.Equal(da, dg) {
			t.Fatalf("it %d: asm %+v, Go %+v", it, a, g)
		}
	}
}

// The two-stream packing loop in assembly and its Go twin stop alike, at
// the same place, having written the same bytes, for any codes of up to
// litCodeLimit bits, any lengths, room and starting points.
func TestPack2Twins(t *testing.T) {
	if !haveBMI2 {
		t.Skip("no BMI2: the Go twin is the only path")
	}
	r := rand.New(rand.NewPCG(91, 92))
	var codes [2][288]uint32
	var tabs packCodes
	moved := 0
	for it := 0; it < 500; it++ {
		for j := range codes {
			for i := range codes[j] {
				l := 1 + r.IntN(litCodeLimit)
				codes[j][i] = uint32(r.IntN(1<<l)) | uint32(l)<<16
			}
			tabs[j].set(&codes[j])
		}
		var p, buf [2][]byte
		var st [2]packState
		for j := range 2 {
			p[j] = make([]byte, r.IntN(300))
			for i := range p[j] {
				p[j][i] = byte(r.Uint32())
			}
			buf[j] = make([]byte, r.IntN(400))
			st[j] = packState{State: bitio.State{Acc: uint64(r.IntN(128)), N: uint64(r.IntN(8)), Pos: r.IntN(len(buf[j]) + 1)}, i: r.IntN(len(p[j]) + 1)}
			st[j].Acc &= 1<<st[j].N - 1
		}
		a, g := st, st
		ba := [2][]byte{bytes.Clone(buf[0]), bytes.Clone(buf[1])}
		bg := [2][]byte{bytes.Clone(buf[0]), bytes.Clone(buf[1])}
		pack2BMI2(&tabs, p[0], p[1], ba[0], ba[1], &a[0], &a[1])
		pack2Go(&tabs, p[0], p[1], bg[0], bg[1], &g[0], &g[1])
		if a != g || !bytes.Equal(ba[0], bg[0]) || !bytes.Equal(ba[1], bg[1]) {
			t.Fatalf("it %d: asm %+v, Go %+v", it, a, g)
		}
		if a[0].i != st[0].i {
			moved++
		}
	}
	if moved < 100 {
		t.Fatalf("only %d of 500 runs packed anything", moved)
	}
}
