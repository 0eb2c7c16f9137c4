package transport

import (
	"bufio"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/store"
)

// ServerConfig configures a memory node.
type ServerConfig struct {
	Store       store.Store // where frames live (mem:// with a capacity, or a directory)
	Token       []byte      // shared secret; nil serves without authentication
	MaxMessage  uint64      // largest payload accepted (default DefaultMaxMessage)
	MaxInflight int         // requests served at once per connection (default 64)
	Logf        func(format string, args ...any)
}

// Server serves a store to clients.
type Server struct {
	cfg    ServerConfig
	mu     sync.Mutex
	ln     net.Listener
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup

	prealloc budget // payload bytes being read into whole buffers
}

// NewServer returns a server for cfg.
func NewServer(cfg ServerConfig) *Server {
	return &Server{cfg: cfg.withDefaults(), conns: map[net.Conn]struct{}{}}
}

func (cfg ServerConfig) withDefaults() ServerConfig {
	if cfg.MaxMessage == 0 {
		cfg.MaxMessage = DefaultMaxMessage
	}
	if cfg.MaxInflight == 0 {
		cfg.MaxInflight = 64
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	return cfg
}

// CheckListenAddr refuses a non-loopback address without a token.
func CheckListenAddr(addr string, token []byte) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return errs.Wrap(errs.InvalidArgument, err, "bad listen address %q", addr)
	}
	ip := net.ParseIP(host)
	loopback := host == "localhost" || (ip != nil && ip.IsLoopback())
	if !loopback && len(token) == 0 {
		return errs.New(errs.InvalidArgument, "refusing to listen on non-loopback %q without a token (--token-file)", addr)
	}
	return nil
}

// Serve accepts connections on ln until Close.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
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

func (s *Server) serveConn(c net.Conn) {
	defer func() {
		c.Close()
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
		s.wg.Done()
	}()
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	if err := s.handshake(c); err != nil {
		s.cfg.Logf("gotensor serve: %s: handshake: %v", c.RemoteAddr(), err)
		return
	}
	r := bufio.NewReaderSize(c, 256<<10)
	var wmu sync.Mutex
	sem := make(chan struct{}, s.cfg.MaxInflight)
	inline := store.IsNonblocking(s.cfg.Store)
	ups := newUploads(s.cfg.MaxMessage)
	send := func(resp *message) error {
		wmu.Lock()
		defer wmu.Unlock()
		return writeMessage(c, resp)
	}
	var inflight sync.WaitGroup
	defer inflight.Wait()
	for {
		m, err := readMessage(r, s.cfg.MaxMessage, s.prealloc.reserve)
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				s.cfg.Logf("gotensor serve: %s: closing: %v", c.RemoteAddr(), err)
			}
			return // a malformed message closes this connection only
		}
		if isUpload(m.op) { // parts are kept per connection, in order of arrival
			if resp := ups.handle(m); resp != nil {
				if send(resp) != nil {
					return
				}
				continue
			} // a commit goes on as the put of the whole frame
		}
		var resp *message
		if inline {
			// a map access: answer from this goroutine; only large answers
			// are written from another, so reading goes on meanwhile
			if resp = handleRequest(s.cfg.Store, m); len(resp.payload) < 256<<10 {
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
			if resp == nil {
				resp = handleRequest(s.cfg.Store, m)
			}
			if send(resp) != nil {
				c.Close()
			}
		}()
	}
}

// handshake: the client's hello (magic, version); our hello with a fresh
// nonce and whether a token is required; the client's HMAC of the nonce;
// our verdict (one status byte).
func (s *Server) handshake(c net.Conn) error {
	c.SetDeadline(time.Now().Add(10 * time.Second))
	defer c.SetDeadline(time.Time{})
	var hello [8]byte
	if _, err := io.ReadFull(c, hello[:]); err != nil {
		return err
	}
	if [4]byte(hello[:4]) != Magic || binary.LittleEndian.Uint16(hello[4:]) != Version {
		return protoErr("bad hello %x", hello)
	}
	var out [8 + nonceSize]byte
	copy(out[:], Magic[:])
	binary.LittleEndian.PutUint16(out[4:], Version)
	if len(s.cfg.Token) > 0 {
		binary.LittleEndian.PutUint16(out[6:], 1)
	}
	nonce := out[8:]
	if _, err := rand.Read(nonce); err != nil {
		return err
	}
	if _, err := c.Write(out[:]); err != nil {
		return err
	}
	var proof [macSize]byte
	if _, err := io.ReadFull(c, proof[:]); err != nil {
		return err
	}
	ok := len(s.cfg.Token) == 0 || hmac.Equal(proof[:], mac(s.cfg.Token, nonce))
	verdict := []byte{0}
	if !ok {
		verdict[0] = uint8(errs.Unauthorized) + 1
	}
	if _, err := c.Write(verdict); err != nil {
		return err
	}
	if !ok {
		return errs.New(errs.Unauthorized, "bad token")
	}
	return nil
}

// handleRequest serves one request from st; every transport shares it.
func handleRequest(st store.Store, m *message) *message {
	resp := &message{header: header{op: m.op, id: m.id}}
	fail := func(err error) *message {
		resp.status, resp.payload = statusOf(err), []byte(err.Error())
		return resp
	}
	ctx := context.Background()
	switch m.op {
	case OpPing:
	case OpPut:
		if err := st.Put(ctx, m.key, m.payload); err != nil {
			return fail(err)
		}
	case OpGet:
		b, err := st.Get(ctx, m.key)
		if err != nil {
			return fail(err)
		}
		resp.payload = b
	case OpHead:
		b, size, err := st.Head(ctx, m.key, int(min(m.arg, 1<<20)))
		if err != nil {
			return fail(err)
		}
		resp.payload, resp.arg = b, uint64(size)
	case OpDelete:
		if err := st.Delete(ctx, m.key); err != nil {
			return fail(err)
		}
	case OpHas:
		ok, err := st.Has(ctx, m.key)
		if err != nil {
			return fail(err)
		}
		if ok {
			resp.arg = 1
		}
	case OpList:
		ks, err := st.List(ctx, m.key)
		if err != nil {
			return fail(err)
		}
		resp.payload = []byte(strings.Join(ks, "\n"))
	case OpUsage:
		resp.payload, _ = json.Marshal(st.Usage())
	case OpGetRange:
		if len(m.payload) != 8 {
			return fail(protoErr("get-range wants an 8-byte length"))
		}
		b, size, err := store.ReadRange(ctx, st, m.key, int64(m.arg), int64(binary.LittleEndian.Uint64(m.payload)))
		if err != nil {
			return fail(err)
		}
		resp.payload, resp.arg = b, uint64(size)
	default: // one-sided ops need a transport with remote memory access
		return fail(errs.New(errs.Unsupported, "%s is not served over this transport", opName(m.op)))
	}
	return resp
}
