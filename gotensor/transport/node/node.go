// Package node starts a memory node (`gotensor serve`): its store, token,
// TLS, heap limit and one byte budget, served over tcp or ucx.
package node

import (
	"crypto/tls"
	"math"
	"net"
	"os"
	"runtime/debug"
	"time"

	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/store"
	"github.com/gotensor/gotensor/gotensor/transport/serve"
	"github.com/gotensor/gotensor/gotensor/transport/tcp"
	"github.com/gotensor/gotensor/gotensor/transport/ucx"
	"github.com/gotensor/gotensor/gotensor/transport/wire"
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
	// Metrics is the host:port to serve Prometheus metrics at /metrics on
	// ("": none): loopback, or with a token any address, whose requests
	// must then carry it (see http.go).
	Metrics string
	// Pprof is the host:port to serve Go's profiles at /debug/pprof/ on
	// ("": none): loopback unless PprofPublic.
	Pprof string
	// PprofPublic allows a non-loopback Pprof address: it needs a token,
	// and requests there must carry it.
	PprofPublic bool
	// PayloadIdle and UploadIdle bound how long a stalled payload or
	// streamed upload holds its reservation (see serve.Config; 0: the
	// defaults, negative: no limit).
	PayloadIdle time.Duration
	UploadIdle  time.Duration
	Logf        func(format string, args ...any)
}

// Node is a running memory node.
type Node struct {
	url     string
	addr    string
	stop    func()
	metrics *httpEndpoint // nil without ServeOptions.Metrics
	pprof   *httpEndpoint // nil without ServeOptions.Pprof
	store   store.Store
	budget  *serve.Budget
}

// URL is what clients open, e.g. tcp://127.0.0.1:7707.
func (n *Node) URL() string { return n.url }

// Addr is the host:port the node listens on.
func (n *Node) Addr() string { return n.addr }

// MetricsAddr is the host:port serving /metrics ("" without ServeOptions.Metrics).
func (n *Node) MetricsAddr() string { return n.metrics.address() }

// MetricsURL is where the metrics are: http(s)://host:port/metrics ("" without them).
func (n *Node) MetricsURL() string { return n.metrics.at("/metrics") }

// PprofAddr is the host:port serving /debug/pprof/ ("" without ServeOptions.Pprof).
func (n *Node) PprofAddr() string { return n.pprof.address() }

// PprofURL is where the profiles are: http(s)://host:port/debug/pprof/ ("" without them).
func (n *Node) PprofURL() string { return n.pprof.at("/debug/pprof/") }

// Store is what the node serves.
func (n *Node) Store() store.Store { return n.store }

// Budget is the node's allowance for bytes being received.
func (n *Node) Budget() *serve.Budget { return n.budget }

// Shutdown stops serving and closes the store.
func (n *Node) Shutdown() error {
	n.stop()
	n.stopHTTP()
	return n.store.Close()
}

// stopHTTP stops the HTTP endpoints.
func (n *Node) stopHTTP() {
	for _, e := range []*httpEndpoint{n.metrics, n.pprof} {
		if e != nil {
			e.stop()
		}
	}
}

// CheckListenAddr refuses a non-loopback address without a token.
func CheckListenAddr(addr string, token []byte) error {
	loopback, err := isLoopback(addr)
	if err != nil {
		return err
	}
	if !loopback && len(token) == 0 {
		return errs.New(errs.InvalidArgument, "refusing to listen on non-loopback %q without a token (--token-file)", addr)
	}
	return nil
}

// capHeap gives a node process with a capacity a soft Go heap limit just
// above it (unless GOMEMLIMIT is set): the runtime then collects and reuses the
// buffers of replaced frames instead of growing to twice the capacity, and
// new frames land in memory that is already mapped. The node's budget keeps
// what it stores plus what it is receiving within the capacity, so the
// headroom only holds garbage waiting for the collector and the runtime.
func capHeap(capacity int64) {
	if capacity <= 0 || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	limit := capacity + max(capacity/32, 16<<20)
	if cur := debug.SetMemoryLimit(-1); cur < limit || cur == math.MaxInt64 {
		debug.SetMemoryLimit(limit)
	}
}

// orDiscard is logf, or a log that drops every line.
func orDiscard(logf func(string, ...any)) func(string, ...any) {
	if logf == nil {
		return func(string, ...any) {}
	}
	return logf
}

func readToken(file string) ([]byte, error) {
	if file == "" {
		return nil, nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, errs.Wrap(errs.InvalidArgument, err, "reading token file")
	}
	token := wire.Token(string(b))
	if len(token) == 0 {
		return nil, errs.New(errs.InvalidArgument, "token file %s is empty", file)
	}
	return token, nil
}

// tlsConfig loads the certificate a tcp node serves TLS with (nil: none).
func tlsConfig(o ServeOptions) (*tls.Config, error) {
	if o.TLSCert == "" && o.TLSKey == "" {
		return nil, nil
	}
	if o.Transport != "tcp" {
		return nil, errs.New(errs.InvalidArgument, "TLS (--tls-cert, --tls-key) is for the tcp transport, not %s", o.Transport)
	}
	cert, err := tls.LoadX509KeyPair(o.TLSCert, o.TLSKey)
	if err != nil {
		return nil, errs.Wrap(errs.InvalidArgument, err, "loading TLS certificate and key")
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS13}, nil
}

// Start checks the options, opens the backing store, listens and serves in
// the background.
func Start(o ServeOptions) (*Node, error) {
	token, err := readToken(o.TokenFile)
	if err != nil {
		return nil, err
	}
	if err := CheckListenAddr(o.Listen, token); err != nil {
		return nil, err
	}
	var metricsAuth, pprofAuth bool
	if o.Metrics != "" {
		if metricsAuth, err = checkHTTPAddr("metrics", "--metrics", o.Metrics, token, true); err != nil {
			return nil, err
		}
	}
	if o.Pprof != "" {
		if pprofAuth, err = checkHTTPAddr("Go's profiles", "--pprof", o.Pprof, token, o.PprofPublic); err != nil {
			return nil, err
		}
	}
	if o.Transport == "" {
		o.Transport = "tcp"
	}
	if o.Transport != "tcp" && o.Transport != "ucx" {
		return nil, errs.New(errs.InvalidArgument, "unknown transport %q (tcp or ucx)", o.Transport)
	}
	tlsCfg, err := tlsConfig(o)
	if err != nil {
		return nil, err
	}
	if o.CapHeap {
		capHeap(o.Capacity)
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
	n := &Node{store: st, budget: serve.NewBudget(o.Capacity, st)}
	if m, ok := st.(*store.Mem); ok && o.Capacity > 0 {
		m.SetIdleRoom(n.budget.IdleRoom)
	}
	cfg := serve.Config{Store: st, Token: token, Budget: n.budget, PayloadIdle: o.PayloadIdle, UploadIdle: o.UploadIdle, Logf: o.Logf}
	web := webConfig{token: token, tls: tlsCfg, logf: o.Logf, errLog: serve.NewLogLimiter(orDiscard(o.Logf), serve.RefusedLogEvery, time.Now)}
	if o.Metrics != "" {
		obs, err := n.serveMetrics(o.Metrics, metricsAuth, web)
		if err != nil {
			st.Close()
			return nil, err
		}
		cfg.Observer = obs
	}
	if o.Pprof != "" {
		if err := n.servePprof(o.Pprof, pprofAuth, web); err != nil {
			n.stopHTTP()
			st.Close()
			return nil, err
		}
	}
	if o.Transport == "ucx" {
		s, err := ucx.Listen(o.Listen, cfg, ucx.ConfigFor(o.UCXTLS, o.Listen))
		if err != nil {
			n.stopHTTP()
			st.Close()
			return nil, err
		}
		n.url, n.addr, n.stop = "ucx://"+s.Addr(), s.Addr(), func() { s.Close() }
		return n, nil
	}
	ln, err := net.Listen("tcp", o.Listen)
	if err != nil {
		n.stopHTTP()
		st.Close()
		return nil, errs.Wrap(errs.Unavailable, err, "cannot listen on %s", o.Listen)
	}
	if tlsCfg != nil {
		ln = tls.NewListener(ln, tlsCfg)
	}
	s := tcp.NewServer(cfg)
	go s.Serve(ln)
	n.url, n.addr, n.stop = "tcp://"+ln.Addr().String(), ln.Addr().String(), func() { s.Close() }
	return n, nil
}
