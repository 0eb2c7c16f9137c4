package core_test

import (
	"bytes"
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

// startNodes starts n memory nodes in this process, stopped when tb ends,
// and returns their host:port addresses.
func startNodes(tb testing.TB, n int) []string {
	var hosts []string
	for range n {
		nd, err := node.Start(node.ServeOptions{Listen: "127.0.0.1:0"})
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { nd.Shutdown() })
		hosts = append(hosts, nd.Addr())
	}
	return hosts
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

// Over nodes sharded by key, a codec-none tensor's pieces are read straight
// into the destination from whichever node holds the key, and a corrupt
// piece is still CorruptData, never wrong data; coded pieces are decoded
// from ranges the store recycles.
func TestShardedNodesReadIntoTheDestination(t *testing.T) {
	hosts := startNodes(t, 2)
	s, err := core.Open("tcp://" + hosts[0] + "," + hosts[1])
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Frames().Caps().RangesInto == nil {
		t.Fatal("a sharded tcp store does not read ranges into the destination")
	}
	if s.Frames().Caps().Recycler == nil {
		t.Fatal("a sharded tcp store does not give the ranges of coded frames back to their pool")
	}
	ctx := context.Background()
	n := int64(12 << 20)
	meta := tensor.Meta{DType: tensor.Uint8, Shape: []int64{n}}
	raw := make([]byte, n)
	for i := range raw {
		raw[i] = byte(i*7 + i>>12)
	}
	for _, key := range []string{"a", "b", "c", "d"} { // both nodes hold some
		if err := s.WriteTensor(ctx, key, meta, raw, "none"); err != nil {
			t.Fatal(err)
		}
		got := make([]byte, n)
		if err := s.ReadTensor(ctx, key, meta, got); err != nil || !bytes.Equal(got, raw) {
			t.Fatalf("%s: %v", key, err)
		}
		f, err := s.Frames().Get(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		f[len(f)-100] ^= 0x10 // in the last piece, fetched after the first
		if err := s.Frames().Put(ctx, key, f); err != nil {
			t.Fatal(err)
		}
		if err := s.ReadTensor(ctx, key, meta, got); !errs.Is(err, errs.CorruptData) {
			t.Fatalf("%s corrupt: %v, want CorruptData", key, err)
		}
	}
	for _, c := range []string{"deflate", "lz4"} { // coded: pieces decoded from recycled ranges, twice over
		for range 2 {
			if err := s.WriteTensor(ctx, "coded", meta, raw, c); err != nil {
				t.Fatal(err)
			}
			got := make([]byte, n)
			if err := s.ReadTensor(ctx, "coded", meta, got); err != nil || !bytes.Equal(got, raw) {
				t.Fatalf("%s: %v", c, err)
			}
		}
	}
}
