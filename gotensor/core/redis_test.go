package core_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/gotensor/gotensor/gotensor/core"
	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/tensor"
	"github.com/gotensor/gotensor/gotensor/transport/redis/redistest"
)

// Every codec, auto, small and streamed tensors, concurrent writes and
// reads of one key, stats: on a Redis cluster as on any store.
func TestRedisTensors(t *testing.T) {
	redistest.Need(t)
	ctx := context.Background()
	c := redistest.StartCluster(t, 3, 0)
	s, err := core.Open("redis://" + c.Nodes[2].Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r := rand.New(rand.NewPCG(3, 4))
	for _, spec := range []string{"none", "planes", "lz4", "zstd", "shuffle-deflate", "auto"} {
		for _, rows := range []int64{3, 1000, 9000} { // up to 36 MiB: streamed, in pieces
			meta := tensor.Meta{DType: tensor.BFloat16, Shape: []int64{rows, 2048}}
			n, _ := meta.NumBytes()
			raw := make([]byte, n)
			fill(r, raw)
			key := fmt.Sprintf("%s/%d", spec, rows)
			if err := s.WriteTensor(ctx, key, meta, raw, spec); err != nil {
				t.Fatalf("%s: %v", key, err)
			}
			got := make([]byte, n)
			if err := s.ReadTensor(ctx, key, meta, got); err != nil || !bytes.Equal(got, raw) {
				t.Fatalf("%s: read back: %v", key, err)
			}
		}
	}
	if st := s.Stats(); st.WireBytesOut == 0 || st.WireBytesIn == 0 {
		t.Fatalf("stats count no wire bytes: %+v", st)
	}
	// writers and readers of one key: a reader sees one whole tensor
	meta := tensor.Meta{DType: tensor.Float32, Shape: []int64{3 << 20}}
	versions := make([][]byte, 3)
	for i := range versions {
		versions[i] = bytes.Repeat([]byte{byte(i + 1)}, 12<<20)
	}
	if err := s.WriteTensor(ctx, "shared", meta, versions[0], "none"); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for i := range 6 {
				if err := s.WriteTensor(ctx, "shared", meta, versions[(w+i)%3], []string{"none", "lz4"}[i%2]); err != nil {
					t.Error(err)
				}
			}
		}()
		go func() {
			defer wg.Done()
			got := make([]byte, 12<<20)
			for range 6 {
				if err := s.ReadTensor(ctx, "shared", meta, got); err != nil {
					t.Error(err)
					return
				}
				if got[0] == 0 || !bytes.Equal(got, bytes.Repeat(got[:1], len(got))) {
					t.Error("a read mixed two writes")
					return
				}
			}
		}()
	}
	wg.Wait()
}

// A damaged piece reads as CorruptData, never as wrong data: a flipped
// byte (the frame's checksums), a piece of the wrong length (the manifest).
func TestRedisCorruptPiece(t *testing.T) {
	redistest.Need(t)
	ctx := context.Background()
	srv := redistest.Start(t)
	s, err := core.Open("redis://" + srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	meta := tensor.Meta{DType: tensor.Float32, Shape: []int64{1 << 20}}
	raw := make([]byte, 4<<20)
	fill(rand.New(rand.NewPCG(1, 2)), raw)
	for i, damage := range [][]string{{"setrange", "KEY", "100000", "\xff\xfe\xfd"}, {"append", "KEY", "x"}} {
		if err := s.WriteTensor(ctx, "t", meta, raw, "none"); err != nil {
			t.Fatal(err)
		}
		out, err := srv.CLI("--scan", "--pattern", "gt:p:*")
		if err != nil {
			t.Fatal(err)
		}
		pieces := strings.Fields(out)
		if len(pieces) < 2 {
			t.Fatalf("a 4 MiB tensor in %d pieces", len(pieces))
		}
		args := append([]string(nil), damage...)
		args[1] = pieces[len(pieces)-1]
		if out, err := srv.CLI(args...); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		got := make([]byte, len(raw))
		if err := s.ReadTensor(ctx, "t", meta, got); !errs.Is(err, errs.CorruptData) {
			t.Fatalf("damage %d: %v, want CorruptData", i, err)
		}
	}
}
