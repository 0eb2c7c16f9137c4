// Package redis is a store on a Redis or Valkey server or cluster
// (redis://, rediss:// with TLS, valkey://, valkeys://), through the
// pure-Go valkey-go client. A frame up to a piece is one value; a larger
// one is split into pieces spread over the cluster's masters and written
// in parallel, then a small manifest naming them is written as the commit
// point (see layout.go and docs/REDIS.md).
package redis

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valkey-io/valkey-go"

	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/internal/pool"
	"github.com/gotensor/gotensor/gotensor/store"
)

// Register makes store.Open understand redis://, rediss://, valkey:// and valkeys://.
func Register() {
	for _, s := range []string{"redis", "rediss", "valkey", "valkeys"} {
		store.RegisterRawScheme(s, func(raw string) (store.Store, error) { return Open(raw) })
	}
}

// Defaults.
const (
	// DefaultPiece is the largest frame kept as one value, and the size
	// of the pieces a larger one is split into.
	DefaultPiece = 2 << 20
	// DefaultTimeout bounds each call (timeout=).
	DefaultTimeout = 30 * time.Second
	minPiece       = 64 << 10
	maxPiece       = 256 << 20
)

// Options are a redis:// URL's.
type Options struct {
	Hosts    []string
	TLS      *tls.Config
	User     string
	Password string
	Replicas int           // replicas=: a write returns once this many replicas have it (WAIT)
	Timeout  time.Duration // timeout=: each call's deadline
	Piece    int64         // piece=: the split size
}

// known are the options a redis:// URL takes besides store.CommonOptions.
var known = []string{"replicas", "piece", "password_file", "ca", "servername", "tls"}

// ParseURL reads redis://[user[:password]@]host:port[,host:port...][/][?options]
// (rediss:// and valkeys:// with TLS). shown is the URL fit for a
// message: no password, no secret option's value.
func ParseURL(raw string) (o Options, shown string, err error) {
	scheme, rest, _ := strings.Cut(raw, "://")
	shown = store.Redact(raw)
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	auth, tail := rest[:end], rest[end:]
	userinfo, hosts := "", auth
	if at := strings.LastIndex(auth, "@"); at >= 0 {
		userinfo, hosts = auth[:at], auth[at+1:]
	}
	first, _, _ := strings.Cut(hosts, ",")
	// url.Parse checks the userinfo's escapes and the options on a URL of one host
	one := scheme + "://"
	if userinfo != "" {
		one += userinfo + "@"
	}
	u, perr := url.Parse(one + first + tail)
	if perr != nil {
		return o, shown, errs.New(errs.InvalidArgument, "bad store URL %q", shown)
	}
	u.Host = hosts
	shown = store.RedactURL(&url.URL{Scheme: u.Scheme, Host: hosts, Path: u.Path, RawQuery: u.RawQuery, User: userOnly(u.User)})
	if u.Path != "" && u.Path != "/" {
		return o, shown, errs.New(errs.InvalidArgument, "store URL %q has a path; %s:// takes none (database 0 is used)", shown, scheme)
	}
	if err := store.CheckOptions(&url.URL{Scheme: u.Scheme, Host: hosts, RawQuery: u.RawQuery}, known...); err != nil {
		return o, shown, err
	}
	q := u.Query()
	if q.Get("token") != "" {
		return o, shown, errs.New(errs.InvalidArgument, "store URL %q: %s:// takes a password as user:password@ or password_file=, not token=", shown, scheme)
	}
	for _, h := range strings.Split(hosts, ",") {
		h = strings.TrimSpace(h)
		host, port, err := net.SplitHostPort(h)
		if err != nil || host == "" {
			return o, shown, errs.New(errs.InvalidArgument, "store URL %q: want host:port, each host named with its port", shown)
		}
		if p, err := strconv.Atoi(port); err != nil || p <= 0 || p > 65535 {
			return o, shown, errs.New(errs.InvalidArgument, "bad port %q in store URL %q (want 1 to 65535)", port, shown)
		}
		o.Hosts = append(o.Hosts, h)
	}
	if u.User != nil {
		o.User = u.User.Username()
		o.Password, _ = u.User.Password()
	}
	if f := q.Get("password_file"); f != "" {
		if o.Password != "" {
			return o, shown, errs.New(errs.InvalidArgument, "store URL %q names a password twice (in the URL and password_file=)", shown)
		}
		b, err := os.ReadFile(f)
		if err != nil {
			return o, shown, errs.New(errs.InvalidArgument, "store URL %q: cannot read the password file named by password_file= (%s)", shown, errText(err))
		}
		o.Password = strings.TrimSpace(string(b))
	}
	if o.User == "" && o.Password == "" {
		o.Password = os.Getenv("GOTENSOR_REDIS_PASSWORD")
	}
	o.Timeout = DefaultTimeout
	if t := q.Get("timeout"); t != "" {
		d, err := time.ParseDuration(t)
		if err != nil || d <= 0 {
			return o, shown, errs.New(errs.InvalidArgument, "bad timeout %q in store URL %q", t, shown)
		}
		o.Timeout = d
	}
	if r := q.Get("replicas"); r != "" {
		n, err := strconv.Atoi(r)
		if err != nil || n < 0 || n > 64 {
			return o, shown, errs.New(errs.InvalidArgument, "bad replicas=%q in store URL %q (want 0 to 64)", r, shown)
		}
		o.Replicas = n
	}
	o.Piece = DefaultPiece
	if p := q.Get("piece"); p != "" {
		n, err := store.ParseSize(p)
		if err != nil || n < minPiece || n > maxPiece {
			return o, shown, errs.New(errs.InvalidArgument, "bad piece=%q in store URL %q (want 64KiB to 256MiB)", p, shown)
		}
		o.Piece = n
	}
	tlsOn := scheme == "rediss" || scheme == "valkeys"
	if v := q.Get("tls"); v != "" {
		switch v {
		case "1", "on", "true":
			tlsOn = true
		case "0", "off", "false":
			if tlsOn {
				return o, shown, errs.New(errs.InvalidArgument, "store URL %q: %s:// is TLS; tls=%s contradicts it", shown, scheme, v)
			}
		default:
			return o, shown, errs.New(errs.InvalidArgument, "bad tls=%q in store URL %q (want 1 or 0)", v, shown)
		}
	}
	if !tlsOn && (q.Get("ca") != "" || q.Get("servername") != "") {
		return o, shown, errs.New(errs.InvalidArgument, "store URL %q: ca= and servername= need TLS (rediss://)", shown)
	}
	if tlsOn {
		host, _, _ := net.SplitHostPort(o.Hosts[0])
		cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: host}
		if n := q.Get("servername"); n != "" {
			cfg.ServerName = n
		}
		if ca := q.Get("ca"); ca != "" {
			pem, err := os.ReadFile(ca)
			if err != nil {
				return o, shown, errs.New(errs.InvalidArgument, "store URL %q: cannot read ca=%s (%s)", shown, ca, errText(err))
			}
			cfg.RootCAs = x509.NewCertPool()
			if !cfg.RootCAs.AppendCertsFromPEM(pem) {
				return o, shown, errs.New(errs.InvalidArgument, "store URL %q: ca=%s holds no PEM certificate", shown, ca)
			}
		}
		o.TLS = cfg
	}
	return o, shown, nil
}

// userOnly is u without its password.
func userOnly(u *url.Userinfo) *url.Userinfo {
	if u == nil || u.Username() == "" {
		return nil
	}
	return url.User(u.Username())
}

// errText is an OS error's text without the path it names twice.
func errText(err error) string {
	var pe *os.PathError
	if e, ok := err.(*os.PathError); ok {
		pe = e
		return pe.Err.Error()
	}
	return err.Error()
}

// Store is a store.Store on a Redis or Valkey server or cluster.
type Store struct {
	url      string // as shown: no password
	c        valkey.Client
	cluster  bool
	opts     Options
	password string // scrubbed from every error

	topoMu sync.Mutex
	topo   atomic.Pointer[topology]

	reclaiming sync.WaitGroup // unlinks under way (Close waits for them)
	read       handedOut      // pool buffers reads handed out (buffers.go)
	lent       *pool.Lent     // pool buffers LendFrame lent

	closed atomic.Bool
}

var (
	_ store.Store           = (*Store)(nil)
	_ store.RangeReader     = (*Store)(nil)
	_ store.RangeIntoReader = (*Store)(nil)
	_ store.Editor          = (*Store)(nil)
	_ store.Lender          = (*Store)(nil)
	_ store.RangeRecycler   = (*Store)(nil)
)

// Caps: ranged reads (a row read moves only the pieces it covers; into
// the caller's memory where it asks, pieces read whole straight there), row
// edits by version (only the pieces an edit covers are rewritten, server
// side), and frame memory recycled both ways (buffers.go). No streaming:
// whole puts and gets already move a frame's pieces in parallel, and
// core's link probe streams 4 to 32 MiB, which on Redis is memory (a full
// server refused the next write).
func (s *Store) Caps() store.Caps {
	return store.Caps{Ranges: s, RangesInto: s, Editor: s, Lender: s, Recycler: s}
}

// Open connects to the server or cluster a redis:// URL names; the
// cluster's layout is learnt from any seed host.
func Open(raw string) (*Store, error) {
	o, shown, err := ParseURL(raw)
	if err != nil {
		return nil, err
	}
	s := &Store{url: shown, opts: o, password: o.Password, lent: pool.NewLent(buffers)}
	copt := valkey.ClientOption{
		InitAddress:      o.Hosts,
		Username:         o.User,
		Password:         o.Password,
		TLSConfig:        o.TLS,
		DisableCache:     true,
		Dialer:           net.Dialer{Timeout: min(o.Timeout, 5*time.Second), KeepAlive: time.Second},
		DialCtxFn:        dial,
		ConnWriteTimeout: o.Timeout,
		ClientName:       "gotensor",
		// small: a reply's header is read through this buffer, and a fill
		// takes all the socket has up to its size, so that much of a
		// streamed piece is copied out of it once more; 64 KiB keeps that
		// to a few percent of a 2 MiB piece
		ReadBufferEachConn:  64 << 10,
		WriteBufferEachConn: 64 << 10, // a larger string goes straight to the socket (stringConn)
		ClusterOption:       valkey.ClusterOption{ShardsRefreshInterval: 0},
	}
	c, err := valkey.NewClient(copt)
	if err != nil {
		return nil, s.wrap(context.Background(), err, "", "connecting to")
	}
	s.c = c
	s.cluster = c.Mode() == valkey.ClientModeCluster
	ctx, cancel := s.ctx(context.Background())
	defer cancel()
	if _, err := s.refreshTopology(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return s, nil
}

// ctx bounds a call by the URL's timeout.
func (s *Store) ctx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.opts.Timeout)
}

func (s *Store) URL() string { return s.url }

// Replicas is the replicas= a write waits for.
func (s *Store) Replicas() int { return s.opts.Replicas }

// Piece is the split size.
func (s *Store) Piece() int64 { return s.opts.Piece }

// Cluster says whether the server is a cluster.
func (s *Store) Cluster() bool { return s.cluster }

func (s *Store) Close() error {
	if s.closed.CompareAndSwap(false, true) {
		s.reclaiming.Wait()
		s.c.Close()
	}
	return nil
}

func (s *Store) checkOpen() error {
	if s.closed.Load() {
		return errs.New(errs.Closed, "store %s is closed", s.url)
	}
	return nil
}

func (s *Store) check(key string) error {
	if s.closed.Load() {
		return errs.New(errs.Closed, "store %s is closed", s.url)
	}
	return store.ValidateKey(key)
}
