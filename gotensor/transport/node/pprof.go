package node

import (
	"errors"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/gotensor/gotensor/gotensor/errs"
)

// servePprof serves the Go runtime's profiles (heap, goroutines, CPU; heap
// with ?debug=1 ends in runtime.MemStats) at http://addr/debug/pprof/ in the
// background, for finding where a node's memory goes.
func (n *Node) servePprof(addr string, logf func(string, ...any)) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return errs.Wrap(errs.Unavailable, err, "cannot listen for pprof on %s", addr)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) && logf != nil {
			logf("gotensor serve: pprof: %v", err)
		}
	}()
	n.pprofAddr = ln.Addr().String()
	n.stopPprof = func() { srv.Close() }
	return nil
}
