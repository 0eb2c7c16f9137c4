package transport

import (
	"bytes"
	"testing"

	"github.com/gotensor/gotensor/gotensor/core"
	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/store"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// checkStreaming moves a tensor that streams (8 pieces) through c and
// checks what the server accepts from a streamed write.
func checkStreaming(t *testing.T, c *Client, mem *store.Mem) {
	defer func(m, p int64) { core.StreamMin, core.StreamPiece = m, p }(core.StreamMin, core.StreamPiece)
	core.StreamMin, core.StreamPiece = 1<<20, 512<<10
	s := core.Wrap(c)
	meta := tensor.Meta{DType: tensor.Float32, Shape: []int64{1 << 20}}
	raw := make([]byte, 4<<20)
	for i := range raw {
		raw[i] = byte(i * 31 / 7)
	}
	for _, codec := range []string{"none", "lz4", "planes"} {
		if err := s.WriteTensor(ctx, "big", meta, raw, codec); err != nil {
			t.Fatal(err)
		}
		dst := make([]byte, len(raw))
		if err := s.ReadTensor(ctx, "big", meta, dst); err != nil || !bytes.Equal(dst, raw) {
			t.Fatalf("%s: %v", codec, err)
		}
	}
	// the server stores nothing until a commit that tiles the payload
	sink, _ := c.PutStream(ctx, "partial")
	sink.WritePart(0, []byte("abc"))
	sink.WritePart(10, []byte("def"))
	if err := sink.Commit([]byte("H")); !errs.Is(err, errs.CorruptData) {
		t.Fatalf("gap: %v", err)
	}
	if ok, _ := mem.Has(ctx, "partial"); ok {
		t.Fatal("a frame with a gap was stored")
	}
	if _, err := c.link.do(ctx, &message{header: header{op: OpPutCommit}, key: "never", payload: []byte("H")}); !errs.Is(err, errs.InvalidArgument) {
		t.Fatalf("commit without parts: %v", err)
	}
	if _, err := c.link.do(ctx, &message{header: header{op: OpPutPart, arg: 1 << 62}, key: "far", payload: []byte("x")}); !errs.Is(err, errs.InvalidArgument) {
		t.Fatalf("part beyond the limit: %v", err)
	}
	sink, _ = c.PutStream(ctx, "aborted")
	sink.WritePart(0, []byte("abc"))
	sink.Abort()
	if err := (&partSink{c: c, ctx: ctx, key: "aborted", sem: make(chan struct{}, 1)}).Commit([]byte("H")); !errs.Is(err, errs.InvalidArgument) {
		t.Fatalf("commit after abort: %v", err)
	}
}

func TestStreamingTCP(t *testing.T) {
	s, addr := startServer(t, "", 0)
	checkStreaming(t, dial(t, addr, ""), s.cfg.Store.(*store.Mem))
}

// A connection lost in the middle of a streamed write leaves nothing.
func TestStreamingLostConnection(t *testing.T) {
	s, addr := startServer(t, "", 0)
	c := dial(t, addr, "")
	sink, _ := c.PutStream(ctx, "k")
	sink.WritePart(0, []byte("part"))
	c.Close()
	c2 := dial(t, addr, "")
	if _, err := c2.link.do(ctx, &message{header: header{op: OpPutCommit}, key: "k", payload: []byte("H")}); !errs.Is(err, errs.InvalidArgument) {
		t.Fatalf("commit on another connection: %v", err)
	}
	if ok, _ := s.cfg.Store.Has(ctx, "k"); ok {
		t.Fatal("half-streamed frame visible")
	}
}
