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
	"time"

	"github.com/gotensor/gotensor/gotensor/store"
	"github.com/gotensor/gotensor/gotensor/transport/node"
	"github.com/gotensor/gotensor/gotensor/transport/serve"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:7707", "address to listen on (non-loopback needs --token-file)")
	kind := flag.String("transport", "tcp", "tcp, or ucx (needs a build with -tags ucx and libucx)")
	capacity := flag.String("capacity", "0", "bytes the node holds, e.g. 8GiB (0: unbounded)")
	dir := flag.String("dir", "", "persist frames in this directory (served again after a restart)")
	tokenFile := flag.String("token-file", "", "file holding the shared secret clients must prove")
	tlsCert := flag.String("tls-cert", "", "PEM certificate: the tcp transport then speaks TLS 1.3")
	tlsKey := flag.String("tls-key", "", "PEM private key of --tls-cert")
	metricsAddr := flag.String("metrics", "", "serve Prometheus metrics at http://HOST:PORT/metrics (https with --tls-cert); non-loopback needs --token-file, and each request there the token (Authorization: Bearer TOKEN)")
	pprofAddr := flag.String("pprof", "", "serve Go's profiles (heap, goroutines, CPU, the command line) at http://HOST:PORT/debug/pprof/ (https with --tls-cert); loopback only, unless --pprof-public")
	pprofPublic := flag.Bool("pprof-public", false, "let --pprof listen on a non-loopback address: needs --token-file, and each request there the token (Authorization: Bearer TOKEN)")
	payloadIdle := flag.Duration("payload-idle", serve.DefaultPayloadIdle, "close a connection whose payload being received sends no byte for this long, giving back the capacity it held (0: never)")
	uploadIdle := flag.Duration("upload-idle", serve.DefaultUploadIdle, "drop a streamed write that sends no part or commit for this long, giving back the capacity its parts held (0: never)")
	flag.Parse()
	capBytes, err := store.ParseSize(*capacity)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gotensor-serve:", err)
		os.Exit(2)
	}
	s, err := node.Start(node.ServeOptions{Listen: *listen, Transport: *kind, Capacity: capBytes, Dir: *dir,
		TokenFile: *tokenFile, TLSCert: *tlsCert, TLSKey: *tlsKey, Metrics: *metricsAddr, Pprof: *pprofAddr, PprofPublic: *pprofPublic,
		PayloadIdle: never(*payloadIdle), UploadIdle: never(*uploadIdle), CapHeap: true, Logf: log.Printf})
	if err != nil {
		fmt.Fprintln(os.Stderr, "gotensor-serve:", err)
		os.Exit(1)
	}
	sig := make(chan os.Signal, 1) // before the ready line: a launcher may stop the node as soon as it reads it
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	// stdout, one line: launchers wait for it to know the node is ready
	fmt.Printf("gotensor serve: listening on %s%s (capacity %s, dir %s%s%s)\n", s.URL(), tlsNote(*tlsCert), *capacity, orNone(*dir), note("metrics", s.MetricsURL()), note("pprof", s.PprofURL()))
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

// never is d, with 0 (no limit, on the command line) as the node's options say it.
func never(d time.Duration) time.Duration {
	if d <= 0 {
		return -1
	}
	return d
}

// note is ", what URL", or "" without a URL.
func note(what, url string) string {
	if url == "" {
		return ""
	}
	return ", " + what + " " + url
}
