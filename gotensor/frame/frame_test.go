package frame

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

var ctx = context.Background()

func randBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func encodeNone(t testing.TB, meta tensor.Meta, raw []byte, chunk int) []byte {
	t.Helper()
	f, err := Encode(meta, raw, "none", Options{ChunkSize: chunk})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestRoundTripShapes(t *testing.T) {
	cases := []struct {
		meta  tensor.Meta
		chunk int
	}{
		{tensor.Meta{DType: tensor.Float32, Shape: []int64{}}, 0},                // 0-d
		{tensor.Meta{DType: tensor.BFloat16, Shape: []int64{0, 7}}, 0},           // empty
		{tensor.Meta{DType: tensor.Int64, Shape: []int64{3, 5}}, 0},              // one short chunk
		{tensor.Meta{DType: tensor.Float16, Shape: []int64{4096, 3}}, 4096},      // exact multiple
		{tensor.Meta{DType: tensor.Uint8, Shape: []int64{100003}}, MinChunkSize}, // ragged tail
		{tensor.Meta{DType: tensor.Complex128, Shape: []int64{2, 3, 4, 5}}, 0},
	}
	for _, tc := range cases {
		n, _ := tc.meta.NumBytes()
		raw := randBytes(int(n), uint64(n))
		f := encodeNone(t, tc.meta, raw, tc.chunk)
		dst := make([]byte, n)
		h, err := Decode(ctx, f, dst, DefaultLimits)
		if err != nil {
			t.Fatalf("%v: %v", tc.meta, err)
		}
		if !bytes.Equal(dst, raw) || !h.Meta.Equal(tc.meta) {
			t.Fatalf("%v: round trip mismatch", tc.meta)
		}
	}
}

func TestEncodeRejectsBadInput(t *testing.T) {
	meta := tensor.Meta{DType: tensor.Float32, Shape: []int64{4}}
	if _, err := Encode(meta, make([]byte, 15), "none", Options{}); !errs.Is(err, errs.InvalidArgument) {
		t.Fatalf("short buffer: %v", err)
	}
	if _, err := Encode(meta, make([]byte, 16), "none", Options{ChunkSize: 10}); !errs.Is(err, errs.InvalidArgument) {
		t.Fatalf("tiny chunk: %v", err)
	}
	if _, err := Encode(meta, make([]byte, 16), "planes:x", Options{}); !errs.Is(err, errs.InvalidArgument) {
		t.Fatalf("parameters to a codec without any: %v", err)
	}
	if _, err := Encode(tensor.Meta{DType: tensor.Int32, Shape: []int64{4}}, make([]byte, 16), "planes", Options{}); !errs.Is(err, errs.InvalidArgument) {
		t.Fatalf("float codec on ints: %v", err)
	}
	if _, err := Encode(tensor.Meta{DType: tensor.Float32, Shape: []int64{1 << 62, 4}}, nil, "none", Options{}); !errs.Is(err, errs.InvalidArgument) {
		t.Fatalf("overflowing shape: %v", err)
	}
}

func TestDecodeWrongDestination(t *testing.T) {
	meta := tensor.Meta{DType: tensor.Int32, Shape: []int64{10}}
	f := encodeNone(t, meta, make([]byte, 40), 0)
	if _, err := Decode(ctx, f, make([]byte, 39), DefaultLimits); !errs.Is(err, errs.InvalidArgument) {
		t.Fatalf("got %v", err)
	}
}

// Every single-bit flip anywhere in a frame must be reported as CorruptData.
func TestEveryBitFlipIsCorruptData(t *testing.T) {
	meta := tensor.Meta{DType: tensor.BFloat16, Shape: []int64{3, 1400}}
	n, _ := meta.NumBytes()
	f := encodeNone(t, meta, randBytes(int(n), 7), MinChunkSize)
	dst := make([]byte, n)
	for bit := 0; bit < len(f)*8; bit += flipStride {
		g := bytes.Clone(f)
		g[bit/8] ^= 1 << (bit % 8)
		if _, err := Decode(ctx, g, dst, DefaultLimits); !errs.Is(err, errs.CorruptData) {
			t.Fatalf("flip of bit %d (byte %d): got %v, want CorruptData", bit, bit/8, err)
		}
	}
}

func TestEveryTruncationIsCorruptData(t *testing.T) {
	meta := tensor.Meta{DType: tensor.Float32, Shape: []int64{2048}}
	f := encodeNone(t, meta, randBytes(8192, 3), MinChunkSize)
	dst := make([]byte, 8192)
	for n := 0; n < len(f); n++ {
		if _, err := Decode(ctx, f[:n], dst, DefaultLimits); !errs.Is(err, errs.CorruptData) {
			t.Fatalf("truncated to %d: got %v", n, err)
		}
	}
	if _, err := Decode(ctx, append(bytes.Clone(f), 0), dst, DefaultLimits); !errs.Is(err, errs.CorruptData) {
		t.Fatal("trailing byte accepted")
	}
}

// A well-formed header declaring a huge tensor is refused by the limit
// before anything is allocated for it.
func TestLimitRefusesHugeDeclaredTensor(t *testing.T) {
	h := &Header{Meta: tensor.Meta{DType: tensor.Float32, Shape: []int64{1 << 40}}, ChunkSize: MaxChunkSize, RawSize: 4 << 40}
	h.Chunks = nil // a lying chunk count: the limit is checked first
	b := make([]byte, h.Size())
	h.put(b)
	_, err := ParseHeader(b, Limits{MaxRawBytes: 1 << 30})
	if !errs.Is(err, errs.InvalidArgument) {
		t.Fatalf("got %v", err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 100 {
		ParseHeader(b, Limits{MaxRawBytes: 1 << 30})
	}
	runtime.ReadMemStats(&after)
	if d := after.TotalAlloc - before.TotalAlloc; d > 1<<20 {
		t.Fatalf("%d bytes allocated parsing 100 refused headers", d)
	}
}

func TestNewerVersionIsUnsupported(t *testing.T) {
	f := encodeNone(t, tensor.Meta{DType: tensor.Int8, Shape: []int64{3}}, []byte{1, 2, 3}, 0)
	f[4] = Version + 1
	n, _ := HeaderLen(f)
	binary.LittleEndian.PutUint32(f[n-4:], crc32c(f[:n-4]))
	if _, err := Decode(ctx, f, make([]byte, 3), DefaultLimits); !errs.Is(err, errs.Unsupported) {
		t.Fatalf("got %v", err)
	}
}

func FuzzDecode(f *testing.F) {
	for _, fr := range fuzzFrames() {
		f.Add(fr)
	}
	lim := Limits{MaxRawBytes: 1 << 20}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := NewReader(b, lim)
		if err != nil {
			return
		}
		dst := make([]byte, r.Header.RawSize)
		if err := r.Decode(ctx, dst, nil); err != nil && !errs.Is(err, errs.CorruptData) {
			t.Fatalf("error of kind %v: %v", errs.KindOf(err), err)
		}
	})
}

// fuzzFrames are valid frames of every codec and shape kind.
func fuzzFrames() (out [][]byte) {
	for _, spec := range []string{"none", "planes", "deflate", "shuffle-deflate", "lz4", "zstd", "q4", "q8:dim=1"} {
		for _, shape := range [][]int64{{}, {0}, {5}, {3, 3000}} {
			meta := tensor.Meta{DType: tensor.Float16, Shape: shape}
			n, _ := meta.NumBytes()
			fr, err := Encode(meta, weights(meta.DType, int(n)/2, 1), spec, Options{ChunkSize: MinChunkSize})
			if err == nil {
				out = append(out, fr)
			}
		}
	}
	return out
}

// GOTENSOR_WRITE_CORPUS=1 go test -run TestWriteFuzzCorpus ./gotensor/frame
func TestWriteFuzzCorpus(t *testing.T) {
	if os.Getenv("GOTENSOR_WRITE_CORPUS") == "" {
		t.Skip("set GOTENSOR_WRITE_CORPUS=1 to rewrite the seed corpus")
	}
	dir := filepath.Join("testdata", "fuzz", "FuzzDecode")
	os.MkdirAll(dir, 0o755)
	for i, fr := range fuzzFrames() {
		body := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", fr)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("seed-%02d", i)), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func BenchmarkEncodeNone256MiB(b *testing.B) { benchNone(b, 256<<20, true) }
func BenchmarkDecodeNone256MiB(b *testing.B) { benchNone(b, 256<<20, false) }
func BenchmarkMemcpy256MiB(b *testing.B) {
	src, dst := randBytes(256<<20, 1), make([]byte, 256<<20)
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		copy(dst, src)
	}
}

func benchNone(b *testing.B, n int, encode bool) {
	meta := tensor.Meta{DType: tensor.BFloat16, Shape: []int64{int64(n / 2)}}
	raw := randBytes(n, 1)
	f := encodeNone(b, meta, raw, 0)
	b.SetBytes(int64(n))
	for b.Loop() {
		if encode {
			encodeNone(b, meta, raw, 0)
		} else if _, err := Decode(ctx, f, raw, DefaultLimits); err != nil {
			b.Fatal(err)
		}
	}
}

// A raw chunk whose copy fails its checksum is the store's fault
// (CorruptData) only when the stored bytes fail it too; otherwise the
// destination changed under the copy (two reads into one buffer at once).
func TestRawMismatchBlamesWhatChanged(t *testing.T) {
	src := randBytes(4096, 9)
	crc := crc32c(src)
	if err := rawMismatch(src, crc, 3); !errs.Is(err, errs.InvalidArgument) {
		t.Errorf("stored bytes intact: got %v, want InvalidArgument", err)
	}
	bad := bytes.Clone(src)
	bad[100] ^= 4
	if err := rawMismatch(bad, crc, 3); !errs.Is(err, errs.CorruptData) {
		t.Errorf("stored bytes changed: got %v, want CorruptData", err)
	}
}
