package node

import (
	"net/http"
	"net/http/pprof"
)

// servePprof serves the Go runtime's profiles (heap, goroutines, CPU; heap
// with ?debug=1 ends in runtime.MemStats) at /debug/pprof/ in the
// background, for finding where a node's memory goes (see serveHTTP).
func (n *Node) servePprof(addr string, authenticate bool, web webConfig) error {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	e, err := serveHTTP("pprof", addr, mux, authenticate, web)
	if err != nil {
		return err
	}
	n.pprof = e
	return nil
}
