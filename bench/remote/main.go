// Command remote measures memory-node transports on loopback, side by side
// in one run: a plain Go net.Conn echo, gotensor over tcp://, over ucx://
// (UCX's tcp and shared-memory transports, active messages and one-sided
// put/get), ucx_perftest, and the redis:// store on a Redis server and
// cluster. `make bench-remote` runs it; it prints JSON.
//
// Servers run as child processes (this binary, role "serve" or "echo") so
// client and server do not share a Go runtime.
package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gotensor/gotensor/gotensor/core"
	"github.com/gotensor/gotensor/gotensor/store"
	"github.com/gotensor/gotensor/gotensor/tensor"
	"github.com/gotensor/gotensor/gotensor/transport/node"
	"github.com/gotensor/gotensor/gotensor/transport/schemes"
	"github.com/gotensor/gotensor/gotensor/transport/ucx"
)

type record struct {
	Case      string  `json:"case"`
	Transport string  `json:"transport"`
	Metric    string  `json:"metric"` // rtt_4KiB_us, write_GBps, read_GBps, write_read_GBps
	Bytes     int64   `json:"bytes"`
	Value     float64 `json:"value"`
	Reps      int     `json:"reps"`
}

var ctx = context.Background()

func main() {
	role := flag.String("role", "bench", "bench, serve or echo")
	kind := flag.String("transport", "tcp", "serve: tcp or ucx")
	listen := flag.String("listen", "127.0.0.1:0", "serve/echo: address")
	sizes := flag.String("sizes", "64MiB,1GiB", "throughput sizes")
	latReps := flag.Int("lat-reps", 2000, "round trips per latency measurement")
	passes := flag.Int("passes", 3, "passes over every case; each figure is the median of the passes' medians")
	only := flag.String("transports", "tcp,ucx-tcp,ucx-sm,rss", "cases to run: tcp (with the Go echo), ucx-tcp, ucx-sm (with ucx_perftest), rss (node memory under load), redis (-redis-server, -redis-cluster)")
	capacity := flag.String("capacity", "4GiB", "serve: the node's capacity")
	flag.StringVar(&redisServer, "redis-server", "", "case redis: the URL of one Redis server (bench_remote.py starts it)")
	flag.StringVar(&redisCluster, "redis-cluster", "", "case redis: the URL of a Redis cluster (3 masters, 3 replicas)")
	flag.StringVar(&redisBare, "redis-cluster-bare", "", "case redis: the URL of a Redis cluster of 3 masters and no replicas")
	flag.Parse()
	for _, c := range strings.Split(*only, ",") {
		cases[c] = true
	}
	switch *role {
	case "serve":
		capBytes, err := store.ParseSize(*capacity)
		if err != nil {
			log.Fatal(err)
		}
		n, err := node.Start(node.ServeOptions{Listen: *listen, Transport: *kind, Capacity: capBytes, CapHeap: true})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(n.Addr())
		io.Copy(io.Discard, os.Stdin) // until the parent closes our stdin
		n.Shutdown()
	case "echo":
		echo(*listen)
	default:
		var szs []int64
		for _, s := range strings.Split(*sizes, ",") {
			n, err := store.ParseSize(s)
			if err != nil {
				log.Fatal(err)
			}
			szs = append(szs, n)
		}
		// the client, like the node (whose --capacity sets it), keeps a Go
		// heap limit, so received buffers are reused rather than new memory
		debug.SetMemoryLimit(3 << 30)
		var runs [][]record
		for range *passes { // cases interleave in time, so a noisy spell hits each one less
			runs = append(runs, bench(szs, *latReps))
		}
		json.NewEncoder(os.Stdout).Encode(combine(runs))
	}
}

// combine keeps one record per measurement: the median over the passes.
func combine(runs [][]record) []record {
	type key struct {
		c, t, m string
		b       int64
	}
	vals := map[key][]float64{}
	var order []record
	for _, run := range runs {
		for _, r := range run {
			k := key{r.Case, r.Transport, r.Metric, r.Bytes}
			if _, seen := vals[k]; !seen {
				order = append(order, r)
			}
			vals[k] = append(vals[k], r.Value)
		}
	}
	for i, r := range order {
		v := vals[key{r.Case, r.Transport, r.Metric, r.Bytes}]
		order[i].Value = median(v)
		order[i].Reps = r.Reps * len(v)
	}
	return order
}

// cases are the -transports chosen.
var cases = map[string]bool{}

// redisServer, redisCluster and redisBare are the Redis deployments the redis case runs on.
var redisServer, redisCluster, redisBare string

// child starts this binary in a role and returns its address.
func child(env []string, args ...string) (string, func()) {
	addr, _, stop := childPID(env, args...)
	return addr, stop
}

// childPID is child that also returns the process id.
func childPID(env []string, args ...string) (string, int, func()) {
	self, _ := os.Executable()
	cmd := exec.Command(self, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		log.Fatalf("%v: %v", args, err)
	}
	return strings.TrimSpace(line), cmd.Process.Pid, func() { in.Close(); cmd.Wait() }
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

func repsFor(size int64) int {
	switch {
	case size >= 1<<30:
		return 5
	case size >= 64<<20:
		return 7
	}
	return 15
}

// storeCase measures one gotensor transport.
func storeCase(name, tr, url string, sizes []int64, latReps int) []record {
	schemes.Register()
	st, err := store.Open(url)
	if err != nil {
		log.Fatalf("%s: %v", url, err)
	}
	defer st.Close()
	small := make([]byte, 4096)
	st.Put(ctx, "lat", small)
	var rtts []float64
	for i := range latReps + 100 {
		t0 := time.Now()
		if _, err := st.Get(ctx, "lat"); err != nil {
			log.Fatal(err)
		}
		if i >= 100 {
			rtts = append(rtts, float64(time.Since(t0).Microseconds()))
		}
	}
	recs := []record{{Case: name, Transport: tr, Metric: "rtt_4KiB_us", Bytes: 4096, Value: median(rtts), Reps: latReps}}
	for _, size := range sizes {
		buf := make([]byte, size)
		for i := range buf {
			buf[i] = byte(i * 7)
		}
		recs = append(recs, writeRead(name, tr, size, func() error { return st.Put(ctx, "big", buf) }, func() error {
			got, err := st.Get(ctx, "big")
			if err == nil && int64(len(got)) != size {
				err = fmt.Errorf("read back %d bytes of %d", len(got), size)
			}
			if rc := st.Caps().Recycler; rc != nil && err == nil { // as core gives a frame back once decoded
				rc.RecycleRange(got)
			}
			return err
		})...)
		st.Delete(ctx, "big")
	}
	return recs
}

// tensorCase is what a program's write_tensor and read_tensor(out=) cost:
// the core API, codec none, a tensor written from and read back into the
// program's own memory (the frame streamed in pieces where the store
// streams, as tcp:// does).
func tensorCase(name, tr, url string, sizes []int64) []record {
	schemes.Register()
	s, err := core.Open(url)
	if err != nil {
		log.Fatalf("%s: %v", url, err)
	}
	defer s.Close()
	var recs []record
	for _, size := range sizes {
		meta := tensor.Meta{DType: tensor.Uint8, Shape: []int64{size}}
		src, dst := make([]byte, size), make([]byte, size)
		for i := range src {
			src[i] = byte(i * 7)
		}
		recs = append(recs, writeRead(name, tr, size,
			func() error { return s.WriteTensor(ctx, "big", meta, src, "none") },
			func() error { return s.ReadTensor(ctx, "big", meta, dst) })...)
		if dst[size-1] != src[size-1] {
			log.Fatal("read back other bytes")
		}
		s.Delete(ctx, "big")
	}
	return recs
}

// writeRead times write then read of size bytes, repsFor(size) rounds
// after one that warms up: the medians of write, read and write+read GB/s.
func writeRead(name, tr string, size int64, write, read func() error) []record {
	reps := repsFor(size)
	var w, r, wr []float64
	var busy time.Duration
	for i := range reps + 1 {
		b0 := machineBusy()
		t0 := time.Now()
		if err := write(); err != nil {
			log.Fatal(err)
		}
		t1 := time.Now()
		if err := read(); err != nil {
			log.Fatal(err)
		}
		t2 := time.Now()
		if i > 0 {
			busy += machineBusy() - b0
		}
		w = append(w, float64(size)/t1.Sub(t0).Seconds()/1e9)
		r = append(r, float64(size)/t2.Sub(t1).Seconds()/1e9)
		wr = append(wr, float64(2*size)/t2.Sub(t0).Seconds()/1e9)
	}
	w, r, wr = w[1:], r[1:], wr[1:] // the first round warms up
	return []record{
		{name, tr, "write_GBps", size, median(w), reps},
		{name, tr, "read_GBps", size, median(r), reps},
		{name, tr, "write_read_GBps", size, median(wr), reps},
		{name, tr, "machine_cpu_ms", size, float64(busy.Microseconds()) / 1e3 / float64(reps), reps},
	}
}

// machineBusy is the CPU time every process of the machine has spent
// (/proc/stat: all but idle and iowait, in USER_HZ ticks); zero where
// there is no /proc. Over a write and read it counts the servers' work
// too, which a client's own CPU time does not.
func machineBusy() time.Duration {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	var busy int64
	for i, v := range f[1:] {
		n, _ := strconv.ParseInt(v, 10, 64)
		if i != 3 && i != 4 && i < 8 { // user nice system [idle iowait] irq softirq steal; guest is in user
			busy += n
		}
	}
	return time.Duration(busy) * time.Second / 100 // USER_HZ is 100 on Linux
}

// echo serves length-prefixed messages back to their sender.
func echo(listen string) {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ln.Addr())
	go func() { io.Copy(io.Discard, os.Stdin); os.Exit(0) }()
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			r := bufio.NewReaderSize(c, 256<<10)
			var hdr [8]byte
			var buf []byte
			for {
				if _, err := io.ReadFull(r, hdr[:]); err != nil {
					return
				}
				n := binary.LittleEndian.Uint64(hdr[:])
				if uint64(cap(buf)) < n {
					buf = make([]byte, n)
				}
				if _, err := io.ReadFull(r, buf[:n]); err != nil {
					return
				}
				if _, err := (&net.Buffers{hdr[:], buf[:n]}).WriteTo(c); err != nil {
					return
				}
			}
		}()
	}
}

// echoCase: the floor for any protocol on Go sockets: send n bytes, get them back.
func echoCase(addr string, sizes []int64, latReps int) []record {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	c.(*net.TCPConn).SetNoDelay(true)
	r := bufio.NewReaderSize(c, 256<<10)
	round := func(b []byte) {
		var hdr [8]byte
		binary.LittleEndian.PutUint64(hdr[:], uint64(len(b)))
		done := make(chan error, 1)
		go func() { _, err := (&net.Buffers{hdr[:], b}).WriteTo(c); done <- err }()
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			log.Fatal(err)
		}
		if _, err := io.ReadFull(r, b); err != nil {
			log.Fatal(err)
		}
		if err := <-done; err != nil {
			log.Fatal(err)
		}
	}
	small := make([]byte, 4096)
	var rtts []float64
	for i := range latReps + 100 {
		t0 := time.Now()
		round(small)
		if i >= 100 {
			rtts = append(rtts, float64(time.Since(t0).Microseconds()))
		}
	}
	recs := []record{{Case: "Go net.Conn echo", Transport: "tcp", Metric: "rtt_4KiB_us", Bytes: 4096, Value: median(rtts), Reps: latReps}}
	for _, size := range sizes {
		buf := make([]byte, size)
		reps := repsFor(size)
		var wr []float64
		for range reps + 1 {
			t0 := time.Now()
			round(buf)
			wr = append(wr, float64(2*size)/time.Since(t0).Seconds()/1e9)
		}
		recs = append(recs, record{"Go net.Conn echo", "tcp", "write_read_GBps", size, median(wr[1:]), reps})
	}
	return recs
}

var finalRE = regexp.MustCompile(`Final:\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)`)

// perftest runs ucx_perftest server and client; it returns the 50th
// percentile latency (us) and the overall bandwidth (MB/s) of the Final line.
func perftest(tls, test string, size int64, iters int, port int) (lat, mbs float64, ok bool) {
	env := append(os.Environ(), "UCX_TLS="+tls, "UCX_NET_DEVICES=lo")
	args := []string{"-t", test, "-s", strconv.FormatInt(size, 10), "-n", strconv.Itoa(iters), "-w", strconv.Itoa(max(1, iters/10)), "-p", strconv.Itoa(port)}
	srv := exec.Command("ucx_perftest", args...)
	srv.Env = env
	if err := srv.Start(); err != nil {
		return 0, 0, false
	}
	defer srv.Wait()
	time.Sleep(300 * time.Millisecond)
	cli := exec.Command("ucx_perftest", append([]string{"127.0.0.1"}, args...)...)
	cli.Env = env
	out, err := cli.CombinedOutput()
	if err != nil {
		srv.Process.Kill()
		log.Printf("ucx_perftest %s %s: %v\n%s", tls, test, err, out)
		return 0, 0, false
	}
	m := finalRE.FindSubmatch(out)
	if m == nil {
		return 0, 0, false
	}
	lat, _ = strconv.ParseFloat(string(m[2]), 64)
	mbs, _ = strconv.ParseFloat(string(m[6]), 64)
	return lat, mbs, true
}

func perftestCase(tr, tls string, sizes []int64, latReps int, port *int) []record {
	name := "ucx_perftest ucp_am"
	var recs []record
	*port++
	if lat, _, ok := perftest(tls, "ucp_am_lat", 4096, latReps, *port); ok {
		// ucx_perftest reports half a round trip
		recs = append(recs, record{name, tr, "rtt_4KiB_us", 4096, 2 * lat, latReps})
	}
	for _, size := range sizes {
		*port++
		if _, mbs, ok := perftest(tls, "ucp_am_bw", size, repsFor(size)*2, *port); ok {
			recs = append(recs, record{name, tr, "one_way_GBps", size, mbs * (1 << 20) / 1e9, repsFor(size) * 2})
		}
	}
	return recs
}

// firstTouch: writing freshly allocated memory once, the cost every new
// frame buffer pays in page faults (large on some virtual machines).
func firstTouch(sizes []int64) []record {
	var recs []record
	for _, size := range sizes {
		var v []float64
		for range repsFor(size) {
			t0 := time.Now()
			b := make([]byte, size)
			for i := 0; i < len(b); i += 4096 {
				b[i] = 1
			}
			v = append(v, float64(size)/time.Since(t0).Seconds()/1e9)
			runtime.KeepAlive(b)
			b = nil
			debug.FreeOSMemory()
		}
		recs = append(recs, record{"first touch of new memory", "-", "touch_GBps", size, median(v), repsFor(size)})
	}
	return recs
}

func bench(sizes []int64, latReps int) []record {
	recs := firstTouch(sizes)
	if cases["tcp"] {
		addr, stop := child(nil, "-role", "echo")
		recs = append(recs, echoCase(addr, sizes, latReps)...)
		stop()
		addr, stop = child(nil, "-role", "serve", "-transport", "tcp")
		recs = append(recs, storeCase("gotensor", "tcp", "tcp://"+addr, sizes, latReps)...)
		recs = append(recs, tensorCase("gotensor write_tensor / read_tensor(out=)", "tcp", "tcp://"+addr, sizes)...)
		stop()
	}
	if cases["redis"] {
		if redisServer != "" {
			recs = append(recs, storeCase("gotensor redis://", "1 server", redisServer, sizes, latReps)...)
		}
		if redisCluster != "" {
			recs = append(recs, storeCase("gotensor redis://", "3+3 cluster", redisCluster, sizes, latReps)...)
			recs = append(recs, tensorCase("gotensor redis:// write_tensor / read_tensor(out=)", "3+3 cluster", redisCluster, sizes)...)
		}
		if redisBare != "" {
			recs = append(recs, storeCase("gotensor redis://", "3+0 cluster (no replicas)", redisBare, sizes, latReps)...)
		}
	}
	if cases["rss"] {
		recs = append(recs, rssCase()...)
	}
	if !ucx.Built {
		log.Print("built without UCX: ucx cases skipped (go build -tags ucx)")
		return recs
	}
	port := 13400 + os.Getpid()%1000
	for _, c := range []struct{ tr, tls string }{{"ucx-tcp", "tcp"}, {"ucx-sm", "sm,tcp"}} {
		if !cases[c.tr] {
			continue
		}
		addr, stop := child([]string{"UCX_TLS=" + c.tls}, "-role", "serve", "-transport", "ucx")
		url := "ucx://" + addr + "?transports=" + c.tls
		recs = append(recs, storeCase("gotensor", c.tr, url, sizes, latReps)...)
		recs = append(recs, storeCase("gotensor one-sided", c.tr, url+"&rma=1MiB", sizes, latReps)...)
		recs = append(recs, tensorCase("gotensor write_tensor / read_tensor(out=)", c.tr, url, sizes)...)
		stop()
		ptls := map[string]string{"ucx-tcp": "tcp", "ucx-sm": "sm"}[c.tr]
		recs = append(recs, perftestCase(c.tr, ptls, sizes, latReps, &port)...)
	}
	return recs
}
