// Command gotensor-serve is the memory node on its own: pure Go (cgo only
// with -tags ucx), so `make dist` cross-builds it for linux/arm64 (a memory
// node or a BlueField DPU's Arm cores). `pip install .` puts it into the
// Python package, and `gotensor serve` execs it.
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"syscall"

	"github.com/gotensor/gotensor/gotensor/store"
	"github.com/gotensor/gotensor/gotensor/transport/node"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:7707", "address to listen on (non-loopback needs --token-file)")
	kind := flag.String("transport", "tcp", "tcp, or ucx (needs a build with -tags ucx and libucx)")
	capacity := flag.String("capacity", "0", "bytes the node holds, e.g. 8GiB (0: unbounded)")
	dir := flag.String("dir", "", "persist frames in this directory (served again after a restart)")
	tokenFile := flag.String("token-file", "", "file holding the shared secret clients must prove")
	tlsCert := flag.String("tls-cert", "", "PEM certificate: the tcp transport then speaks TLS 1.3")
	tlsKey := flag.String("tls-key", "", "PEM private key of --tls-cert")
	metricsAddr := flag.String("metrics", "", "serve Prometheus metrics at http://HOST:PORT/metrics (non-loopback needs --token-file)")
	pprofAddr := flag.String("pprof", "", "serve Go's profiles (heap, goroutines, CPU) at http://HOST:PORT/debug/pprof/ (non-loopback needs --token-file)")
	flag.Parse()
	capBytes, err := store.ParseSize(*capacity)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gotensor-serve:", err)
		os.Exit(2)
	}
	s, err := node.Start(node.ServeOptions{Listen: *listen, Transport: *kind, Capacity: capBytes, Dir: *dir,
		TokenFile: *tokenFile, TLSCert: *tlsCert, TLSKey: *tlsKey, Metrics: *metricsAddr, Pprof: *pprofAddr, CapHeap: true, Logf: log.Printf})
	if err != nil {
		fmt.Fprintln(os.Stderr, "gotensor-serve:", err)
		os.Exit(1)
	}
	// stdout, one line: launchers wait for it to know the node is ready
	fmt.Printf("gotensor serve: listening on %s%s (capacity %s, dir %s%s%s)\n", s.URL(), tlsNote(*tlsCert), *capacity, orNone(*dir), metricsNote(s.MetricsAddr()), pprofNote(s.PprofAddr()))
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	<-sig
	s.Shutdown()
}

func tlsNote(cert string) string {
	if cert == "" {
		return ""
	}
	return " with TLS (clients add ?tls=1 or ?ca=FILE)"
}

func orNone(dir string) string {
	if dir == "" {
		return "none"
	}
	return dir
}

func metricsNote(addr string) string {
	if addr == "" {
		return ""
	}
	return ", metrics http://" + addr + "/metrics"
}

func pprofNote(addr string) string {
	if addr == "" {
		return ""
	}
	return ", pprof http://" + addr + "/debug/pprof/"
}
