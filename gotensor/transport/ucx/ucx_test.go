//go:build ucx

package ucx_test

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gotensor/gotensor/gotensor/core"
	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/store"
	"github.com/gotensor/gotensor/gotensor/tensor"
	"github.com/gotensor/gotensor/gotensor/transport/internal/transporttest"
	"github.com/gotensor/gotensor/gotensor/transport/remote"
	"github.com/gotensor/gotensor/gotensor/transport/serve"
	"github.com/gotensor/gotensor/gotensor/transport/ucx"
	"github.com/gotensor/gotensor/gotensor/transport/wire"
)

// ucxCases are the UCX transports this machine has: TCP, and shared memory
// (sysv/posix + cma: UCX_TLS=sm,tcp, where tcp only carries the connection setup).
var ctx = context.Background()

var ucxCases = []struct{ name, tls string }{{"tcp", "tcp"}, {"sm", "sm,tcp"}}

func startUCX(t testing.TB, tls, token string, capacity int64) (*ucx.Server, *store.Mem) {
	t.Helper()
	mem := store.NewMem("mem://node", capacity)
	s, err := ucx.Listen("127.0.0.1:0", serve.Config{Store: mem, Token: []byte(token)}, ucx.ConfigFor(tls, "127.0.0.1:0"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, mem
}

func dialUCX(t testing.TB, addr, tls, query string) *remote.Client {
	t.Helper()
	c, err := openUCX(addr, tls, query)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func openUCX(addr, tls, query string) (*remote.Client, error) {
	sep := "?"
	if query != "" {
		sep = "&"
	}
	u, _ := url.Parse("ucx://" + addr + query + sep + "transports=" + url.QueryEscape(tls))
	return ucx.Open(u)
}

func eachUCX(t *testing.T, f func(t *testing.T, tls string)) {
	for _, c := range ucxCases {
		t.Run(c.name, func(t *testing.T) { f(t, c.tls) })
	}
}

func TestUCXRoundTrip(t *testing.T) {
	eachUCX(t, func(t *testing.T, tls string) {
		s, _ := startUCX(t, tls, "", 0)
		for _, rma := range []string{"", "?rma=1"} {
			c := dialUCX(t, s.Addr(), tls, rma)
			if err := c.Ping(ctx); err != nil {
				t.Fatal(err)
			}
			for _, n := range []int{1, 4 << 10, 300 << 10, 64 << 20} { // eager and rendezvous sizes
				frame := bytes.Repeat([]byte{byte(n), 7, 1}, n/3+1)[:n]
				key := fmt.Sprintf("w%s/%d", rma, n)
				if err := c.Put(ctx, key, frame); err != nil {
					t.Fatalf("put %d: %v", n, err)
				}
				got, err := c.Get(ctx, key)
				if err != nil || !bytes.Equal(got, frame) {
					t.Fatalf("get %d (%q): %v", n, rma, err)
				}
			}
			head, size, err := c.Head(ctx, "w"+rma+"/4096", 3)
			if err != nil || len(head) < 3 || size != 4096 {
				t.Fatalf("head %d %v", size, err)
			}
			ks, _ := c.List(ctx, "w"+rma+"/")
			if len(ks) != 4 {
				t.Fatalf("list %v", ks)
			}
			if err := c.Delete(ctx, "w"+rma+"/1"); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Get(ctx, "w"+rma+"/1"); !errs.Is(err, errs.KeyNotFound) {
				t.Fatalf("deleted: %v", err)
			}
		}
	})
}

func TestUCXPipelined(t *testing.T) {
	eachUCX(t, func(t *testing.T, tls string) {
		s, mem := startUCX(t, tls, "", 0)
		c := dialUCX(t, s.Addr(), tls, "")
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 40 {
					k := fmt.Sprintf("k%d-%d", g, i)
					v := bytes.Repeat([]byte{byte(g), byte(i)}, 1000+i*997)
					if err := c.Put(ctx, k, v); err != nil {
						t.Error(err)
						return
					}
					if got, err := c.Get(ctx, k); err != nil || !bytes.Equal(got, v) {
						t.Errorf("%s: %v", k, err)
						return
					}
				}
			}()
		}
		wg.Wait()
		if u := mem.Usage(); u.Keys != 320 {
			t.Fatalf("usage %+v", u)
		}
	})
}

func TestUCXTokenAndCapacity(t *testing.T) {
	eachUCX(t, func(t *testing.T, tls string) {
		s, _ := startUCX(t, tls, "s3cret", 1000)
		for _, q := range []string{"", "?token=wrong"} {
			if _, err := openUCX(s.Addr(), tls, q); !errs.Is(err, errs.Unauthorized) {
				t.Fatalf("%q: %v", q, err)
			}
		}
		c := dialUCX(t, s.Addr(), tls, "?token=s3cret")
		if err := c.Put(ctx, "a", make([]byte, 600)); err != nil {
			t.Fatal(err)
		}
		if err := c.Put(ctx, "b", make([]byte, 600)); !errs.Is(err, errs.StoreFull) {
			t.Fatalf("over capacity: %v", err)
		}
		if _, err := c.Get(ctx, "a"); err != nil {
			t.Fatal(err)
		}
	})
}

func TestServerDeathAndReconnect(t *testing.T) {
	mem := store.NewMem("mem://node", 0)
	cfg := ucx.ConfigFor("tcp", "127.0.0.1:0")
	s, err := ucx.Listen("127.0.0.1:0", serve.Config{Store: mem}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	addr := s.Addr()
	c := dialUCX(t, addr, "tcp", "?timeout=5s")
	c.Put(ctx, "before", []byte("ok"))
	s.Close()
	if _, err := c.Get(ctx, "before"); !errs.Is(err, errs.Unavailable) && !errs.Is(err, errs.Timeout) {
		t.Fatalf("dead server: %v", err)
	}
	s2, err := ucx.Listen(addr, serve.Config{Store: mem}, cfg)
	if err != nil {
		t.Skipf("address not reusable yet: %v", err)
	}
	defer s2.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, err := c.Get(ctx, "before")
		if err == nil && string(got) == "ok" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after restart: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestUCXLongKeyAndTransports(t *testing.T) {
	eachUCX(t, func(t *testing.T, tls string) {
		s, _ := startUCX(t, tls, "", 0)
		c := dialUCX(t, s.Addr(), tls, "")
		key := string(bytes.Repeat([]byte("k"), store.MaxKeyLen))
		if err := c.Put(ctx, key, []byte("v")); err != nil {
			t.Fatal(err)
		}
		if got, err := c.Get(ctx, key); err != nil || string(got) != "v" {
			t.Fatal(err)
		}
		info := ucx.EndpointInfo(c)
		want := map[string]string{"tcp": "tcp/lo", "sm,tcp": "cma/memory"}[tls]
		if !strings.Contains(info, want) {
			t.Fatalf("endpoint does not use %s:\n%s", want, info)
		}
	})
}

// A malformed message closes that client's endpoint; others are served.
func TestUCXHostileMessageClosesOnlyItsEndpoint(t *testing.T) {
	eachUCX(t, func(t *testing.T, tls string) {
		s, mem := startUCX(t, tls, "", 0)
		mem.Put(ctx, "k", []byte("v"))
		good := dialUCX(t, s.Addr(), tls, "")
		for _, bad := range [][]byte{
			{1, 2, 3}, // short header
			wire.AMHeader(&wire.Message{Header: wire.Header{Op: 99}}, 0),                       // unknown op
			wire.AMHeader(&wire.Message{Header: wire.Header{Op: wire.OpPut}, Key: "k"}, 1<<20), // length disagrees with the data
		} {
			evil := dialUCX(t, s.Addr(), tls, "?timeout=2s")
			if n := ucx.Peers(s); n != 2 {
				t.Fatalf("%d endpoints before", n)
			}
			ucx.SendRaw(evil, 2, bad, []byte("x"))
			for deadline := time.Now().Add(5 * time.Second); ucx.Peers(s) != 1; time.Sleep(5 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("endpoint still open after a hostile message %x", bad)
				}
			}
			evil.Close()
		}
		polite := dialUCX(t, s.Addr(), tls, "")
		polite.Close()
		for deadline := time.Now().Add(5 * time.Second); ucx.Peers(s) != 1; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("a closed client's endpoint stays open on the server")
			}
		}
		if got, err := good.Get(ctx, "k"); err != nil || string(got) != "v" {
			t.Fatalf("server stopped serving: %v", err)
		}
	})
}

// blockingStore never answers Get: the client's timeout must fire.
type blockingStore struct{ store.Store }

func (blockingStore) Caps() store.Caps { return store.Caps{} }

func (blockingStore) Get(c context.Context, key string) ([]byte, error) {
	time.Sleep(2 * time.Second)
	return nil, errs.New(errs.KeyNotFound, "late")
}

func TestUCXTimeoutAndMidWriteDeath(t *testing.T) {
	mem := store.NewMem("mem://node", 0)
	s, err := ucx.Listen("127.0.0.1:0", serve.Config{Store: blockingStore{mem}}, ucx.ConfigFor("tcp", "127.0.0.1:0"))
	if err != nil {
		t.Fatal(err)
	}
	c := dialUCX(t, s.Addr(), "tcp", "?timeout=300ms")
	if _, err := c.Get(ctx, "k"); !errs.Is(err, errs.Timeout) {
		t.Fatalf("got %v", err)
	}
	c2 := dialUCX(t, s.Addr(), "tcp", "?timeout=10s")
	done := make(chan error, 1)
	go func() { done <- c2.Put(ctx, "big", make([]byte, 512<<20)) }()
	time.Sleep(20 * time.Millisecond)
	s.Close()
	if err := <-done; err == nil {
		t.Log("the write finished before the server closed")
	} else if !errs.Is(err, errs.Unavailable) && !errs.Is(err, errs.Timeout) {
		t.Fatalf("got %v", err)
	} else if ok, _ := mem.Has(ctx, "big"); ok {
		t.Fatal("half-written frame visible")
	}
}

func TestLoadUCX(t *testing.T) {
	eachUCX(t, func(t *testing.T, tls string) {
		s, _ := startUCX(t, tls, "tok", 0)
		transporttest.RunLoad(t, func() (store.Store, error) { return openUCX(s.Addr(), tls, "?token=tok") }, 6)
	})
}

func TestStreamingUCX(t *testing.T) {
	eachUCX(t, func(t *testing.T, tls string) {
		s, mem := startUCX(t, tls, "", 0)
		transporttest.CheckStreaming(t, dialUCX(t, s.Addr(), tls, ""), mem)
	})
}

// headCounter counts Head calls on the node.
type headCounter struct {
	store.Store
	heads atomic.Int64
}

func (h *headCounter) Caps() store.Caps { return store.Caps{} }

func (h *headCounter) Head(c context.Context, key string, n int) ([]byte, int64, error) {
	h.heads.Add(1)
	return h.Store.Head(c, key, n)
}

// One-sided gets are sized from what the client saw of the key: no extra
// round trip, and a frame that grew is fetched again at its new size.
func TestUCXOneSidedSizing(t *testing.T) {
	hc := &headCounter{Store: store.NewMem("mem://node", 0)}
	s, err := ucx.Listen("127.0.0.1:0", serve.Config{Store: hc}, ucx.ConfigFor("sm,tcp", "127.0.0.1:0"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c := dialUCX(t, s.Addr(), "sm,tcp", "?rma=64KiB")
	if c.Caps().Streams() {
		t.Fatal("a one-sided link asks for streamed frames")
	}
	small, big := bytes.Repeat([]byte{1}, 100<<10), bytes.Repeat([]byte{2}, 300<<10)
	c.Put(ctx, "k", small)
	for _, want := range [][]byte{small, small} {
		if got, err := c.Get(ctx, "k"); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("get: %v", err)
		}
	}
	other := dialUCX(t, s.Addr(), "sm,tcp", "")
	other.Put(ctx, "k", big) // grows behind the first client's back
	if got, err := c.Get(ctx, "k"); err != nil || !bytes.Equal(got, big) {
		t.Fatalf("grown frame: %v", err)
	}
	fresh := dialUCX(t, s.Addr(), "sm,tcp", "?rma=64KiB") // never saw the key
	if got, err := fresh.Get(ctx, "k"); err != nil || !bytes.Equal(got, big) {
		t.Fatalf("unseen key: %v", err)
	}
	if n := hc.heads.Load(); n != 0 {
		t.Fatalf("%d head round trips", n)
	}
	// through core: whole frames one-sided, not pieces
	cs := core.Wrap(c)
	meta := tensor.Meta{DType: tensor.Uint8, Shape: []int64{16 << 20}}
	raw := bytes.Repeat([]byte{3, 4, 5}, 16<<20/3+1)[:16<<20]
	if err := cs.WriteTensor(ctx, "t", meta, raw, "lz4"); err != nil {
		t.Fatal(err)
	}
	dst := make([]byte, len(raw))
	if err := cs.ReadTensor(ctx, "t", meta, dst); err != nil || !bytes.Equal(dst, raw) {
		t.Fatalf("tensor: %v", err)
	}
}
