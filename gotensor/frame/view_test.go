package frame

import (
	"testing"

	"github.com/gotensor/gotensor/gotensor/codec"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// A codec-none frame of an 8- or 16-byte dtype has a chunk count that puts
// its payload on a multiple of the element size, where one is near the
// default chunk size; the tensor reads back alike.
func TestNoneFramesAlignTheirPayload(t *testing.T) {
	none, _ := codec.ByName("none")
	for _, tc := range []struct {
		dtype tensor.DType
		shape []int64
	}{
		{tensor.Float64, []int64{4096, 64}}, {tensor.Float64, []int64{4096 + 64, 64}}, {tensor.Int64, []int64{1 << 20}},
		{tensor.Complex128, []int64{3000, 100}}, {tensor.Complex128, []int64{777, 3, 100}},
		{tensor.Complex64, []int64{1 << 19}},
	} {
		meta := tensor.Meta{DType: tc.dtype, Shape: tc.shape}
		raw := make([]byte, must(meta.NumBytes()))
		for i := range raw {
			raw[i] = byte(i * 31)
		}
		f, err := Encode(meta, raw, none.Name(), Options{AlignRows: true})
		if err != nil {
			t.Fatal(err)
		}
		r, err := NewReader(f, DefaultLimits)
		if err != nil {
			t.Fatal(err)
		}
		if hs := r.Header.Size(); hs%min(tc.dtype.Size(), 16) != 0 {
			t.Errorf("%s%v: a %d-byte header (%d chunks of %d)", tc.dtype, tc.shape, hs, len(r.Header.Chunks), r.Header.ChunkSize)
		}
		if p := r.RawPayload(); string(p) != string(raw) {
			t.Errorf("%s%v: the payload is not the tensor", tc.dtype, tc.shape)
		}
		if row := RowBytes(meta); len(tc.shape) >= 2 && row <= int64(r.Header.ChunkSize) && int64(r.Header.ChunkSize)%row != 0 {
			t.Errorf("%s%v: chunks of %d bytes are not whole %d-byte rows", tc.dtype, tc.shape, r.Header.ChunkSize, row)
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
