package transport

import (
	"crypto/tls"
	"math"
	"net"
	"os"
	"runtime/debug"
	"strings"

	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/store"
)

// ServeOptions are `gotensor serve`'s flags.
type ServeOptions struct {
	Listen    string // host:port, loopback unless a token is set
	Transport string // "tcp" (default) or "ucx"
	Capacity  int64  // bytes; 0 unbounded
	Dir       string // persist frames here (survives restarts); "" keeps them in memory
	TokenFile string // file holding the shared secret
	UCXTLS    string // UCX transports for a ucx node ("" keeps UCX_TLS / UCX's choice)
	TLSCert   string // PEM certificate (chain): a tcp node then speaks TLS 1.3
	TLSKey    string // its PEM private key
	CapHeap   bool   // a process of its own: keep the Go heap just above Capacity (see capHeap)
	Logf      func(format string, args ...any)
}

// Node is a running memory node.
type Node struct {
	url   string
	addr  string
	stop  func()
	store store.Store
}

// URL is what clients open, e.g. tcp://127.0.0.1:7707.
func (n *Node) URL() string { return n.url }

// Addr is the host:port the node listens on.
func (n *Node) Addr() string { return n.addr }

// Shutdown stops serving and closes the store.
func (n *Node) Shutdown() error {
	n.stop()
	return n.store.Close()
}

// capHeap gives a node process with a capacity a soft Go heap limit just
// above it (unless GOMEMLIMIT is set): the runtime then collects and reuses the
// buffers of replaced frames instead of growing to twice the capacity, and
// new frames land in memory that is already mapped.
func capHeap(capacity int64) {
	if capacity <= 0 || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	limit := capacity + capacity/8 + 256<<20
	if cur := debug.SetMemoryLimit(-1); cur < limit || cur == math.MaxInt64 {
		debug.SetMemoryLimit(limit)
	}
}

// Start opens the backing store, listens and serves in the background.
func Start(o ServeOptions) (*Node, error) {
	var token []byte
	if o.TokenFile != "" {
		b, err := os.ReadFile(o.TokenFile)
		if err != nil {
			return nil, errs.Wrap(errs.InvalidArgument, err, "reading token file")
		}
		token = []byte(strings.TrimSpace(string(b)))
		if len(token) == 0 {
			return nil, errs.New(errs.InvalidArgument, "token file %s is empty", o.TokenFile)
		}
	}
	if err := CheckListenAddr(o.Listen, token); err != nil {
		return nil, err
	}
	if o.Transport == "" {
		o.Transport = "tcp"
	}
	if o.CapHeap {
		capHeap(o.Capacity)
	}
	if o.Transport != "tcp" && o.Transport != "ucx" {
		return nil, errs.New(errs.InvalidArgument, "unknown transport %q (tcp or ucx)", o.Transport)
	}
	var st store.Store
	if o.Dir != "" {
		d, err := store.OpenDir(o.Dir, o.Capacity)
		if err != nil {
			return nil, err
		}
		st = d
	} else {
		st = store.NewMem("mem://serve", o.Capacity)
	}
	cfg := ServerConfig{Store: st, Token: token, Logf: o.Logf}
	if o.Transport == "ucx" {
		s, err := ListenUCX(o.Listen, cfg, ucxConfigFor(o.UCXTLS, o.Listen))
		if err != nil {
			st.Close()
			return nil, err
		}
		return &Node{url: "ucx://" + s.Addr(), addr: s.Addr(), stop: func() { s.Close() }, store: st}, nil
	}
	var tlsCfg *tls.Config
	if o.TLSCert != "" || o.TLSKey != "" {
		if o.Transport != "tcp" {
			st.Close()
			return nil, errs.New(errs.InvalidArgument, "TLS is for the tcp transport")
		}
		cert, err := tls.LoadX509KeyPair(o.TLSCert, o.TLSKey)
		if err != nil {
			st.Close()
			return nil, errs.Wrap(errs.InvalidArgument, err, "loading TLS certificate and key")
		}
		tlsCfg = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS13}
	}
	ln, err := net.Listen("tcp", o.Listen)
	if err != nil {
		st.Close()
		return nil, errs.Wrap(errs.Unavailable, err, "cannot listen on %s", o.Listen)
	}
	if tlsCfg != nil {
		ln = tls.NewListener(ln, tlsCfg)
	}
	s := NewServer(cfg)
	s.ln = ln // Addr works at once
	go s.Serve(ln)
	return &Node{url: "tcp://" + ln.Addr().String(), addr: ln.Addr().String(), stop: func() { s.Close() }, store: st}, nil
}
