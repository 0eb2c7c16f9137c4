package tcp_test

import (
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/store"
	"github.com/gotensor/gotensor/gotensor/transport/serve"
	"github.com/gotensor/gotensor/gotensor/transport/tcp"
	"github.com/gotensor/gotensor/gotensor/transport/wire"
)

// lines collects what a server logs.
type lines struct {
	mu sync.Mutex
	l  []string
}

func (l *lines) logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.l = append(l.l, fmt.Sprintf(format, args...))
}

func (l *lines) with(s string) (n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range l.l {
		if strings.Contains(line, s) {
			n++
		}
	}
	return n
}

type refusals struct{ n atomic.Int64 }

func (*refusals) Served(wire.Op, uint8, int, int, time.Duration) {}
func (r *refusals) Refused()                                     { r.n.Add(1) }

// A peer with a wrong token cannot flood the node's log: refused
// handshakes are logged at most once a second (each one was a line).
func TestRefusedHandshakesLogRateLimited(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var log lines
	var seen refusals
	s := tcp.NewServer(serve.Config{Store: store.NewMem("mem://node", 0), Token: []byte("s3cret"), Logf: log.logf, Observer: &seen})
	go s.Serve(ln)
	defer s.Close()
	const tries = 20
	start := time.Now()
	for range tries {
		u, _ := url.Parse("tcp://" + ln.Addr().String() + "?token=wrong")
		if _, err := tcp.Open(u); !errs.Is(err, errs.Unauthorized) {
			t.Fatal(err)
		}
	}
	for deadline := time.Now().Add(5 * time.Second); seen.n.Load() < tries; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d refusals counted, want %d", seen.n.Load(), tries)
		}
	}
	took := time.Since(start)
	most := 1 + int(took/time.Second) // one a second (serve.RefusedLogEvery)
	if n := log.with("handshake"); n == 0 || n > most {
		t.Fatalf("%d refused handshakes in %v logged %d lines, want 1 to %d", tries, took, n, most)
	}
}
