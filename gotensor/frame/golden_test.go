package frame

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gotensor/gotensor/gotensor/tensor"
)

// Frames of every codec and float dtype, written by the code before the
// codecs moved into their family packages (testdata/golden): each must
// still decode to the bytes it was written from, and a lossy one to the
// same bytes it decoded to then (the .sha256 beside it).

// goldenCase is one frame of testdata/golden.
type goldenCase struct {
	spec string
	d    tensor.DType
	n    int // elements
}

func goldenCases() []goldenCase {
	var out []goldenCase
	for _, spec := range []string{"planes", "shuffle-deflate", "shuffle-deflate:streams=1", "deflate", "lz4", "zstd", "shuffle-zstd", "q4", "q8"} {
		for _, d := range []tensor.DType{tensor.BFloat16, tensor.Float16, tensor.Float32} {
			out = append(out, goldenCase{spec, d, 32 << 10})
		}
	}
	// two full 64 KiB blocks of the top plane (planes decodes them as a pair)
	for _, d := range []tensor.DType{tensor.BFloat16, tensor.Float16} {
		out = append(out, goldenCase{"planes", d, 160 << 10}, goldenCase{"shuffle-deflate", d, 160 << 10})
	}
	for _, spec := range []string{"planes", "shuffle-deflate", "shuffle-zstd"} {
		out = append(out, goldenCase{spec, tensor.Float64, 4 << 10}, goldenCase{spec, tensor.Complex64, 4 << 10})
	}
	return out
}

func (c goldenCase) name() string {
	return fmt.Sprintf("%s-%s-%d", strings.ReplaceAll(strings.ReplaceAll(c.spec, ":", "_"), "=", ""), c.d, c.n)
}

// goldenWeights is n weights of dtype d whose scale changes every 4096
// elements (a chunk of weights spans tensors of different scales).
func goldenWeights(d tensor.DType, n int) []byte {
	r := rand.New(rand.NewPCG(uint64(n), uint64(d)))
	out := make([]byte, n*d.Size())
	scale := 0.02
	for i := 0; i < n; i++ {
		if i%4096 == 0 {
			scale = 0.001 + 0.1*r.Float64()
		}
		x := float32(r.NormFloat64() * scale)
		switch d {
		case tensor.BFloat16:
			binary.LittleEndian.PutUint16(out[2*i:], uint16(math.Float32bits(x)>>16))
		case tensor.Float16:
			binary.LittleEndian.PutUint16(out[2*i:], f16(x))
		case tensor.Float32:
			binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(x))
		case tensor.Float64:
			binary.LittleEndian.PutUint64(out[8*i:], math.Float64bits(float64(x)))
		case tensor.Complex64:
			binary.LittleEndian.PutUint64(out[8*i:], uint64(math.Float32bits(x))|uint64(math.Float32bits(-x/3))<<32)
		}
	}
	return out
}

// GOTENSOR_WRITE_GOLDEN=1 go test -run TestGoldenFrames ./gotensor/frame
// writes testdata/golden: only ever from the code whose frames they keep.
func TestGoldenFrames(t *testing.T) {
	write := os.Getenv("GOTENSOR_WRITE_GOLDEN") != ""
	dir := filepath.Join("testdata", "golden")
	for _, c := range goldenCases() {
		meta := tensor.Meta{DType: c.d, Shape: []int64{int64(c.n)}}
		raw := goldenWeights(c.d, c.n)
		path := filepath.Join(dir, c.name()+".gtf")
		if write {
			f, err := Encode(meta, raw, c.spec, Options{})
			if err != nil {
				t.Fatal(c.name(), err)
			}
			if err := os.WriteFile(path, f, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		f, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		got := make([]byte, len(raw))
		if _, err := Decode(context.Background(), f, got, DefaultLimits); err != nil {
			t.Fatalf("%s: %v", c.name(), err)
		}
		sum := fmt.Sprintf("%x\n", sha256.Sum256(got))
		if strings.HasPrefix(c.spec, "q") {
			if write {
				os.WriteFile(path+".sha256", []byte(sum), 0o644)
			}
			want, err := os.ReadFile(path + ".sha256")
			if err != nil || string(want) != sum {
				t.Fatalf("%s decodes to other bytes than it did (%v)", c.name(), err)
			}
			continue
		}
		if !bytes.Equal(got, raw) {
			t.Fatalf("%s does not decode to its weights", c.name())
		}
	}
}
