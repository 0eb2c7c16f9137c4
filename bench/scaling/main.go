// Command scaling measures how a codec's coding speed grows with cores:
// it writes one real tensor into a mem:// store and reads it back with the
// coding bounded to 1, 2, 4, ... workers (parallel.SetWorkers, GOMAXPROCS
// alike) and prints JSON. It is pure Go (CGO_ENABLED=0), so the binary and
// its data file can be carried to a machine without Go or Python;
// `make bench-scaling` builds it, writes the data and renders the table.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gotensor/gotensor/gotensor/core"
	"github.com/gotensor/gotensor/gotensor/parallel"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// revision is the source's commit, set by the Makefile (-ldflags -X), as
// GOFLAGS=-buildvcs=false leaves the build info without one.
var revision string

type result struct {
	Codec       string  `json:"codec"`
	Workers     int     `json:"workers"`
	RawBytes    int64   `json:"raw_bytes"`
	StoredBytes int64   `json:"stored_bytes"`
	WriteGBps   float64 `json:"write_GBps"` // raw bytes per second, median of reps
	ReadGBps    float64 `json:"read_GBps"`
	Reps        int     `json:"reps"`
}

type report struct {
	Machine map[string]any `json:"machine"`
	Data    map[string]any `json:"data"`
	Results []result       `json:"results"`
}

func main() {
	data := flag.String("data", "", "the tensor's raw little-endian bytes")
	dtype := flag.String("dtype", "bfloat16", "the tensor's dtype")
	label := flag.String("label", "", "what the data is, for the report")
	codecs := flag.String("codecs", "planes", "codecs to measure, comma separated")
	workerList := flag.String("workers", "", "worker counts, comma separated (default: 1, 2, 4, ... and every core)")
	reps := flag.Int("reps", 7, "timed writes and reads per point")
	flag.Parse()
	if *data == "" {
		log.Fatal("-data is required")
	}
	raw, err := os.ReadFile(*data)
	if err != nil {
		log.Fatal(err)
	}
	dt, err := tensor.ParseDType(*dtype)
	if err != nil {
		log.Fatal(err)
	}
	if len(raw) == 0 || len(raw)%dt.Size() != 0 {
		log.Fatalf("%s: %d bytes is not a whole number of %s elements", *data, len(raw), dt)
	}
	ws, err := workerCounts(*workerList, runtime.NumCPU())
	if err != nil {
		log.Fatal(err)
	}
	meta := tensor.Meta{DType: dt, Shape: []int64{int64(len(raw) / dt.Size())}}
	rep := report{Machine: machine(), Data: map[string]any{"label": *label, "dtype": dt.String(), "bytes": len(raw)}}
	for _, c := range strings.Split(*codecs, ",") {
		for _, w := range ws {
			r, err := measure(meta, raw, c, w, *reps)
			if err != nil {
				log.Fatalf("%s with %d workers: %v", c, w, err)
			}
			fmt.Fprintf(os.Stderr, "%-8s %2d workers: write %6.3f read %6.3f GB/s (ratio %.2f)\n",
				c, w, r.WriteGBps, r.ReadGBps, float64(r.RawBytes)/float64(r.StoredBytes))
			rep.Results = append(rep.Results, r)
		}
	}
	out := json.NewEncoder(os.Stdout)
	out.SetIndent("", " ")
	if err := out.Encode(rep); err != nil {
		log.Fatal(err)
	}
}

// workerCounts reads -workers, or makes 1, 2, 4, ... up to cpus, and cpus.
func workerCounts(list string, cpus int) ([]int, error) {
	var ws []int
	if list == "" {
		for w := 1; w < cpus; w *= 2 {
			ws = append(ws, w)
		}
		return append(ws, cpus), nil
	}
	for _, s := range strings.Split(list, ",") {
		w, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || w < 1 {
			return nil, fmt.Errorf("-workers: %q is not a positive count", s)
		}
		ws = append(ws, w)
	}
	return ws, nil
}

// measure writes and reads the tensor reps times with coding bounded to
// workers goroutines on as many threads, checking the bytes that come back.
func measure(meta tensor.Meta, raw []byte, codecName string, workers, reps int) (result, error) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(workers))
	parallel.SetWorkers(workers)
	defer parallel.SetWorkers(0)
	ctx := context.Background()
	s, err := core.Open("mem://")
	if err != nil {
		return result{}, err
	}
	defer s.Close()
	dst := make([]byte, len(raw))
	var writes, reads []float64
	var stored int64
	for i := -1; i < reps; i++ { // the first round warms up
		runtime.GC()
		t0 := time.Now()
		if err := s.WriteTensor(ctx, "t", meta, raw, codecName); err != nil {
			return result{}, err
		}
		t1 := time.Now()
		if err := s.ReadTensor(ctx, "t", meta, dst); err != nil {
			return result{}, err
		}
		t2 := time.Now()
		if i < 0 {
			if !bytes.Equal(dst, raw) {
				return result{}, fmt.Errorf("the tensor read back differs from the one written")
			}
			st, err := s.Stat(ctx, "t")
			if err != nil {
				return result{}, err
			}
			stored = st.StoredBytes
			continue
		}
		writes = append(writes, t1.Sub(t0).Seconds())
		reads = append(reads, t2.Sub(t1).Seconds())
	}
	n := float64(len(raw))
	return result{Codec: codecName, Workers: workers, RawBytes: int64(len(raw)), StoredBytes: stored,
		WriteGBps: n / median(writes) / 1e9, ReadGBps: n / median(reads) / 1e9, Reps: reps}, nil
}

func median(xs []float64) float64 {
	xs = slices.Clone(xs)
	slices.Sort(xs)
	if len(xs)%2 == 1 {
		return xs[len(xs)/2]
	}
	return (xs[len(xs)/2-1] + xs[len(xs)/2]) / 2
}

func machine() map[string]any {
	m := map[string]any{"cpus": runtime.NumCPU(), "go": runtime.Version(), "goarch": runtime.GOARCH, "cpu_model": cpuModel()}
	if revision != "" {
		m["revision"] = revision
	} else if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				m["revision"] = s.Value
			}
		}
	}
	return m
}

func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
