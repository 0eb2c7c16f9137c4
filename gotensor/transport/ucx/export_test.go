//go:build ucx

package ucx

import (
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/gotensor/gotensor/gotensor/transport/remote"
)

// Peers counts the server's endpoints.
func Peers(s *Server) (n int) {
	s.w.call(func() { n = len(s.peers) })
	return n
}

// SendRaw sends an active message as it is on c's endpoint.
func SendRaw(c *remote.Client, amID uint, hdr, payload []byte) {
	l := c.Link().(*ucxLink)
	l.w.call(func() { l.w.send(l.conn.ep, amID, hdr, payload, nil) })
}

// DialUnauthenticated opens an endpoint to addr that sends its hello and
// nothing more: it never authenticates.
func DialUnauthenticated(t testing.TB, addr, tls string) *remote.Client {
	t.Helper()
	host, port, _ := net.SplitHostPort(addr)
	l := &ucxLink{addr: addr, ip: host, cfg: ConfigFor(tls, addr), opts: remote.Options{Timeout: 5 * time.Second}}
	l.port, _ = strconv.Atoi(port)
	var err error
	if l.w, err = startUCXWorker(l.cfg, l, nil); err != nil {
		t.Fatal(err)
	}
	cc, err := l.dial()
	if err != nil {
		t.Fatal(err)
	}
	select { // the server's hello: the endpoint is wired up
	case <-cc.hs:
	case <-time.After(5 * time.Second):
		t.Fatal("no server hello")
	}
	c := remote.New("ucx://"+addr, l)
	t.Cleanup(func() { c.Close() })
	return c
}

// OpsInFlight counts the operations c's worker has handed UCX and not seen
// complete (sends, receives).
func OpsInFlight(c *remote.Client) (n int) {
	l := c.Link().(*ucxLink)
	l.w.call(func() { n = len(l.w.ops) })
	return n
}

// ConnOf is c's connection now (nil when it has none): the same value
// before and after a call means the call did not end the connection.
func ConnOf(c *remote.Client) (cc any) {
	l := c.Link().(*ucxLink)
	l.w.call(func() {
		if l.conn != nil {
			cc = l.conn
		}
	})
	return cc
}

// OnFill runs f as each payload starts into a caller's memory, and makes a
// call that gives up wait grace for it before ending the connection.
func OnFill(f func(), grace time.Duration) (restore func()) {
	oldF, oldG := onFill, remote.FillGrace
	onFill, remote.FillGrace = f, grace
	return func() { onFill, remote.FillGrace = oldF, oldG }
}

// StallServer holds s's worker thread, so that s moves no data, until
// release.
func StallServer(s *Server) (release func()) {
	ch := make(chan struct{})
	s.w.run(func() { <-ch })
	var once sync.Once
	return func() { once.Do(func() { close(ch) }) }
}
