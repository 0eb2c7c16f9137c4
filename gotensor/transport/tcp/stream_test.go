package tcp_test

import (
	"testing"

	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/transport/internal/transporttest"
	"github.com/gotensor/gotensor/gotensor/transport/wire"
)

func TestStreamingTCP(t *testing.T) {
	_, addr := startServer(t, "", 0)
	transporttest.CheckStreaming(t, dial(t, addr, ""), mem)
}

// A connection lost in the middle of a streamed write leaves nothing.
func TestStreamingLostConnection(t *testing.T) {
	_, addr := startServer(t, "", 0)
	c := dial(t, addr, "")
	sink, _ := c.PutStream(ctx, "k")
	sink.WritePart(0, []byte("part"))
	c.Close()
	c2 := dial(t, addr, "")
	if _, err := c2.Link().Do(ctx, &wire.Message{Header: wire.Header{Op: wire.OpPutCommit}, Key: "k", Payload: []byte("H")}); !errs.Is(err, errs.InvalidArgument) {
		t.Fatalf("commit on another connection: %v", err)
	}
	if ok, _ := mem.Has(ctx, "k"); ok {
		t.Fatal("half-streamed frame visible")
	}
}
