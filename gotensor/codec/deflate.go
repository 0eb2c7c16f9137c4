package codec

import (
	"bytes"
	"hash/adler32"
	"sync"

	"github.com/klauspost/compress/flate"

	"github.com/gotensor/gotensor/gotensor/engine"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// deflate is raw RFC 1951 DEFLATE, the stream NVIDIA DOCA Compress emits
// and accepts (zlib's wbits=-15). The chunk table's aux word holds the
// Adler-32 of the inflated bytes, the checksum DOCA's deflate tasks report.
type deflate struct{}

// shuffleDeflate is byte planes (as in planes) inflated from one raw
// DEFLATE stream coded Huffman-only: a BlueField-3 can inflate it in
// hardware and the host (or the DPU's Arm cores) merges the planes. aux
// is the Adler-32 of the inflated, still shuffled bytes.
type shuffleDeflate struct{}

func init() {
	Register(deflate{})
	Register(shuffleDeflate{})
}

func (deflate) ID() ID                     { return IDDeflate }
func (deflate) Name() string               { return "deflate" }
func (deflate) Supports(tensor.DType) bool { return true }

func (shuffleDeflate) ID() ID       { return IDShuffleDeflate }
func (shuffleDeflate) Name() string { return "shuffle-deflate" }
func (shuffleDeflate) Supports(d tensor.DType) bool {
	return planes{}.Supports(d)
}

type flateWriters struct {
	pool  [2]sync.Pool // by level index
	level [2]int
}

var writers = flateWriters{level: [2]int{flate.BestSpeed, flate.HuffmanOnly}}

func deflateTo(out *bytes.Buffer, src []byte, li int) error {
	w, _ := writers.pool[li].Get().(*flate.Writer)
	if w == nil {
		var err error
		if w, err = flate.NewWriter(out, writers.level[li]); err != nil {
			return err
		}
	} else {
		w.Reset(out)
	}
	defer writers.pool[li].Put(w)
	if _, err := w.Write(src); err != nil {
		return err
	}
	return w.Close()
}

func (deflate) Encode(dst, src []byte, _ Info) ([]byte, uint32, error) {
	out := bytes.NewBuffer(dst[:0])
	if err := deflateTo(out, src, 0); err != nil {
		return nil, 0, err
	}
	return out.Bytes(), adler32.Checksum(src), nil
}

func (deflate) Decode(dst, src []byte, _ Info, aux uint32) error {
	sum, err := engine.Current().Inflate(dst, src)
	if err != nil {
		return err
	}
	if sum != aux {
		return corrupt("deflate: Adler-32 mismatch")
	}
	return nil
}

func (shuffleDeflate) Encode(dst, src []byte, in Info) ([]byte, uint32, error) {
	k, rot := layout(in.Meta.DType)
	if len(src)%k != 0 {
		return nil, 0, corrupt("shuffle-deflate: chunk is not a whole number of elements")
	}
	ps := planePool.Get()
	defer planePool.Put(ps)
	n := len(src) / k
	splitPlanes(ps.planes(k, n), src, k, rot)
	shuffled := ps.buf[:len(src)]
	out := bytes.NewBuffer(dst[:0])
	if err := deflateTo(out, shuffled, 1); err != nil {
		return nil, 0, err
	}
	return out.Bytes(), adler32.Checksum(shuffled), nil
}

func (shuffleDeflate) Decode(dst, src []byte, in Info, aux uint32) error {
	k, rot := layout(in.Meta.DType)
	if len(dst)%k != 0 {
		return corrupt("shuffle-deflate: %d bytes is not a whole number of elements", len(dst))
	}
	ps := planePool.Get()
	defer planePool.Put(ps)
	pl := ps.planes(k, len(dst)/k)
	shuffled := ps.buf[:len(dst)]
	sum, err := engine.Current().Inflate(shuffled, src)
	if err != nil {
		return err
	}
	if sum != aux {
		return corrupt("shuffle-deflate: Adler-32 mismatch")
	}
	mergePlanes(dst, pl, k, rot)
	return nil
}
