package core_test

import (
	"context"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gotensor/gotensor/gotensor/core"
	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/internal/faultcodec"
	"github.com/gotensor/gotensor/gotensor/parallel"
	"github.com/gotensor/gotensor/gotensor/tensor"
	"github.com/gotensor/gotensor/gotensor/transport/node"
)

// nodeStore starts a memory node in this process and opens a Store on
// it; both close when tb ends.
func nodeStore(tb testing.TB) *core.Store {
	nd, err := node.Start(node.ServeOptions{Listen: "127.0.0.1:0"})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { nd.Shutdown() })
	s, err := core.Open(nd.URL())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

// A codec that panics on a large tensor streamed to and from a memory node
// fails that call with Internal; the process and the node live on.
func TestCodecPanicThroughNode(t *testing.T) {
	ctx := context.Background()
	s := nodeStore(t)
	parallel.SetWorkers(4)
	defer parallel.SetWorkers(0)
	meta := tensor.Meta{DType: tensor.BFloat16, Shape: []int64{8 << 20}} // 16 MiB: streamed
	raw := make([]byte, 16<<20)
	r := rand.New(rand.NewPCG(3, 3))
	for i := 0; i < len(raw); i += 2 {
		binary.LittleEndian.PutUint16(raw[i:], uint16(math.Float32bits(float32(r.NormFloat64()))>>16))
	}
	dst := make([]byte, len(raw))
	if err := s.WriteTensor(ctx, "p", meta, raw, faultcodec.PanicEncode); !errs.Is(err, errs.Internal) {
		t.Fatalf("encode panic: %v", err)
	}
	if err := s.WriteTensor(ctx, "p", meta, raw, faultcodec.PanicDecode); err != nil {
		t.Fatal(err)
	}
	if err := s.ReadTensor(ctx, "p", meta, dst); !errs.Is(err, errs.Internal) {
		t.Fatalf("decode panic: %v", err)
	}
	if err := s.WriteTensor(ctx, "p", meta, raw, "none"); err != nil {
		t.Fatalf("the node after the panics: %v", err)
	}
	if err := s.ReadTensor(ctx, "p", meta, dst); err != nil || string(dst) != string(raw) {
		t.Fatalf("the node after the panics: %v", err)
	}
}
