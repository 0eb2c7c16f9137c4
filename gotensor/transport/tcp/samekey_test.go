package tcp_test

import (
	"bytes"
	"sync"
	"testing"

	"github.com/gotensor/gotensor/gotensor/frame"
	"github.com/gotensor/gotensor/gotensor/store"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// streamFrame streams frame f to key through st in parts of its chunks.
func streamFrame(st store.StreamWriter, key string, f []byte) error {
	h, err := frame.ParseHeader(f, frame.DefaultLimits)
	if err != nil {
		return err
	}
	sink, err := st.PutStream(ctx, key)
	if err != nil {
		return err
	}
	at := int64(h.Size())
	for _, c := range h.Chunks {
		if err := sink.WritePart(at-int64(h.Size()), f[at:at+int64(c.EncLen)]); err != nil {
			sink.Abort()
			return err
		}
		at += int64(c.EncLen)
	}
	return sink.Commit(f[:h.Size()])
}

// Two goroutines streaming writes of one key through one client each
// succeed, and the key holds one of the frames whole: the node knows an
// upload by key and connection, so their parts used to mix ("part at N
// sent twice", "commit without parts").
func TestConcurrentStreamedWritesOfOneKey(t *testing.T) {
	_, addr := startServer(t, "", 0)
	c := dial(t, addr, "")
	checkConcurrentStreams(t, c, func() ([]byte, error) { return mem.Get(ctx, "k") })
}

// checkConcurrentStreams streams 10 frames of 4 parts from each of two
// goroutines to key k through st, then checks what get finds there.
func checkConcurrentStreams(t *testing.T, st store.StreamWriter, get func() ([]byte, error)) {
	t.Helper()
	meta := tensor.Meta{DType: tensor.Uint8, Shape: []int64{4 << 20}}
	var frames [2][]byte
	for w := range frames {
		f, err := frame.Encode(meta, bytes.Repeat([]byte{byte(w + 1)}, 4<<20), "none", frame.Options{ChunkSize: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		frames[w] = f
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failed []error
	for w := range frames {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 10 {
				if err := streamFrame(st, "k", frames[w]); err != nil {
					mu.Lock()
					failed = append(failed, err)
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if len(failed) > 0 {
		t.Fatalf("%d of 20 writes failed, first: %v", len(failed), failed[0])
	}
	got, err := get()
	if err != nil || !(bytes.Equal(got, frames[0]) || bytes.Equal(got, frames[1])) {
		t.Fatalf("the key holds neither frame whole: %v", err)
	}
}
