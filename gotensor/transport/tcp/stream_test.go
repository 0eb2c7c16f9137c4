package tcp_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/frame"
	"github.com/gotensor/gotensor/gotensor/tensor"
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

// More streamed writes at once than a connection may hold open wait their
// turn instead of failing (the node allows wire.MaxUploads per connection).
func TestStreamedWritesBeyondTheUploadLimitWait(t *testing.T) {
	_, addr := startServer(t, "", 0)
	c := dial(t, addr, "")
	n := 3 * wire.MaxUploads
	f, err := frame.Encode(tensor.Meta{DType: tensor.Uint8, Shape: []int64{4096}}, make([]byte, 4096), "none", frame.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h, err := frame.ParseHeader(f, frame.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	hdr, payload := f[:h.Size()], f[h.Size():]
	var wg sync.WaitGroup
	errc := make(chan error, n)
	start := make(chan struct{})
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			sink, err := c.PutStream(ctx, fmt.Sprint("k", i))
			if err != nil {
				errc <- err
				return
			}
			if err := sink.WritePart(0, payload); err != nil {
				errc <- err
				return
			}
			errc <- sink.Commit(hdr)
		}()
	}
	close(start)
	wg.Wait()
	close(errc)
	for err := range errc {
		if err != nil {
			t.Fatal(err)
		}
	}
	if u := mem.Usage(); u.Keys != int64(n) {
		t.Fatalf("%d of %d streamed frames stored", u.Keys, n)
	}
}
