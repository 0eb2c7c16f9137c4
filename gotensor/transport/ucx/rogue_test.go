//go:build ucx

package ucx_test

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/frame"
	"github.com/gotensor/gotensor/gotensor/store"
	"github.com/gotensor/gotensor/gotensor/tensor"
	"github.com/gotensor/gotensor/gotensor/transport/serve"
	"github.com/gotensor/gotensor/gotensor/transport/ucx"
	"github.com/gotensor/gotensor/gotensor/transport/wire"
)

// stallingStore holds every has until the test ends, so that the test
// answers it in the node's place; entered gets a value for each.
type stallingStore struct {
	store.Store
	entered chan struct{}
	release chan struct{}
}

// Caps: none, so the node serves it off its worker thread.
func (s *stallingStore) Caps() store.Caps { return store.Caps{} }

func (s *stallingStore) Has(ctx context.Context, key string) (bool, error) {
	s.entered <- struct{}{}
	<-s.release
	return s.Store.Has(ctx, key)
}

// startStalling serves a stallingStore and opens a client on it whose
// first request (id 1) is a has the node does not answer.
func startStalling(t *testing.T, tls, query string) (*ucx.Server, *stallingStore, chan error) {
	t.Helper()
	st := &stallingStore{Store: store.NewMem("mem://node", 0), entered: make(chan struct{}, 4), release: make(chan struct{})}
	s, err := ucx.Listen("127.0.0.1:0", serve.Config{Store: st}, ucx.ConfigFor(tls, "127.0.0.1:0"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	t.Cleanup(func() { close(st.release) }) // before the node closes
	c := dialUCX(t, s.Addr(), tls, query)
	done := make(chan error, 1)
	go func() { _, err := c.Has(ctx, "k"); done <- err }()
	select {
	case <-st.entered:
	case <-time.After(5 * time.Second):
		t.Fatal("the has did not reach the store")
	}
	return s, st, done
}

// A response that does not fit its request (more payload than it takes,
// another op, an id never sent) fails the call with a typed error at once,
// with nothing allocated for its payload, and ends the connection.
func TestUCXResponseMustFitItsRequest(t *testing.T) {
	big := make([]byte, 64<<20) // a rendezvous: the client must not allocate it
	for _, tc := range []struct {
		name    string
		answer  wire.Header
		payload []byte
		want    errs.Kind
	}{
		{"longer", wire.Header{Op: wire.OpHas, ID: 1}, big, errs.CorruptData},
		{"wrong op", wire.Header{Op: wire.OpGet, ID: 1}, nil, errs.CorruptData},
		{"unknown id", wire.Header{Op: wire.OpHas, ID: 1000}, nil, errs.Unavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eachUCX(t, func(t *testing.T, tls string) {
				s, _, done := startStalling(t, tls, "?timeout=3s")
				before := allocated()
				ucx.SendToPeers(s, 2, wire.AMHeader(&wire.Message{Header: tc.answer}, len(tc.payload)), tc.payload)
				select {
				case err := <-done:
					if got := allocated() - before; !errs.Is(err, tc.want) || got > 16<<20 {
						t.Fatalf("%v, %d bytes allocated", err, got)
					}
				case <-time.After(2 * time.Second):
					t.Fatal("the call still waits")
				}
			})
		})
	}
}

// A frame larger than this machine's memory fails its get Unavailable
// before any of it is allocated (allocating it would end the process), and
// the connection goes on.
func TestUCXResponseBeyondMemoryFailsItsCall(t *testing.T) {
	s, mem := startUCX(t, "tcp", "", 0)
	c := dialUCX(t, s.Addr(), "tcp", "")
	if err := mem.Put(ctx, "k", make([]byte, 8<<20)); err != nil {
		t.Fatal(err)
	}
	restore := ucx.SetMemTotal(c, 4<<20)
	before := allocated()
	_, err := c.Get(ctx, "k")
	got := allocated() - before
	restore()
	if !errs.Is(err, errs.Unavailable) || !strings.Contains(err.Error(), "memory") || got > 4<<20 {
		t.Fatalf("%v, %d bytes allocated", err, got)
	}
	if b, err := c.Get(ctx, "k"); err != nil || len(b) != 8<<20 || ucx.Peers(s) != 1 {
		t.Fatalf("after: %v", err)
	}
}

// A call's Timeout names its own deadline when that came before the URL's
// timeout= (it named neither).
func TestUCXTimeoutNamesTheCallsDeadline(t *testing.T) {
	s, _, _ := startStalling(t, "tcp", "?timeout=5s")
	c := dialUCX(t, s.Addr(), "tcp", "?timeout=5s")
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if _, err := c.Has(short, "k"); !errs.Is(err, errs.Timeout) || !strings.Contains(err.Error(), "within 300ms") {
		t.Fatalf("%v", err)
	}
}

// Two goroutines streaming writes of one key through one client each
// succeed, and the key holds one of the frames whole (the node knows an
// upload by key and endpoint: their parts used to mix).
func TestUCXConcurrentStreamedWritesOfOneKey(t *testing.T) {
	s, mem := startUCX(t, "tcp", "", 0)
	c := dialUCX(t, s.Addr(), "tcp", "")
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
	errc := make(chan error, 20)
	for w := range frames {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 10 {
				errc <- streamFrame(c, "k", frames[w])
			}
		}()
	}
	wg.Wait()
	close(errc)
	failed := 0
	var first error
	for err := range errc {
		if err != nil {
			if failed++; first == nil {
				first = err
			}
		}
	}
	if failed > 0 {
		t.Fatalf("%d of 20 writes failed, first: %v", failed, first)
	}
	if got, err := mem.Get(ctx, "k"); err != nil || !(bytes.Equal(got, frames[0]) || bytes.Equal(got, frames[1])) {
		t.Fatalf("the key holds neither frame whole: %v", err)
	}
}

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
