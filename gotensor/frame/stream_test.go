package frame

import (
	"bytes"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// Parts written in any order, concurrently, give the same frame as Encode.
func TestEncoderMatchesEncode(t *testing.T) {
	for _, spec := range []string{"none", "planes", "q4", "zstd"} {
		meta := tensor.Meta{DType: tensor.BFloat16, Shape: []int64{64, 5000}}
		raw := weights(meta.DType, 64*5000, 4)
		opt := Options{ChunkSize: 64 << 10}
		want, err := Encode(meta, raw, spec, opt)
		if err != nil {
			t.Fatal(err)
		}
		e, err := NewEncoder(meta, spec, opt)
		if err != nil {
			t.Fatal(err)
		}
		seg := e.ChunkSize() * 2
		var offs []int64
		for o := int64(0); o < e.RawSize(); o += seg {
			offs = append(offs, o)
		}
		rand.Shuffle(len(offs), func(i, j int) { offs[i], offs[j] = offs[j], offs[i] })
		var wg sync.WaitGroup
		for _, o := range offs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				part := bytes.Clone(raw[o:min(o+seg, e.RawSize())])
				if err := e.WriteAt(part, o); err != nil {
					t.Error(err)
				}
				clear(part) // not retained
			}()
		}
		wg.Wait()
		got, err := e.Finish()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%s: streamed frame differs from Encode", spec)
		}
		// and decodes range by range
		h, _ := ParseHeader(got, DefaultLimits)
		dst := make([]byte, len(raw))
		for o := int64(0); o < h.RawSize; o += seg {
			if err := DecodeRange(h, got, o, dst[o:min(o+seg, h.RawSize)], nil); err != nil {
				t.Fatal(err)
			}
		}
		full := make([]byte, len(raw))
		Decode(got, full, DefaultLimits)
		if !bytes.Equal(dst, full) {
			t.Fatalf("%s: ranged decode differs", spec)
		}
	}
}

func TestEncoderRefusesMisalignedAndIncomplete(t *testing.T) {
	meta := tensor.Meta{DType: tensor.Uint8, Shape: []int64{200000}}
	e, _ := NewEncoder(meta, "none", Options{ChunkSize: 64 << 10})
	raw := make([]byte, 200000)
	if err := e.WriteAt(raw[:1000], 0); !errs.Is(err, errs.InvalidArgument) {
		t.Fatalf("short part: %v", err)
	}
	if err := e.WriteAt(raw[:65536], 100); !errs.Is(err, errs.InvalidArgument) {
		t.Fatalf("misaligned: %v", err)
	}
	if err := e.WriteAt(raw[:65536], 0); err != nil {
		t.Fatal(err)
	}
	if err := e.WriteAt(raw[:65536], 0); !errs.Is(err, errs.InvalidArgument) {
		t.Fatalf("rewrite: %v", err)
	}
	if _, err := e.Finish(); !errs.Is(err, errs.InvalidArgument) {
		t.Fatalf("incomplete finish: %v", err)
	}
	if err := e.WriteAt(raw[65536:], 65536); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Finish(); err != nil {
		t.Fatal(err)
	}
}
