package codec_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/gotensor/gotensor/gotensor/codec"
	_ "github.com/gotensor/gotensor/gotensor/codec/all"
	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/internal/testweights"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// idMax is the highest codec id.
const idMax = codec.IDShuffleZstd

var fuzzDTypes = []tensor.DType{tensor.BFloat16, tensor.Float16, tensor.Float32, tensor.Float8E4M3FN, tensor.Float64, tensor.Int32}

// fuzzSeeds are valid encodings of every codec, the starting points the
// fuzzer mutates (also written to testdata/fuzz by TestWriteFuzzCorpus).
type fuzzSeed struct {
	id, dtype uint8
	n         uint16
	aux       uint32
	src       []byte
}

func fuzzSeeds() (seeds []fuzzSeed) {
	for id := codec.IDNone; id <= idMax; id++ {
		c, _ := codec.ByID(id)
		for di, d := range fuzzDTypes {
			if !c.Supports(d) {
				continue
			}
			n := 96
			meta := tensor.Meta{DType: d, Shape: []int64{int64(n)}}
			in := codec.Info{Meta: meta}
			if p, ok := c.(codec.Parametric); ok {
				in.Param = p.DefaultParam()
			}
			raw := []byte(fmt.Sprintf("%0*d", n*d.Size(), 12345))
			enc, aux, err := c.Encode(nil, raw, in)
			if err != nil {
				panic(err)
			}
			seeds = append(seeds, fuzzSeed{uint8(id), uint8(di), uint16(n), aux, enc})
		}
	}
	// float16 weights, which planes codes in its split layout (the top
	// plane's low bits apart): digits never take it
	const n = 1024
	w := make([]float32, n)
	r := rand.New(rand.NewPCG(9, 9))
	for i := range w {
		w[i] = float32(r.NormFloat64() * 0.02)
	}
	meta := tensor.Meta{DType: tensor.Float16, Shape: []int64{n}}
	c, _ := codec.ByID(codec.IDPlanes)
	enc, aux, err := c.Encode(nil, testweights.As(w, tensor.Float16), codec.Info{Meta: meta})
	if err != nil {
		panic(err)
	}
	return append(seeds, fuzzSeed{uint8(codec.IDPlanes), 1, n, aux, enc})
}

// FuzzDecoders feeds arbitrary bytes to every decoder: each must return
// nil or a CorruptData error, never panic or write outside dst.
func FuzzDecoders(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(s.id, s.dtype, s.n, s.aux, s.src)
	}
	f.Fuzz(func(t *testing.T, id, di uint8, n uint16, aux uint32, src []byte) {
		c, err := codec.ByID(codec.ID(id % (uint8(idMax) + 1)))
		if err != nil {
			return
		}
		d := fuzzDTypes[int(di)%len(fuzzDTypes)]
		if !c.Supports(d) || n == 0 {
			return
		}
		in := codec.Info{Meta: tensor.Meta{DType: d, Shape: []int64{int64(n)}}}
		if p, ok := c.(codec.Parametric); ok {
			in.Param = p.DefaultParam()
		}
		dst := make([]byte, int(n)*d.Size()+8)
		guard := dst[len(dst)-8:]
		copy(guard, "GUARDING")
		if err := c.Decode(dst[:len(dst)-8:len(dst)-8], src, in, aux); err != nil && !errs.Is(err, errs.CorruptData) {
			t.Fatalf("%s: error of kind %v: %v", c.Name(), errs.KindOf(err), err)
		}
		if string(guard) != "GUARDING" {
			t.Fatalf("%s wrote past its destination", c.Name())
		}
	})
}

// GOTENSOR_WRITE_CORPUS=1 go test -run TestWriteFuzzCorpus ./gotensor/codec
// refreshes testdata/fuzz/FuzzDecoders from fuzzSeeds.
func TestWriteFuzzCorpus(t *testing.T) {
	if os.Getenv("GOTENSOR_WRITE_CORPUS") == "" {
		t.Skip("set GOTENSOR_WRITE_CORPUS=1 to rewrite the seed corpus")
	}
	dir := filepath.Join("testdata", "fuzz", "FuzzDecoders")
	os.MkdirAll(dir, 0o755)
	for i, s := range fuzzSeeds() {
		body := fmt.Sprintf("go test fuzz v1\nuint8(%d)\nuint8(%d)\nuint16(%d)\nuint32(%d)\n[]byte(%q)\n", s.id, s.dtype, s.n, s.aux, s.src)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("seed-%02d", i)), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
