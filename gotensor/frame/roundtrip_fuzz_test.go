package frame

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/gotensor/gotensor/gotensor/codec"
	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// FuzzRoundTrip encodes a tensor of a fuzzed dtype, shape, codec (with
// parameters) and chunk size, and decodes it: a lossless codec gives back
// the input bytes exactly, a lossy one decodes without error to the same
// size, and an encode may only fail with InvalidArgument (a codec that does
// not take the dtype or the parameter).
func FuzzRoundTrip(f *testing.F) {
	f.Add(uint8(0), uint8(1), uint16(300), uint16(7), uint8(0), uint8(64), uint8(0), []byte("seed bytes of a tensor"))
	f.Add(uint8(3), uint8(2), uint16(1000), uint16(33), uint8(1), uint8(16), uint8(1), []byte{0x3f, 0x80, 0, 0, 0xbf, 0x80})
	f.Add(uint8(9), uint8(5), uint16(70), uint16(3), uint8(4), uint8(128), uint8(2), []byte{1, 2, 3})
	dtypes := tensor.All()
	names := codec.Names()
	f.Fuzz(func(t *testing.T, dt, ci uint8, d0, d1 uint16, chunkSel, group, dim uint8, data []byte) {
		d := dtypes[int(dt)%len(dtypes)]
		name := names[int(ci)%len(names)]
		var shape []int64
		switch dim % 3 {
		case 0:
			shape = []int64{int64(d0 % 4096)}
		case 1:
			shape = []int64{int64(d0 % 512), int64(d1 % 64)}
		default:
			shape = []int64{int64(d1 % 8), int64(d0 % 64), 3}
		}
		meta := tensor.Meta{DType: d, Shape: shape}
		n, err := meta.NumBytes()
		if err != nil || n > 1<<20 {
			return
		}
		raw := make([]byte, n)
		if len(data) > 0 {
			for i := range raw {
				raw[i] = data[i%len(data)] + byte(i/len(data))
			}
		}
		spec := name
		if c, err := codec.ByName(name); err == nil && isParametric(c) {
			spec = fmt.Sprintf("%s:group=%d,dim=%d", name, 2*(int(group)%64+1), int(dim)%len(shape))
		}
		opt := Options{ChunkSize: MinChunkSize * (1 + int(chunkSel)%8)}
		fr, err := Encode(meta, raw, spec, opt)
		if err != nil {
			if !errs.Is(err, errs.InvalidArgument) {
				t.Fatalf("%s %s%v: encode failed with %v: %v", spec, d, shape, errs.KindOf(err), err)
			}
			return
		}
		dst := make([]byte, n)
		h, err := Decode(ctx, fr, dst, DefaultLimits)
		if err != nil {
			t.Fatalf("%s %s%v: decode: %v", spec, d, shape, err)
		}
		if !h.Meta.Equal(meta) {
			t.Fatalf("%s: header says %s%v, wrote %s%v", spec, h.Meta.DType, h.Meta.Shape, d, shape)
		}
		if c, err := codec.ByName(name); (err != nil || !codec.IsLossy(c)) && !bytes.Equal(dst, raw) {
			t.Fatalf("%s %s%v: lossless round trip differs", spec, d, shape)
		}
		if int64(len(fr)) > int64(h.Size())+n {
			t.Fatalf("%s: frame stores %d payload bytes for %d raw", spec, int64(len(fr))-int64(h.Size()), n)
		}
	})
}

func isParametric(c codec.Codec) bool {
	_, ok := c.(codec.Parametric)
	return ok
}
