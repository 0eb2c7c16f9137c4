package core

import (
	"bytes"
	"sync"
	"testing"

	"github.com/gotensor/gotensor/gotensor/tensor"
)

// Reads racing writes of one key on mem:// (whose frames are recycled)
// each see one whole written value, never a mix of two or a reused buffer.
func TestMemReadsSafeWhileFramesRecycle(t *testing.T) {
	s, _ := Open("mem://")
	meta := tensor.Meta{DType: tensor.Uint8, Shape: []int64{2 << 20}}
	vals := [][]byte{bytes.Repeat([]byte{1}, 2<<20), bytes.Repeat([]byte{2}, 2<<20), bytes.Repeat([]byte{3}, 2<<20)}
	if err := s.WriteTensor(ctx, "k", meta, vals[0], "none"); err != nil {
		t.Fatal(err)
	}
	var wg, writer sync.WaitGroup
	stop := make(chan struct{})
	writer.Add(1)
	go func() {
		defer writer.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := s.WriteTensor(ctx, "k", meta, vals[i%3], []string{"none", "lz4"}[i%2]); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	for r := 0; r < 2; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dst := make([]byte, 2<<20)
			for range 100 {
				if err := s.ReadTensor(ctx, "k", meta, dst); err != nil {
					t.Error(err)
					return
				}
				if bytes.Count(dst, dst[:1]) != len(dst) {
					t.Error("a read saw a mix of values")
					return
				}
			}
		}()
	}
	for r := 0; r < 2; r++ { // and stats read headers of recycled frames
		st, err := s.Stat(ctx, "k")
		if err != nil || st.RawBytes != 2<<20 {
			t.Fatal(st, err)
		}
	}
	wg.Wait()
	close(stop)
	writer.Wait()
}
