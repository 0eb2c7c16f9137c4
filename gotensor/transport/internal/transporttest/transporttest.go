// Package transporttest holds the checks every memory-node transport's tests run.
package transporttest

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gotensor/gotensor/gotensor/core"
	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/store"
	"github.com/gotensor/gotensor/gotensor/tensor"
	"github.com/gotensor/gotensor/gotensor/transport/remote"
	"github.com/gotensor/gotensor/gotensor/transport/wire"
)

var ctx = context.Background()

// loadDuration bounds each load test (GOTENSOR_LOAD_SECONDS lengthens it).
func loadDuration() time.Duration {
	if s := os.Getenv("GOTENSOR_LOAD_SECONDS"); s != "" {
		if d, err := time.ParseDuration(s + "s"); err == nil {
			return d
		}
	}
	return 1500 * time.Millisecond
}

// RunLoad drives one server with a bounded number of clients for a bounded
// time: each client owns keys it writes, reads back and deletes (checking
// every byte), and all of them read a shared set of keys.
func RunLoad(t *testing.T, open func() (store.Store, error), clients int) {
	shared := map[string][]byte{}
	seed, err := open()
	if err != nil {
		t.Fatal(err)
	}
	defer seed.Close()
	for i := range 8 {
		k := fmt.Sprintf("shared/%d", i)
		shared[k] = bytes.Repeat([]byte{byte(i)}, 64<<10+i)
		if err := seed.Put(ctx, k, shared[k]); err != nil {
			t.Fatal(err)
		}
	}
	stop := time.Now().Add(loadDuration())
	var ops atomic.Int64
	var wg sync.WaitGroup
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, err := open()
			if err != nil {
				t.Error(err)
				return
			}
			defer st.Close()
			rng := rand.New(rand.NewPCG(uint64(c), 1))
			for i := 0; time.Now().Before(stop); i++ {
				k := fmt.Sprintf("c%d/%d", c, i%16)
				v := make([]byte, 1+rng.IntN(1<<20))
				for j := range v {
					v[j] = byte(i + j*c)
				}
				if err := st.Put(ctx, k, v); err != nil {
					t.Errorf("put %s: %v", k, err)
					return
				}
				got, err := st.Get(ctx, k)
				if err != nil || !bytes.Equal(got, v) {
					t.Errorf("get %s: %v", k, err)
					return
				}
				sk := fmt.Sprintf("shared/%d", rng.IntN(8))
				if got, err := st.Get(ctx, sk); err != nil || !bytes.Equal(got, shared[sk]) {
					t.Errorf("get %s: %v", sk, err)
					return
				}
				if i%5 == 4 {
					if err := st.Delete(ctx, k); err != nil {
						t.Errorf("delete %s: %v", k, err)
						return
					}
				}
				ops.Add(3)
			}
		}()
	}
	wg.Wait()
	if ops.Load() < int64(clients) {
		t.Fatalf("only %d operations ran", ops.Load())
	}
	t.Logf("%d clients, %d operations in %v", clients, ops.Load(), loadDuration())
}

// CheckStreaming moves a tensor that streams (8 pieces) through c and
// checks what the server accepts from a streamed write.
func CheckStreaming(t *testing.T, c *remote.Client, mem *store.Mem) {
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
	if _, err := c.Link().Do(ctx, &wire.Message{Header: wire.Header{Op: wire.OpPutCommit}, Key: "never", Payload: []byte("H")}); !errs.Is(err, errs.InvalidArgument) {
		t.Fatalf("commit without parts: %v", err)
	}
	if _, err := c.Link().Do(ctx, &wire.Message{Header: wire.Header{Op: wire.OpPutPart, Arg: 1 << 62}, Key: "far", Payload: []byte("x")}); !errs.Is(err, errs.InvalidArgument) {
		t.Fatalf("part beyond the limit: %v", err)
	}
	sink, _ = c.PutStream(ctx, "aborted")
	sink.WritePart(0, []byte("abc"))
	sink.Abort()
	if _, err := c.Link().Do(ctx, &wire.Message{Header: wire.Header{Op: wire.OpPutCommit}, Key: "aborted", Payload: []byte("H")}); !errs.Is(err, errs.InvalidArgument) {
		t.Fatalf("commit after abort: %v", err)
	}
}
