package tcp_test

import (
	"bytes"
	"net"
	"testing"
	"time"

	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/store"
	"github.com/gotensor/gotensor/gotensor/transport/remote"
	"github.com/gotensor/gotensor/gotensor/transport/serve"
	"github.com/gotensor/gotensor/gotensor/transport/tcp"
	"github.com/gotensor/gotensor/gotensor/transport/wire"
)

// startStalling serves a mem:// store of capacity whose payloads and
// streamed uploads may idle for idle at most.
func startStalling(t *testing.T, capacity int64, idle time.Duration) (string, *serve.Budget) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	m := store.NewMem("mem://node", capacity)
	b := serve.NewBudget(capacity, m)
	s := tcp.NewServer(serve.Config{Store: m, Budget: b, PayloadIdle: idle, UploadIdle: idle, Logf: t.Logf})
	go s.Serve(ln)
	t.Cleanup(func() { s.Close() })
	return ln.Addr().String(), b
}

// A client that announces a put and stops sending gives its reservation
// back once the payload has been idle for Config.PayloadIdle (it held
// the node's capacity for as long as its connection stayed open).
func TestStalledPayloadGivesItsBudgetBack(t *testing.T) {
	addr, b := startStalling(t, 8<<20, time.Second)
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if _, err := wire.ClientHandshake(nc, nil, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	var msg bytes.Buffer
	wire.WriteMessage(&msg, &wire.Message{Header: wire.Header{Op: wire.OpPut, ID: 1}, Key: "k", Payload: make([]byte, 6<<20)})
	nc.Write(msg.Bytes()[:wire.HeaderSize+1+1000]) // the header, the key and a little of the payload
	waitHeld(t, b, 6<<20)
	c := dial(t, addr, "")
	if err := c.Put(ctx, "other", make([]byte, 4<<20)); !errs.Is(err, errs.StoreFull) {
		t.Fatalf("put while the stalled payload holds the budget: %v", err)
	}
	waitHeld(t, b, 0)
	if err := c.Put(ctx, "other", make([]byte, 4<<20)); err != nil {
		t.Fatalf("put once the stalled payload gave its budget back: %v", err)
	}
}

// A streamed upload whose client stops sending parts gives its parts'
// budget back after Config.UploadIdle; its next part and its commit say
// why (Timeout), and the key can be written again.
func TestIdleStreamedUploadGivesItsBudgetBack(t *testing.T) {
	addr, b := startStalling(t, 8<<20, 500*time.Millisecond)
	c := dial(t, addr, "")
	chunk := make([]byte, 1<<20)
	for i := range 3 {
		if err := part(c, "big", int64(i)<<20, chunk); err != nil {
			t.Fatal(err)
		}
	}
	waitHeld(t, b, 3<<20)
	waitHeld(t, b, 0)
	if err := part(c, "big", 3<<20, chunk); !errs.Is(err, errs.Timeout) {
		t.Fatalf("part after the upload was dropped: %v", err)
	}
	if _, err := c.Link().Do(ctx, &wire.Message{Header: wire.Header{Op: wire.OpPutCommit}, Key: "big", Payload: []byte("hdr")}); !errs.Is(err, errs.Timeout) {
		t.Fatalf("commit after the upload was dropped: %v", err)
	}
	waitHeld(t, b, 0)
	hdr, payload := encodedFrame(t, 3<<20)
	if err := upload(c, "big", hdr, payload); err != nil {
		t.Fatalf("writing the key again: %v", err)
	}
	waitHeld(t, b, 0)
}

// A laid-out upload (put-layout) whose client stops sending gives the
// whole frame's budget back after Config.UploadIdle; its next part says
// why, and once aborted the key can be laid out and written again.
func TestIdleLaidOutUploadGivesItsBudgetBack(t *testing.T) {
	addr, b := startStalling(t, 8<<20, 500*time.Millisecond)
	c := dial(t, addr, "")
	hdr, payload := encodedFrame(t, 3<<20)
	if err := layout(c, "big", uint32(len(hdr)), uint64(len(payload))); err != nil {
		t.Fatal(err)
	}
	if err := part(c, "big", 0, payload[:1<<20]); err != nil {
		t.Fatal(err)
	}
	waitHeld(t, b, int64(len(hdr)+len(payload)))
	waitHeld(t, b, 0)
	if err := part(c, "big", 1<<20, payload[1<<20:2<<20]); !errs.Is(err, errs.Timeout) {
		t.Fatalf("part after the upload was dropped: %v", err)
	}
	if _, err := c.Link().Do(ctx, &wire.Message{Header: wire.Header{Op: wire.OpPutAbort}, Key: "big"}); err != nil {
		t.Fatal(err)
	}
	if err := layout(c, "big", uint32(len(hdr)), uint64(len(payload))); err != nil {
		t.Fatalf("laying the key out again: %v", err)
	}
	if err := upload(c, "big", hdr, payload); err != nil {
		t.Fatalf("writing the key again: %v", err)
	}
	waitHeld(t, b, 0)
	got, err := c.Get(ctx, "big")
	if err != nil || !bytes.Equal(got, append(append([]byte(nil), hdr...), payload...)) {
		t.Fatalf("read back: %v", err)
	}
}

// upload sends a frame's payload as 1 MiB parts, then its header.
func upload(c *remote.Client, key string, hdr, payload []byte) error {
	for off := 0; off < len(payload); off += 1 << 20 {
		if err := part(c, key, int64(off), payload[off:min(off+1<<20, len(payload))]); err != nil {
			return err
		}
	}
	_, err := c.Link().Do(ctx, &wire.Message{Header: wire.Header{Op: wire.OpPutCommit}, Key: key, Payload: hdr})
	return err
}
