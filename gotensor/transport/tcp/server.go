package tcp

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"time"

	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/transport/serve"
	"github.com/gotensor/gotensor/gotensor/transport/wire"
)

// Server serves a store to clients.
type Server struct {
	cfg    serve.Config
	mu     sync.Mutex
	ln     net.Listener
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// NewServer returns a server for cfg.
func NewServer(cfg serve.Config) *Server {
	return &Server{cfg: cfg.WithDefaults(), conns: map[net.Conn]struct{}{}}
}

// Serve accepts connections on ln until Close.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		ln.Close()
		return errs.New(errs.Closed, "server closed")
	}
	s.ln = ln
	s.mu.Unlock()
	for {
		c, err := ln.Accept()
		if err != nil {
			s.mu.Lock()
			closed := s.closed
			s.mu.Unlock()
			if closed {
				return nil
			}
			return err
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			c.Close()
			return nil
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go s.serveConn(c)
	}
}

// Addr is the listening address.
func (s *Server) Addr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln == nil {
		return nil
	}
	return s.ln.Addr()
}

// Close stops the server and closes every connection.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	if s.ln != nil {
		s.ln.Close()
	}
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	return nil
}

// inlineMax is the largest answer the reading goroutine writes itself.
const inlineMax = 256 << 10

func (s *Server) serveConn(c net.Conn) {
	ups := serve.NewUploads(s.cfg)
	var inflight sync.WaitGroup
	defer func() {
		if r := recover(); r != nil {
			s.cfg.Logf("gotensor serve: %s: closing after a panic: %v", c.RemoteAddr(), r)
		}
		c.Close()
		inflight.Wait()
		ups.Close()
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
		s.wg.Done()
	}()
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	if err := wire.ServerHandshake(c, s.cfg.Token, wire.FlagLayout); err != nil {
		s.cfg.LogRefused("gotensor serve: %s: handshake: %v", c.RemoteAddr(), err)
		if errs.Is(err, errs.Unauthorized) || errs.Is(err, errs.CorruptData) {
			s.cfg.Observer.Refused()
		}
		return
	}
	ic := &idleConn{Conn: c, idle: s.cfg.PayloadIdle}
	r := wire.NewReader(bufio.NewReaderSize(ic, 256<<10))
	alloc := func(m *wire.Message, n uint64) ([]byte, error) {
		ic.inPayload = true // what remains of m is its payload: it must keep coming
		if b := ups.Slot(m, n); b != nil {
			return b, nil // its place in a frame laid out up front, held against the budget already
		}
		return s.cfg.Budget.Alloc(m, n)
	}
	w := wire.NewWriter(c)
	var wmu sync.Mutex
	sem := make(chan struct{}, s.cfg.MaxInflight)
	inline := s.cfg.Store.Caps().Nonblocking
	send := func(resp *wire.Message) error {
		wmu.Lock()
		defer wmu.Unlock()
		defer resp.Done()
		return w.Write(resp)
	}
	ctx := context.Background()
	for {
		m, err := r.Read(s.cfg.MaxMessage, alloc)
		ic.inPayload = false
		if err != nil {
			switch {
			case errors.Is(err, os.ErrDeadlineExceeded):
				s.cfg.Logf("gotensor serve: %s: closing: no byte of a payload for %v", c.RemoteAddr(), ic.idle)
			case !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed):
				s.cfg.Logf("gotensor serve: %s: closing: %v", c.RemoteAddr(), err)
			}
			return // a malformed message closes this connection only
		}
		if m.Op.IsUpload() { // parts are kept per connection, in order of arrival
			start, op, in := time.Now(), m.Op, len(m.Payload)
			if resp := ups.Handle(m); resp != nil {
				s.cfg.Observe(op, in, resp, start)
				if send(resp) != nil {
					return
				}
				continue
			} // a commit goes on as the put of the whole frame
		}
		var resp *wire.Message
		if inline {
			// a map access: answer from this goroutine; only large answers
			// are written from another, so reading goes on meanwhile
			resp = s.cfg.Serve(ctx, m)
			m.Done()
			if len(resp.Payload) < inlineMax {
				if send(resp) != nil {
					return
				}
				continue
			}
		}
		sem <- struct{}{}
		inflight.Add(1)
		go func() {
			defer func() { <-sem; inflight.Done() }()
			defer func() {
				if r := recover(); r != nil { // a failed write: the connection is beyond repair
					s.cfg.Logf("gotensor serve: %s: closing after a panic: %v", c.RemoteAddr(), r)
					c.Close()
				}
			}()
			if resp == nil {
				resp = s.cfg.Serve(ctx, m)
				m.Done()
			}
			if send(resp) != nil {
				c.Close()
			}
		}()
	}
}

// idleConn is a server's connection as its reading goroutine sees it:
// while a payload is being read, each read must bring bytes within idle,
// so a client that announces a payload and stalls gives back what the
// payload holds of the budget (the connection closes). Between messages
// a connection may idle as long as it likes.
type idleConn struct {
	net.Conn
	idle      time.Duration // <= 0: no limit
	inPayload bool          // set and read by the reading goroutine only
	armed     bool          // a read deadline is set
}

func (c *idleConn) Read(p []byte) (int, error) {
	switch {
	case c.inPayload && c.idle > 0:
		c.Conn.SetReadDeadline(time.Now().Add(c.idle))
		c.armed = true
	case c.armed:
		c.Conn.SetReadDeadline(time.Time{})
		c.armed = false
	}
	return c.Conn.Read(p)
}
