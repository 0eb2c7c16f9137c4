package core

import (
	"context"
	"testing"

	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

var ctx = context.Background()

func TestWriteReadStat(t *testing.T) {
	for _, url := range []string{"mem://", "file://" + t.TempDir()} {
		s, err := Open(url)
		if err != nil {
			t.Fatal(err)
		}
		meta := tensor.Meta{DType: tensor.Float32, Shape: []int64{2, 3}}
		raw := []byte("0123456789abcdefghijklmn")
		if err := s.WriteTensor(ctx, "w", meta, raw, "none"); err != nil {
			t.Fatal(err)
		}
		dst := make([]byte, len(raw))
		if err := s.ReadTensor(ctx, "w", meta, dst); err != nil || string(dst) != string(raw) {
			t.Fatalf("%s: %q %v", url, dst, err)
		}
		st, err := s.Stat(ctx, "w")
		if err != nil || st.DType != "float32" || st.RawBytes != 24 || st.StoredBytes <= 24 || st.Codec != "none" {
			t.Fatalf("%s: stat %+v %v", url, st, err)
		}
		wrong := tensor.Meta{DType: tensor.Float32, Shape: []int64{3, 2}}
		if err := s.ReadTensor(ctx, "w", wrong, dst); !errs.Is(err, errs.InvalidArgument) {
			t.Fatalf("shape mismatch: %v", err)
		}
		if err := s.WriteTensor(ctx, "w", meta, raw, "nope"); !errs.Is(err, errs.InvalidArgument) {
			t.Fatalf("bad codec: %v", err)
		}
		// A corrupted frame in the store is reported, never decoded.
		f, _ := s.Frames().Get(ctx, "w")
		bad := append([]byte(nil), f...)
		bad[len(bad)-1] ^= 0x40
		s.Frames().Put(ctx, "bad", bad)
		if err := s.ReadTensor(ctx, "bad", meta, dst); !errs.Is(err, errs.CorruptData) {
			t.Fatalf("corrupt frame: %v", err)
		}
		s.Close()
	}
}
