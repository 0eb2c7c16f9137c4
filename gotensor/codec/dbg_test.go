package codec

import (
	"testing"
	"time"

	"github.com/gotensor/gotensor/gotensor/tensor"
)

func TestDbgX2(t *testing.T) {
	w := realWeights(t)
	src := make([]byte, len(w)*2)
	for i, x := range w {
		storer(tensor.Float16)(src, i, x)
	}
	p := newPlanes(2, len(w))
	splitPlanes(p, src, 2, true)
	for j := range p {
		blk := p[j][:65536]
		enc := huff4X(blk, 0)
		if enc == nil {
			continue
		}
		var x2 huffX2
		rem, _ := x2.readTable(enc)
		dst := make([]byte, len(blk))
		var tt, td time.Duration
		for range 5 {
		t0 := time.Now()
		for range 200 {
			x2.readTable(enc)
		}
		tt += time.Since(t0)
		t0 = time.Now()
		for range 200 {
			x2.decode4X(dst, rem)
		}
		td += time.Since(t0)
		}
		pairs := 0
		for i := range x2.double { if x2.double[i]>>8&3 == 2 { pairs++ } }
		t.Log(j, x2.log, len(enc), tt/1000, td/1000, pairs)
	}
}
