package deflate

import (
	"bytes"
	stdflate "compress/flate"
	"encoding/binary"
	"hash/adler32"
	"math/rand/v2"
	"testing"

	"github.com/gotensor/gotensor/gotensor/codec"
	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// storedStream is data as a raw DEFLATE stream of stored blocks of random
// lengths (compress/flate at NoCompression, flushed at random points:
// blocks that span planes, and empty ones).
func storedStream(t *testing.T, r *rand.Rand, data []byte) []byte {
	var out bytes.Buffer
	w, err := stdflate.NewWriter(&out, stdflate.NoCompression)
	if err != nil {
		t.Fatal(err)
	}
	for p := data; len(p) > 0; {
		m := min(len(p), 1+r.IntN(3000))
		w.Write(p[:m])
		w.Flush()
		p = p[m:]
	}
	w.Close()
	return out.Bytes()
}

// The two-stream decoder merges stored blocks' bytes from the chunk
// itself: chunks of stored blocks cut anywhere (across planes, empty,
// between Huffman planes or not) decode byte for byte, and a flipped
// payload byte is caught by the Adler-32.
func TestTwoStreamsStoredPieces(t *testing.T) {
	softwareEngine(t)
	r := rand.New(rand.NewPCG(71, 72))
	for _, d := range []tensor.DType{tensor.BFloat16, tensor.Float16, tensor.Float32, tensor.Float64} {
		for _, n := range []int{2, 3, 97, 4099, 50000} {
			src := weightsOf(r, d, n, 0.02)
			in := codec.Info{Meta: tensor.Meta{DType: d, Shape: []int64{int64(n)}}, Param: twoStreams}
			want := shuffledHalves(src, d)
			h := halfChunk(len(src), d.Size())
			a, b := storedStream(t, r, want[:h]), storedStream(t, r, want[h:])
			enc := binary.LittleEndian.AppendUint32(nil, uint32(len(a)))
			enc = append(append(enc, a...), b...)
			aux := adler32.Checksum(want)
			dst := make([]byte, len(src))
			if err := (shuffleDeflate{}).Decode(dst, enc, in, aux); err != nil || !bytes.Equal(dst, src) {
				t.Fatalf("%v n %d: stored blocks decode wrong (%v)", d, n, err)
			}
			if err := (shuffleDeflate{}).Decode(dst, enc, in, aux^1); !errs.Is(err, errs.CorruptData) {
				t.Fatalf("%v n %d: a wrong Adler-32 gives %v", d, n, err)
			}
			if n < 4099 {
				continue
			}
			for _, at := range []int{4 + len(a)/2, 4 + len(a) + len(b)/2} { // payload bytes
				enc[at] ^= 0x40
				if err := (shuffleDeflate{}).Decode(dst, enc, in, aux); !errs.Is(err, errs.CorruptData) {
					t.Fatalf("%v n %d: byte %d flipped gives %v", d, n, at, err)
				}
				enc[at] ^= 0x40
			}
		}
	}
}
