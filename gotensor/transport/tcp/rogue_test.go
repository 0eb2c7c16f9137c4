package tcp_test

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/transport/remote"
	"github.com/gotensor/gotensor/gotensor/transport/wire"
)

// rogueNode is a listener that passes the handshake and then answers each
// request as answer says, writing to the connection itself; its closed
// channel gets a value when a connection ends from the client's side.
type rogueNode struct {
	addr    string
	accepts atomic.Int32
	closed  chan struct{}
}

func startRogue(t *testing.T, answer func(req *wire.Message, w io.Writer)) *rogueNode {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &rogueNode{addr: ln.Addr().String(), closed: make(chan struct{}, 16)}
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			r.accepts.Add(1)
			mu.Lock()
			conns = append(conns, nc)
			mu.Unlock()
			go func() {
				if wire.ServerHandshake(nc, nil, 0) != nil {
					return
				}
				rd := wire.NewReader(nc)
				for {
					m, err := rd.Read(1<<20, wire.Whole)
					if err != nil {
						if errors.Is(err, io.EOF) {
							r.closed <- struct{}{}
						}
						return
					}
					answer(m, nc)
				}
			}()
		}
	}()
	return r
}

// header writes a response header announcing a payload of n bytes.
func header(w io.Writer, h wire.Header, n uint64) {
	if n >= wire.LongPayload {
		h.Length, h.Arg = wire.LongPayload, n
	} else {
		h.Length = uint32(n)
	}
	var b [wire.HeaderSize]byte
	h.Encode(b[:])
	w.Write(b[:])
}

func allocated() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.TotalAlloc
}

// fitsOrLost says whether err is how a response that does not fit its
// request fails a call: CorruptData, or Unavailable for the connection
// it ended.
func fitsOrLost(err error) bool {
	return errs.Is(err, errs.CorruptData) || errs.Is(err, errs.Unavailable)
}

// A response announcing more payload than its request takes fails that
// call with a typed error at once, before any buffer is allocated for it,
// and ends the connection: a listener answering with 60 GiB used to kill
// the process (the client allocated it).
func TestResponseLongerThanItsRequestTakes(t *testing.T) {
	const huge = 1 << 30 // within the message limit; far beyond what these requests take
	for _, tc := range []struct {
		name   string
		call   func(c *remote.Client) error
		answer wire.Header
	}{
		{"ping", func(c *remote.Client) error {
			return c.Ping(ctx)
		}, wire.Header{Op: wire.OpPing}},
		{"get-range", func(c *remote.Client) error {
			_, _, err := c.GetRange(ctx, "k", 0, 4096)
			return err
		}, wire.Header{Op: wire.OpGetRange}},
		{"error text", func(c *remote.Client) error {
			return c.Ping(ctx)
		}, wire.Header{Op: wire.OpPing, Status: uint8(errs.Internal) + 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			node := startRogue(t, func(req *wire.Message, w io.Writer) {
				h := tc.answer
				h.ID = req.ID
				header(w, h, huge)
			})
			c := dial(t, node.addr, "?timeout=3s")
			runtime.GC()
			before := allocated()
			start := time.Now()
			err := tc.call(c)
			took, got := time.Since(start), allocated()-before
			if !fitsOrLost(err) || took > time.Second || got > 64<<20 {
				t.Fatalf("%v after %v, %d bytes allocated", err, took, got)
			}
			select {
			case <-node.closed:
			case <-time.After(2 * time.Second):
				t.Fatal("the client kept the connection")
			}
		})
	}
}

// A get, which may bring back any frame, holds memory as the bytes come,
// not as the length announced says: a 60 GiB announcement followed by 1
// MiB and the end of the connection costs about that MiB, and fails the
// call Unavailable.
func TestGetResponseMemoryFollowsItsBytes(t *testing.T) {
	node := startRogue(t, func(req *wire.Message, w io.Writer) {
		header(w, wire.Header{Op: req.Op, ID: req.ID}, 60<<30)
		w.Write(make([]byte, 1<<20))
		w.(net.Conn).Close()
	})
	c := dial(t, node.addr, "?timeout=3s")
	runtime.GC()
	before := allocated()
	_, err := c.Get(ctx, "k")
	if got := allocated() - before; !errs.Is(err, errs.Unavailable) || got > 256<<20 {
		t.Fatalf("%v, %d bytes allocated", err, got)
	}
}

// A response no request in flight awaits (an id never sent, one answered
// already) or whose op is not its request's is a protocol error: the call
// it names fails with it, and the connection ends.
func TestResponseThatAnswersNoRequest(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer func(req *wire.Message, w io.Writer)
		want   func(err error) bool
	}{
		{"unknown id", func(req *wire.Message, w io.Writer) {
			header(w, wire.Header{Op: req.Op, ID: req.ID + 1000}, 0)
		}, fitsOrLost},
		{"wrong op", func(req *wire.Message, w io.Writer) {
			header(w, wire.Header{Op: wire.OpHas, ID: req.ID, Arg: 1}, 0)
		}, func(err error) bool { return errs.Is(err, errs.CorruptData) }},
		{"answered twice", func(req *wire.Message, w io.Writer) {
			header(w, wire.Header{Op: req.Op, ID: req.ID}, 0)
			header(w, wire.Header{Op: req.Op, ID: req.ID}, 0)
		}, func(err error) bool { return err == nil }}, // the first answer is the call's
	} {
		t.Run(tc.name, func(t *testing.T) {
			node := startRogue(t, tc.answer)
			c := dial(t, node.addr, "?timeout=3s")
			start := time.Now()
			err := c.Ping(ctx)
			if took := time.Since(start); !tc.want(err) || took > time.Second {
				t.Fatalf("%v after %v", err, took)
			}
			select {
			case <-node.closed:
			case <-time.After(2 * time.Second):
				t.Fatal("the client kept the connection")
			}
		})
	}
}

// The answer to a call that gave up (its deadline passed) is dropped when
// it comes, and the connection goes on.
func TestLateAnswerIsDropped(t *testing.T) {
	var n atomic.Int32
	node := startRogue(t, func(req *wire.Message, w io.Writer) {
		if n.Add(1) == 1 {
			time.Sleep(300 * time.Millisecond)
			header(w, wire.Header{Op: req.Op, ID: req.ID}, 8)
			binary.Write(w, binary.LittleEndian, uint64(7))
			return
		}
		header(w, wire.Header{Op: req.Op, ID: req.ID, Arg: 1}, 0)
	})
	c := dial(t, node.addr, "?timeout=3s")
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if _, err := c.Get(short, "k"); !errs.Is(err, errs.Timeout) {
		t.Fatalf("first call: %v", err)
	}
	time.Sleep(300 * time.Millisecond) // the late answer has come
	if ok, err := c.Has(ctx, "k"); err != nil || !ok {
		t.Fatalf("after the late answer: %v %v", ok, err)
	}
	if a := node.accepts.Load(); a != 1 {
		t.Fatalf("%d connections", a)
	}
}

// A call's Timeout names the time that bounded it: its own deadline when
// that came before the URL's timeout= (it used to name the URL's).
func TestTimeoutNamesTheCallsDeadline(t *testing.T) {
	node := startRogue(t, func(*wire.Message, io.Writer) {}) // never answers
	c := dial(t, node.addr, "?timeout=5s")
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	err := c.Ping(short)
	if !errs.Is(err, errs.Timeout) || !strings.Contains(err.Error(), "within 300ms") {
		t.Fatalf("%v", err)
	}
	c = dial(t, node.addr, "") // the default timeout, 1m
	short, cancel = context.WithTimeout(ctx, time.Millisecond)
	defer cancel()
	if err := c.Ping(short); !errs.Is(err, errs.Timeout) || strings.Contains(err.Error(), "1m0s") {
		t.Fatalf("%v", err)
	}
}

// A range read into the caller's memory (GetRangeInto) lands there
// straight from the socket; a caller that gives up while it arrives gets
// its typed error only once nothing can write that memory any more: the
// rest of the payload, sent after the call returned, must not land in it.
func TestRangeIntoCallerMemoryStopsWhenTheCallEnds(t *testing.T) {
	const n = 1 << 20
	sent := make(chan struct{})
	node := startRogue(t, func(req *wire.Message, w io.Writer) {
		h := wire.Header{Op: wire.OpGetRange, ID: req.ID, Arg: 3 * n}
		header(w, h, n)
		w.Write(make([]byte, n/2)) // the first half, then a stall
		<-sent
		for i := 0; i < 20; i++ { // the rest, after the caller gave up
			w.Write(bytesOf(0xAB, n/2/20))
		}
	})
	c := dial(t, node.addr, "?timeout=300ms")
	dst := bytesOf(0x11, n)
	_, _, err := c.GetRangeInto(ctx, "k", 0, dst)
	close(sent)
	if !errs.Is(err, errs.Timeout) && !errs.Is(err, errs.Unavailable) {
		t.Fatalf("got %v, want Timeout or Unavailable", err)
	}
	time.Sleep(100 * time.Millisecond) // time for the rest to arrive, were anything still reading it
	for i, b := range dst[n/2:] {
		if b != 0x11 {
			t.Fatalf("byte %d of the caller's memory was written after the call returned", n/2+i)
		}
	}

	// A payload that ends soon after the caller gave up is waited for and
	// dropped: the connection goes on.
	var calls atomic.Int32
	slow := startRogue(t, func(req *wire.Message, w io.Writer) {
		if calls.Add(1) > 1 {
			header(w, wire.Header{Op: req.Op, ID: req.ID}, 0)
			return
		}
		header(w, wire.Header{Op: wire.OpGetRange, ID: req.ID, Arg: n}, n)
		w.Write(make([]byte, n/2))
		time.Sleep(150 * time.Millisecond) // past the call's deadline, within the grace
		w.Write(make([]byte, n/2))
	})
	c = dial(t, slow.addr, "?timeout=50ms")
	if _, _, err := c.GetRangeInto(ctx, "k", 0, make([]byte, n)); !errs.Is(err, errs.Timeout) {
		t.Fatalf("slow range: %v, want Timeout", err)
	}
	if err := c.Ping(ctx); err != nil || slow.accepts.Load() != 1 {
		t.Fatalf("after a payload that ended within the grace: %v, %d connections", err, slow.accepts.Load())
	}

	// A whole answer lands in dst itself, and a short one is copied there.
	full := startRogue(t, func(req *wire.Message, w io.Writer) {
		want := binary.LittleEndian.Uint64(req.Payload)
		got := min(want, 1000)
		header(w, wire.Header{Op: wire.OpGetRange, ID: req.ID, Arg: 1000}, got)
		w.Write(bytesOf(0x5A, int(got)))
	})
	c = dial(t, full.addr, "")
	for _, size := range []int{100, 4000} {
		dst := make([]byte, size)
		got, total, err := c.GetRangeInto(ctx, "k", 0, dst)
		if err != nil || got != min(size, 1000) || total != 1000 || dst[got-1] != 0x5A || got < size && dst[got] != 0 {
			t.Fatalf("range of %d: %d bytes of %d, %v", size, got, total, err)
		}
	}
}

func bytesOf(v byte, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = v
	}
	return b
}
