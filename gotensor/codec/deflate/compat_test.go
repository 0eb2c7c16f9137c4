package deflate_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/gotensor/gotensor/gotensor/frame"
)

// A frame written before shuffle-deflate's layout parameter (one stream a
// chunk, codes of up to 12 bits, parameter 0; testdata, written by the
// code of that time from oneStreamWeights) decodes byte for byte.
func TestShuffleDeflateOneStreamFrame(t *testing.T) {
	f, err := os.ReadFile(filepath.Join("testdata", "shuffle-deflate-one-stream-f16.gtf"))
	if err != nil {
		t.Fatal(err)
	}
	want := oneStreamWeights()
	got := make([]byte, len(want))
	if _, err := frame.Decode(context.Background(), f, got, frame.DefaultLimits); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("decode: %v", err)
	}
}

// oneStreamWeights is 40000 float16 weights (normal, scale 0.05, cut to
// float16 by hand) from a fixed seed.
func oneStreamWeights() []byte {
	r := rand.New(rand.NewPCG(77, 78))
	n := 40000
	raw := make([]byte, 2*n)
	for i := 0; i < n; i++ {
		b := math.Float32bits(float32(r.NormFloat64() * 0.05))
		sign := uint16(b>>16) & 0x8000
		exp := int((b>>23)&0xFF) - 127 + 15
		h := sign
		if exp > 0 && exp < 31 {
			h = sign | uint16(exp)<<10 | uint16((b>>13)&0x3FF)
		}
		binary.LittleEndian.PutUint16(raw[2*i:], h)
	}
	return raw
}
