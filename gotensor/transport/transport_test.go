package transport

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"net"
	"net/url"
	"runtime/debug"
	"sync"
	"testing"
	"time"

	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/store"
)

var ctx = context.Background()

func startServer(t testing.TB, token string, capacity int64) (*Server, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := NewServer(ServerConfig{Store: store.NewMem("mem://node", capacity), Token: []byte(token)})
	go s.Serve(ln)
	t.Cleanup(func() { s.Close() })
	return s, ln.Addr().String()
}

func dial(t testing.TB, addr, query string) *Client {
	t.Helper()
	u, _ := url.Parse("tcp://" + addr + query)
	c, err := OpenURL(u)
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
		if _, err := OpenURL(u); !errs.Is(err, errs.Unauthorized) {
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
	srv.cfg.Store.Put(ctx, "secret", []byte("data"))
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	// send a GET where the hello belongs
	var hb [headerSize]byte
	(&header{op: OpGet, keyLen: 6, id: 1}).put(hb[:])
	nc.Write(append(hb[:], "secret"...))
	nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	b, _ := io.ReadAll(nc)
	if bytes.Contains(b, []byte("data")) {
		t.Fatal("data leaked without authentication")
	}
	// and a correct hello with a wrong proof gets the refusal byte only
	nc2, _ := net.Dial("tcp", addr)
	defer nc2.Close()
	var hello [8]byte
	copy(hello[:], Magic[:])
	binary.LittleEndian.PutUint16(hello[4:], Version)
	nc2.Write(hello[:])
	io.ReadFull(nc2, make([]byte, 8+nonceSize))
	nc2.Write(make([]byte, macSize))
	nc2.SetReadDeadline(time.Now().Add(5 * time.Second))
	rest, _ := io.ReadAll(nc2)
	if len(rest) != 1 || rest[0] != uint8(errs.Unauthorized)+1 {
		t.Fatalf("refusal %v", rest)
	}
}

func TestRefusesPublicAddressWithoutToken(t *testing.T) {
	if err := CheckListenAddr("0.0.0.0:7707", nil); !errs.Is(err, errs.InvalidArgument) {
		t.Fatal(err)
	}
	if err := CheckListenAddr("0.0.0.0:7707", []byte("t")); err != nil {
		t.Fatal(err)
	}
	if err := CheckListenAddr("127.0.0.1:7707", nil); err != nil {
		t.Fatal(err)
	}
}

// A malformed message closes that connection; the server keeps serving others.
func TestHostileMessageClosesOnlyItsConnection(t *testing.T) {
	_, addr := startServer(t, "", 0)
	good := dial(t, addr, "")
	good.Put(ctx, "k", []byte("v"))
	for _, bad := range []header{
		{op: 99, id: 1},                  // unknown op
		{op: OpPut, keyLen: 5000, id: 2}, // key too long
		{op: OpPut, length: longPayload, arg: 1 << 62, keyLen: 1, id: 3}, // absurd length
	} {
		nc, _ := net.Dial("tcp", addr)
		if err := clientHandshake(nc, nil, 5*time.Second); err != nil {
			t.Fatal(err)
		}
		var hb [headerSize]byte
		bad.put(hb[:])
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
	s := NewServer(ServerConfig{Store: mem})
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
	s2 := NewServer(ServerConfig{Store: mem})
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
		io.ReadFull(nc, make([]byte, 8))
		out := make([]byte, 8+nonceSize)
		copy(out, Magic[:])
		binary.LittleEndian.PutUint16(out[4:], Version)
		nc.Write(out)
		io.ReadFull(nc, make([]byte, macSize))
		nc.Write([]byte{0})
		io.Copy(io.Discard, nc)
	}()
	c := dial(t, ln.Addr().String(), "?timeout=200ms")
	if _, err := c.Get(ctx, "k"); !errs.Is(err, errs.Timeout) {
		t.Fatalf("got %v", err)
	}
}

func FuzzReadMessage(f *testing.F) {
	var buf bytes.Buffer
	writeMessage(&buf, &message{header: header{op: OpPut, id: 7}, key: "layer.0", payload: []byte("frame")})
	f.Add(buf.Bytes())
	buf.Reset()
	writeMessage(&buf, &message{header: header{op: OpHead, id: 8, arg: 4096}, key: "k"})
	f.Add(buf.Bytes())
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := readMessage(bytes.NewReader(b), 1<<20, new(budget).reserve)
		if err != nil {
			return
		}
		if len(m.key) > MaxKey || uint64(len(m.payload)) > 1<<20 {
			t.Fatalf("limits not enforced: key %d payload %d", len(m.key), len(m.payload))
		}
		var out bytes.Buffer
		if err := writeMessage(&out, m); err != nil {
			t.Fatal(err)
		}
		m2, err := readMessage(&out, 1<<20, trustAll)
		if err != nil || m2.key != m.key || !bytes.Equal(m2.payload, m.payload) || m2.id != m.id {
			t.Fatalf("re-encoding differs: %v", err)
		}
	})
}

func TestStartServesAndPersists(t *testing.T) {
	dir := t.TempDir()
	s, err := Start(ServeOptions{Listen: "127.0.0.1:0", Dir: dir, Capacity: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	c := dial(t, s.Addr(), "")
	if err := c.Put(ctx, "k", []byte("persisted")); err != nil {
		t.Fatal(err)
	}
	s.Shutdown()
	s2, err := Start(ServeOptions{Listen: "127.0.0.1:0", Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Shutdown()
	c2 := dial(t, s2.Addr(), "")
	if got, err := c2.Get(ctx, "k"); err != nil || string(got) != "persisted" {
		t.Fatalf("after restart: %q %v", got, err)
	}
	if _, err := Start(ServeOptions{Listen: "0.0.0.0:0"}); !errs.Is(err, errs.InvalidArgument) {
		t.Fatalf("public address without token: %v", err)
	}
}

func FuzzParseAMHeader(f *testing.F) {
	f.Add(amHeader(&message{header: header{op: OpPut, id: 3}, key: "layer.0"}, 5), uint64(5))
	f.Add(amHeader(&message{header: header{op: OpGetRMA, id: 4}, key: "k"}, 40), uint64(40))
	f.Add(amHeader(&message{header: header{op: OpGet}}, 1<<33), uint64(1<<33))
	f.Fuzz(func(t *testing.T, b []byte, n uint64) {
		m, err := parseAMHeader(b, n, 1<<30)
		if err != nil {
			return
		}
		if m.payloadLen() != n || n > 1<<30 || len(m.key) != int(m.keyLen) || m.op == 0 || m.op >= opMax {
			t.Fatalf("accepted an inconsistent header: %+v for %d bytes", m.header, n)
		}
		if got := amHeader(m, int(n)); !bytes.Equal(got, b) {
			t.Fatalf("re-encoding differs")
		}
		if m.op == OpPutRMA || m.op == OpGetRMA {
			parseRMADesc(b, 1<<30) // must not panic on anything
		}
	})
}

func TestCapHeap(t *testing.T) {
	old := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(old)
	debug.SetMemoryLimit(math.MaxInt64)
	t.Setenv("GOMEMLIMIT", "")
	capHeap(8 << 30)
	if got := debug.SetMemoryLimit(-1); got != 8<<30+1<<30+256<<20 {
		t.Fatalf("limit %d", got)
	}
	capHeap(1 << 30) // a smaller node never lowers a limit already set
	if got := debug.SetMemoryLimit(-1); got != 8<<30+1<<30+256<<20 {
		t.Fatalf("limit %d", got)
	}
}
