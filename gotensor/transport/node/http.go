package node

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"errors"
	"log"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/transport/serve"
)

// The node's HTTP endpoints (--metrics, --pprof) are at least as strict as
// its data port. On a loopback address they are open, as the data port is
// without a token. Elsewhere the node needs a token, and every request
// must carry it (Authorization: Bearer <token>, compared in constant
// time); Go's profiles (the command line, heap, goroutines, CPU) go
// beyond loopback only when asked explicitly (--pprof-public). A node
// with TLS serves them over TLS with its certificate, so the token is not
// sent in the clear.

// isLoopback reports whether addr (host:port) is a loopback address; a
// host name other than localhost, or no host (every interface), is not.
func isLoopback(addr string) (bool, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false, errs.Wrap(errs.InvalidArgument, err, "bad listen address %q", addr)
	}
	ip := net.ParseIP(host)
	return host == "localhost" || (ip != nil && ip.IsLoopback()), nil
}

// checkHTTPAddr says whether requests to an HTTP endpoint (what, set by
// flag) on addr must carry the token, or why it may not listen there;
// public allows a non-loopback address at all.
func checkHTTPAddr(what, flag, addr string, token []byte, public bool) (authenticate bool, err error) {
	loopback, err := isLoopback(addr)
	if err != nil || loopback {
		return false, err
	}
	if !public {
		return false, errs.New(errs.InvalidArgument,
			"refusing to serve %s on non-loopback %q: they show the command line, heap and goroutines (%s-public with --token-file serves them there, to requests carrying the token)",
			what, addr, flag)
	}
	if len(token) == 0 {
		return false, errs.New(errs.InvalidArgument, "refusing to serve %s on non-loopback %q without a token (--token-file): its requests must carry it", what, addr)
	}
	return true, nil
}

// requireToken serves only requests that carry token as a bearer token.
func requireToken(h http.Handler, token []byte) http.Handler {
	want := sha256.Sum256(token) // compared as digests: the time taken says nothing of its length either
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scheme, cred, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		got := sha256.Sum256([]byte(strings.TrimSpace(cred)))
		if !strings.EqualFold(scheme, "Bearer") || subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="gotensor"`)
			http.Error(w, "this endpoint needs the node's token (Authorization: Bearer <token>)", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// webConfig is what the node's HTTP endpoints share.
type webConfig struct {
	token  []byte
	tls    *tls.Config       // the node's (nil: plain HTTP)
	errLog *serve.LogLimiter // for the servers' own errors
	logf   func(string, ...any)
}

// httpEndpoint is one of the node's HTTP servers.
type httpEndpoint struct {
	addr string // host:port it listens on
	url  string // its root: http(s)://host:port
	stop func()
}

func (e *httpEndpoint) address() string {
	if e == nil {
		return ""
	}
	return e.addr
}

// at is the URL of path on e ("" without e).
func (e *httpEndpoint) at(path string) string {
	if e == nil {
		return ""
	}
	return e.url + path
}

// serveHTTP serves h (what: for errors and the log) on addr in the
// background: guarded by the token when authenticate, over the node's TLS
// when it has one. The server's own errors (a failed TLS handshake: anyone
// can cause them) go to the rate-limited web.errLog.
func serveHTTP(what, addr string, h http.Handler, authenticate bool, web webConfig) (*httpEndpoint, error) {
	tlsCfg, logf := web.tls, web.logf
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, errs.Wrap(errs.Unavailable, err, "cannot listen for %s on %s", what, addr)
	}
	scheme := "http"
	if tlsCfg != nil {
		ln, scheme = tls.NewListener(ln, tlsCfg), "https"
	} else if authenticate && logf != nil {
		logf("gotensor serve: %s on %s: the token crosses the network in the clear with each request (--tls-cert serves it over TLS)", what, addr)
	}
	if authenticate {
		h = requireToken(h, web.token)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ErrorLog: log.New(logWriter{web.errLog, what}, "", 0)}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) && logf != nil {
			logf("gotensor serve: %s: %v", what, err)
		}
	}()
	bound := ln.Addr().String()
	return &httpEndpoint{addr: bound, url: scheme + "://" + bound, stop: func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if srv.Shutdown(ctx) != nil {
			srv.Close() // a profile still being taken
		}
	}}, nil
}

// logWriter is an http.Server's error log, rate-limited.
type logWriter struct {
	l    *serve.LogLimiter
	what string
}

func (w logWriter) Write(p []byte) (int, error) {
	w.l.Printf("gotensor serve: %s: %s", w.what, strings.TrimSpace(string(p)))
	return len(p), nil
}
