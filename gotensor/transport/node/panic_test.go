package node_test

import (
	"context"
	"testing"

	"github.com/gotensor/gotensor/gotensor/codec"
	"github.com/gotensor/gotensor/gotensor/core"
	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/tensor"
	"github.com/gotensor/gotensor/gotensor/transport/node"
)

var ctx = context.Background()

// panicCodec panics encoding (encode) or decoding (!encode); it stands in
// for gotensor/internal/faultcodec until that is on main. The ids are
// unused by real codecs.
type panicCodec struct{ encode bool }

func (p panicCodec) ID() codec.ID {
	if p.encode {
		return 240
	}
	return 241
}
func (p panicCodec) Name() string {
	if p.encode {
		return "test-panic-encode"
	}
	return "test-panic-decode"
}
func (panicCodec) Supports(tensor.DType) bool { return true }
func (p panicCodec) Encode(dst, src []byte, _ codec.Info) ([]byte, uint32, error) {
	if p.encode {
		panic("codec bug (encode)")
	}
	return append(dst[:0], src[:len(src)/2]...), 0, nil // smaller: kept encoded
}
func (p panicCodec) Decode(dst, src []byte, _ codec.Info, _ uint32) error {
	panic("codec bug (decode)")
}

func init() {
	codec.Register(panicCodec{encode: true})
	codec.Register(panicCodec{encode: false})
}

// A codec that panics on a large streamed tensor written to and read from a
// node is that call's Internal error; the process and the node live on.
func TestPanickingCodecThroughANode(t *testing.T) {
	n, err := node.Start(node.ServeOptions{Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Shutdown()
	s, err := core.Open(n.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	raw := make([]byte, 64<<20)
	meta := tensor.Meta{DType: tensor.Uint8, Shape: []int64{int64(len(raw))}}
	if err := s.WriteTensor(ctx, "enc", meta, raw, "test-panic-encode"); !errs.Is(err, errs.Internal) {
		t.Fatalf("write: %v", err)
	}
	if err := s.WriteTensor(ctx, "dec", meta, raw, "test-panic-decode"); err != nil {
		t.Fatal(err)
	}
	if err := s.ReadTensor(ctx, "dec", meta, make([]byte, len(raw))); !errs.Is(err, errs.Internal) {
		t.Fatalf("read: %v", err)
	}
	if err := s.WriteTensor(ctx, "ok", meta, raw, "none"); err != nil {
		t.Fatalf("after the panics: %v", err)
	}
}
