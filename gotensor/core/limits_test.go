package core

import (
	"testing"

	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/frame"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// A store's size limit holds for writes as for reads: a tensor it could
// not read back is refused before anything is stored, whole, staged or
// laid out for rows.
func TestWriteOverTheLimitIsRefused(t *testing.T) {
	s, _ := Open("mem://")
	defer s.Close()
	s.Limits = frame.Limits{MaxRawBytes: 1 << 20}
	meta := tensor.Meta{DType: tensor.Float32, Shape: []int64{1 << 20}} // 4 MiB
	raw := make([]byte, 4<<20)
	for _, spec := range []string{"none", "planes", "auto"} {
		if err := s.WriteTensor(ctx, "big", meta, raw, spec); !errs.Is(err, errs.InvalidArgument) {
			t.Fatalf("%s: %v", spec, err)
		}
	}
	if _, err := s.BeginWrite(ctx, "big", meta, "none"); !errs.Is(err, errs.InvalidArgument) {
		t.Fatalf("staged: %v", err)
	}
	if ok, _ := s.Exists(ctx, "big"); ok {
		t.Fatal("a refused tensor was stored")
	}
	small := tensor.Meta{DType: tensor.Float32, Shape: []int64{1 << 18}}
	if err := s.WriteTensor(ctx, "small", small, raw[:1<<20], "none"); err != nil {
		t.Fatal(err)
	}
}
