// Package testweights finds the real trained checkpoint the tests and
// benchmarks code (stories260K.bin, llama2.c's format: a 28-byte header,
// then float32 weights) in GOTENSOR_TESTDATA or in shared/testdata beside
// the repository.
package testweights

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
)

// NormalBF16 is n bfloat16 weights drawn from N(0, 0.02^2) by a PCG seeded
// with seed1, seed2, little endian: planes codes them to ~1.5x, like
// real weights' exponent planes.
func NormalBF16(n int, seed1, seed2 uint64) []byte {
	r := rand.New(rand.NewPCG(seed1, seed2))
	b := make([]byte, 2*n)
	for i := range n {
		binary.LittleEndian.PutUint16(b[2*i:], uint16(math.Float32bits(float32(r.NormFloat64()*0.02))>>16))
	}
	return b
}

// Stories returns stories260K's float32 weights, or the error that kept
// them from being read.
func Stories() ([]float32, error) {
	raw, err := os.ReadFile(filepath.Join(dir(), "stories260K.bin"))
	if err != nil {
		return nil, err
	}
	raw = raw[min(28, len(raw)):]
	out := make([]float32, len(raw)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return out, nil
}

// dir is GOTENSOR_TESTDATA, else shared/testdata beside the repository
// (found from the working directory up to the folder holding go.mod).
func dir() string {
	if d := os.Getenv("GOTENSOR_TESTDATA"); d != "" {
		return d
	}
	wd, _ := os.Getwd()
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return filepath.Join(d, "..", "shared", "testdata")
		}
		if filepath.Dir(d) == d {
			return filepath.Join(wd, "testdata")
		}
	}
}
