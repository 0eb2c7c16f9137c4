package tcp_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/store"
	"github.com/gotensor/gotensor/gotensor/transport/remote"
	"github.com/gotensor/gotensor/gotensor/transport/serve"
	"github.com/gotensor/gotensor/gotensor/transport/tcp"
	"github.com/gotensor/gotensor/gotensor/transport/wire"
)

var ctx = context.Background()

// mem is the store of the server startServer started last.
var mem *store.Mem

// startServer serves a fresh mem:// store (in mem) on a loopback port.
func startServer(t testing.TB, token string, capacity int64) (*tcp.Server, string) {
	t.Helper()
	mem = store.NewMem("mem://node", capacity)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := tcp.NewServer(serve.Config{Store: mem, Token: []byte(token)})
	go s.Serve(ln)
	t.Cleanup(func() { s.Close() })
	return s, ln.Addr().String()
}

func dial(t testing.TB, addr, query string) *remote.Client {
	t.Helper()
	u, _ := url.Parse("tcp://" + addr + query)
	c, err := tcp.Open(u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestRoundTripEveryOp(t *testing.T) {
	_, addr := startServer(t, "", 0)
	c := dial(t, addr, "")
	if err := c.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	frame := bytes.Repeat([]byte("frame!"), 100000)
	if err := c.Put(ctx, "layer.0/w", frame); err != nil {
		t.Fatal(err)
	}
	got, err := c.Get(ctx, "layer.0/w")
	if err != nil || !bytes.Equal(got, frame) {
		t.Fatalf("get: %v", err)
	}
	head, size, err := c.Head(ctx, "layer.0/w", 10)
	if err != nil || string(head) != "frame!fram" || size != int64(len(frame)) {
		t.Fatalf("head %q %d %v", head, size, err)
	}
	if ok, _ := c.Has(ctx, "layer.0/w"); !ok {
		t.Fatal("has")
	}
	c.Put(ctx, "layer.1/w", []byte("x"))
	ks, _ := c.List(ctx, "layer.")
	if fmt.Sprint(ks) != "[layer.0/w layer.1/w]" {
		t.Fatalf("list %v", ks)
	}
	if u := c.Usage(); u.Keys != 2 {
		t.Fatalf("usage %+v", u)
	}
	if err := c.Delete(ctx, "layer.0/w"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(ctx, "layer.0/w"); !errs.Is(err, errs.KeyNotFound) {
		t.Fatalf("get deleted: %v", err)
	}
}

func TestPipelinedConcurrentRequests(t *testing.T) {
	_, addr := startServer(t, "", 0)
	c := dial(t, addr, "")
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				k := fmt.Sprintf("k%d-%d", g, i)
				v := bytes.Repeat([]byte{byte(g), byte(i)}, 1000+i)
				if err := c.Put(ctx, k, v); err != nil {
					t.Error(err)
					return
				}
				got, err := c.Get(ctx, k)
				if err != nil || !bytes.Equal(got, v) {
					t.Errorf("%s: %v", k, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if u := c.Usage(); u.Keys != 800 {
		t.Fatalf("usage %+v", u)
	}
}

func TestCapacityIsStoreFullAndEvictsNothing(t *testing.T) {
	_, addr := startServer(t, "", 1000)
	c := dial(t, addr, "")
	c.Put(ctx, "a", make([]byte, 600))
	if err := c.Put(ctx, "b", make([]byte, 600)); !errs.Is(err, errs.StoreFull) {
		t.Fatalf("got %v", err)
	}
	if _, err := c.Get(ctx, "a"); err != nil {
		t.Fatal(err)
	}
}

func TestTokenAuthentication(t *testing.T) {
	_, addr := startServer(t, "s3cret", 0)
	for _, q := range []string{"", "?token=wrong"} {
		u, _ := url.Parse("tcp://" + addr + q)
		if _, err := tcp.Open(u); !errs.Is(err, errs.Unauthorized) {
			t.Fatalf("%q: %v", q, err)
		}
	}
	c := dial(t, addr, "?token=s3cret")
	if err := c.Put(ctx, "k", []byte("v")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOTENSOR_TOKEN", "s3cret")
	c2 := dial(t, addr, "")
	if got, err := c2.Get(ctx, "k"); err != nil || string(got) != "v" {
		t.Fatal(err)
	}
}

// An unauthenticated connection that skips the handshake cannot do anything.
func TestRequestWithoutHandshakeIsRefused(t *testing.T) {
	srv, addr := startServer(t, "s3cret", 0)
	_ = srv
	mem.Put(ctx, "secret", []byte("data"))
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	// send a GET where the hello belongs
	var hb [wire.HeaderSize]byte
	(&wire.Header{Op: wire.OpGet, KeyLen: 6, ID: 1}).Encode(hb[:])
	nc.Write(append(hb[:], "secret"...))
	nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	b, _ := io.ReadAll(nc)
	if bytes.Contains(b, []byte("data")) {
		t.Fatal("data leaked without authentication")
	}
	// and a correct hello with a wrong proof gets the refusal byte only
	nc2, _ := net.Dial("tcp", addr)
	defer nc2.Close()
	nc2.Write(wire.Hello())
	io.ReadFull(nc2, make([]byte, wire.ServerHelloSize))
	nc2.Write(make([]byte, wire.MacSize))
	nc2.SetReadDeadline(time.Now().Add(5 * time.Second))
	rest, _ := io.ReadAll(nc2)
	if len(rest) != 1 || rest[0] != uint8(errs.Unauthorized)+1 {
		t.Fatalf("refusal %v", rest)
	}
}

func TestHostileMessageClosesOnlyItsConnection(t *testing.T) {
	_, addr := startServer(t, "", 0)
	good := dial(t, addr, "")
	good.Put(ctx, "k", []byte("v"))
	for _, bad := range []wire.Header{
		{Op: 99, ID: 1},                       // unknown op
		{Op: wire.OpPut, KeyLen: 5000, ID: 2}, // key too long
		{Op: wire.OpPut, Length: wire.LongPayload, Arg: 1 << 62, KeyLen: 1, ID: 3}, // absurd length
	} {
		nc, _ := net.Dial("tcp", addr)
		if _, err := wire.ClientHandshake(nc, nil, 5*time.Second); err != nil {
			t.Fatal(err)
		}
		var hb [wire.HeaderSize]byte
		bad.Encode(hb[:])
		nc.Write(append(hb[:], 'k'))
		nc.SetReadDeadline(time.Now().Add(5 * time.Second))
		if n, _ := io.ReadAll(nc); len(n) != 0 {
			t.Fatalf("hostile message got an answer: %q", n)
		}
		nc.Close()
	}
	if got, err := good.Get(ctx, "k"); err != nil || string(got) != "v" {
		t.Fatalf("server stopped serving: %v", err)
	}
}

// A server that dies mid-write leaves the client with a clear error, the
// half-sent frame is never stored, and the client reconnects once a server
// is back on the address.
func TestServerDeathMidWriteAndReconnect(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	mem := store.NewMem("mem://node", 0)
	s := tcp.NewServer(serve.Config{Store: mem})
	go s.Serve(ln)
	c := dial(t, addr, "?timeout=5s")
	c.Put(ctx, "before", []byte("ok"))
	big := make([]byte, 256<<20)
	done := make(chan error, 1)
	go func() { done <- c.Put(ctx, "big", big) }()
	time.Sleep(30 * time.Millisecond)
	s.Close()
	err := <-done
	if err == nil {
		t.Skip("the write finished before the server closed")
	}
	if !errs.Is(err, errs.Unavailable) {
		t.Fatalf("got %v", err)
	}
	if ok, _ := mem.Has(ctx, "big"); ok {
		t.Fatal("half-written frame visible")
	}
	if _, err := c.Get(ctx, "before"); !errs.Is(err, errs.Unavailable) {
		t.Fatalf("dead server: %v", err)
	}
	ln2, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("address not reusable yet: %v", err)
	}
	s2 := tcp.NewServer(serve.Config{Store: mem})
	go s2.Serve(ln2)
	defer s2.Close()
	if got, err := c.Get(ctx, "before"); err != nil || string(got) != "ok" {
		t.Fatalf("after restart: %v", err)
	}
}

func TestTimeout(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	defer ln.Close()
	go func() { // a server that handshakes, then never answers
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		defer nc.Close()
		io.ReadFull(nc, make([]byte, wire.HelloSize))
		out, _ := wire.ServerHello(false, 0)
		nc.Write(out)
		io.ReadFull(nc, make([]byte, wire.MacSize))
		nc.Write([]byte{0})
		io.Copy(io.Discard, nc)
	}()
	c := dial(t, ln.Addr().String(), "?timeout=200ms")
	if _, err := c.Get(ctx, "k"); !errs.Is(err, errs.Timeout) {
		t.Fatalf("got %v", err)
	}
}
