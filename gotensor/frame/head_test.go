package frame

import (
	"bytes"
	"context"
	"math/rand/v2"
	"testing"

	"github.com/gotensor/gotensor/gotensor/tensor"
)

// applyPatch is a store's splice of p into frame f.
func applyPatch(f []byte, p *Patch) []byte {
	out := append(append([]byte(nil), f[:p.Off]...), p.Data...)
	out = append(out, f[p.Off+p.N:]...)
	copy(out[p.TableAt:], p.Table)
	copy(out[p.SumAt:], p.Sum[:])
	return out
}

// A Head kept across many row writes (one row, several, across chunk
// boundaries, at the end) stays the header of the frame they give: each
// patched frame parses, its header bytes and payload offsets are the
// Head's, and it is byte for byte the frame encoding the edited tensor
// whole gives, for a codec whose chunks change length and for none.
func TestHeadFollowsItsPatches(t *testing.T) {
	meta := tensor.Meta{DType: tensor.Float32, Shape: []int64{200, 32}} // 128-byte rows, 32 a chunk
	n, _ := meta.NumBytes()
	rnd := rand.New(rand.NewPCG(7, 8))
	for _, spec := range []string{"none", "zstd"} {
		raw := make([]byte, n)
		for i := range raw {
			raw[i] = byte(i >> 7)
		}
		opt := Options{ChunkSize: MinChunkSize, AlignRows: true}
		f, err := Encode(meta, raw, spec, opt)
		if err != nil {
			t.Fatal(err)
		}
		r, err := NewReader(f, DefaultLimits)
		if err != nil {
			t.Fatal(err)
		}
		h, err := NewHead(r)
		if err != nil {
			t.Fatal(err)
		}
		for k := range 60 {
			start, rows := int64(rnd.IntN(200)), int64(1+rnd.IntN(40))
			if k%5 == 0 {
				start, rows = 199, 1
			}
			rows = min(rows, 200-start)
			src := make([]byte, rows*128)
			for i := range src {
				src[i] = byte(rnd.IntN(3) * k) // compressible, of varied sizes
			}
			var rd *Reader
			if h.NeedsFrame(start*128, rows*128) {
				if rd, err = h.Reader(f); err != nil {
					t.Fatal(err)
				}
			}
			p, err := h.Patch(context.Background(), rd, start*128, src, nil)
			if err != nil {
				t.Fatal(err)
			}
			f = applyPatch(f, p)
			h.Apply(p)
			copy(raw[start*128:], src)
			want, err := Encode(meta, raw, spec, opt)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(f, want) {
				t.Fatalf("%s, write %d (rows [%d, %d)): the patched frame differs from the one encoded whole", spec, k, start, start+rows)
			}
			if !bytes.Equal(h.Bytes(), f[:len(h.Bytes())]) || h.FrameSize() != int64(len(f)) {
				t.Fatalf("%s, write %d: the Head is not the patched frame's header", spec, k)
			}
			parsed, err := ParseHeader(f, DefaultLimits)
			if err != nil {
				t.Fatal(err)
			}
			off := int64(parsed.Size())
			for i, c := range parsed.Chunks {
				if h.ChunkOff(i) != off || h.Chunks[i] != c {
					t.Fatalf("%s, write %d: chunk %d at %d (%+v), the Head says %d (%+v)", spec, k, i, off, c, h.ChunkOff(i), h.Chunks[i])
				}
				off += int64(c.EncLen)
			}
		}
	}
}

// Differential: any run of row writes through a Head gives the frame
// encoding the edited tensor whole gives.
func FuzzHeadPatch(f *testing.F) {
	f.Add(uint8(0), []byte{3, 1, 199, 1, 0, 40})
	f.Add(uint8(1), []byte{10, 30, 31, 2, 100, 100})
	f.Fuzz(func(t *testing.T, zstd uint8, writes []byte) {
		spec := []string{"none", "zstd"}[zstd%2]
		meta := tensor.Meta{DType: tensor.Float32, Shape: []int64{200, 32}}
		n, _ := meta.NumBytes()
		raw := make([]byte, n)
		opt := Options{ChunkSize: MinChunkSize, AlignRows: true}
		fr, err := Encode(meta, raw, spec, opt)
		if err != nil {
			t.Fatal(err)
		}
		r, _ := NewReader(fr, DefaultLimits)
		h, _ := NewHead(r)
		for k := 0; k+1 < len(writes) && k < 40; k += 2 {
			start := int64(writes[k]) % 200
			rows := min(int64(writes[k+1])%50, 200-start)
			src := bytes.Repeat([]byte{writes[k] ^ writes[k+1]}, int(rows*128))
			var rd *Reader
			if h.NeedsFrame(start*128, rows*128) {
				if rd, err = h.Reader(fr); err != nil {
					t.Fatal(err)
				}
			}
			p, err := h.Patch(context.Background(), rd, start*128, src, nil)
			if err != nil {
				t.Fatal(err)
			}
			fr = applyPatch(fr, p)
			h.Apply(p)
			copy(raw[start*128:], src)
		}
		want, err := Encode(meta, raw, spec, opt)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(fr, want) || !bytes.Equal(h.Bytes(), fr[:len(h.Bytes())]) || h.FrameSize() != int64(len(fr)) {
			t.Fatal("patched frame or Head differs from the frame encoded whole")
		}
	})
}
