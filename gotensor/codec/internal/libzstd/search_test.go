//go:build cgo && libzstd

package libzstd

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestSearchParams weighs parameter sets against libzstd level 3 on whole
// buffers (what zstandard.ZstdCompressor(level=3) does): it prints each
// set's ratio, counting gotensor's frame header and chunk table, and its
// speeds relative to level 3's, on the raw tensors (*.bin) in the directory
// GOTENSOR_ZSTD_SEARCH names, in chunks of GOTENSOR_ZSTD_SEARCH_CHUNK bytes
// (1 MiB by default); skipped without it. Where NAME.zst lies beside
// NAME.bin (another zstd's level 3, e.g. zstandard's), its size is the
// size to beat rather than this libzstd's level 3. Speeds are this
// thread's CPU time, the lower quartile of a few runs, level 3's measured
// again beside each candidate.
func TestSearchParams(t *testing.T) {
	dir := os.Getenv("GOTENSOR_ZSTD_SEARCH")
	if dir == "" {
		t.Skip("GOTENSOR_ZSTD_SEARCH names no directory of raw tensors")
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.bin"))
	chunk := 1 << 20
	if c, err := strconv.Atoi(os.Getenv("GOTENSOR_ZSTD_SEARCH_CHUNK")); err == nil && c > 0 {
		chunk = c
	}
	var cands []Params
	for _, bs := range []int{0, 32 << 10, 64 << 10, 96 << 10, 112 << 10} {
		cands = append(cands, Params{Level: 1, MaxBlockSize: bs}, Params{Level: 2, MaxBlockSize: bs}, Params{Level: 3, MaxBlockSize: bs},
			Params{Level: 1, MinMatch: 5, HashLog: 17, MaxBlockSize: bs}, Params{Level: 1, MinMatch: 5, HashLog: 16, MaxBlockSize: bs},
			Params{Level: 1, MinMatch: 6, HashLog: 16, MaxBlockSize: bs})
		// level 3's double-fast search at level 1's window, and level 1 with
		// a larger hash table: what a 1 MiB chunk can afford
		cands = append(cands, Params{Level: 1, Strategy: 2, HashLog: 17, ChainLog: 16, MinMatch: 5, MaxBlockSize: bs},
			Params{Level: 1, HashLog: 18, MinMatch: 5, MaxBlockSize: bs}, Params{Level: 2, HashLog: 17, MinMatch: 5, MaxBlockSize: bs},
			Params{Level: 1, Strategy: 2, HashLog: 18, ChainLog: 17, MinMatch: 5, MaxBlockSize: bs},
			Params{Level: 1, Strategy: 2, HashLog: 17, ChainLog: 16, MinMatch: 4, MaxBlockSize: bs},
			Params{Level: 1, Strategy: 2, HashLog: 17, ChainLog: 16, MinMatch: 6, MaxBlockSize: bs},
			Params{Level: 1, Strategy: 3, HashLog: 17, ChainLog: 16, SearchLog: 1, MinMatch: 5, MaxBlockSize: bs})
		if bs == 0 { // blocks ended where the statistics change, as libzstd 1.5.7's level 3 does
			cands = append(cands, Params{Level: 1, Strategy: 2, HashLog: 17, ChainLog: 16, MinMatch: 5, PreSplit: true},
				Params{Level: 1, HashLog: 17, MinMatch: 5, PreSplit: true}, Params{Level: 1, PreSplit: true},
				Params{Level: 1, MinMatch: 5, PreSplit: true}, Params{Level: 3, PreSplit: true})
		}
		for _, l := range []int{-1, -3} {
			cands = append(cands, Params{Level: l, HuffLiterals: true, MaxBlockSize: bs})
		}
	}
	if only := os.Getenv("GOTENSOR_ZSTD_SEARCH_ONLY"); only != "" { // a subset: candidates whose description has this text (=text: is it)
		cands = slices.DeleteFunc(cands, func(p Params) bool {
			if exact, ok := strings.CutPrefix(only, "="); ok {
				return describe(p) != exact
			}
			return !strings.Contains(describe(p), only)
		})
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		ref, _ := NewEncoder(Params{Level: 3, ContentSize: true})
		rsize, rc, rd := measure(t, ref, src, len(src))
		if z, err := os.Stat(strings.TrimSuffix(f, ".bin") + ".zst"); err == nil {
			rsize = int(z.Size())
		}
		t.Logf("%s: level 3 whole: ratio %.4f, %.0f / %.0f MB/s", filepath.Base(f), float64(len(src))/float64(rsize), mbs(len(src), rc), mbs(len(src), rd))
		for _, p := range cands {
			e, err := NewEncoder(p)
			if err != nil {
				t.Fatal(err)
			}
			size, c, d := measure(t, e, src, chunk)
			_, rc, rd := measure(t, ref, src, len(src)) // again, beside each candidate: the machine is shared
			n := (len(src) + chunk - 1) / chunk
			size += 32 + 8 + 12*n + 4 // frame header, one dimension, chunk table, header CRC
			t.Logf("  %-26s %9d B ratio %.4f (%+6d B)  compress %.2fx  decompress %.2fx", describe(p), size,
				float64(len(src))/float64(size), size-rsize, rc/c, rd/d)
		}
	}
}

func describe(p Params) string {
	s := fmt.Sprintf("level %d", p.Level)
	for _, f := range []struct {
		name string
		v    int
	}{{"s", p.Strategy}, {"w", p.WindowLog}, {"h", p.HashLog}, {"c", p.ChainLog}, {"sl", p.SearchLog}, {"m", p.MinMatch}, {"t", p.TargetLength}} {
		if f.v != 0 {
			s += fmt.Sprintf(" %s%d", f.name, f.v)
		}
	}
	if p.MaxBlockSize != 0 {
		s += fmt.Sprintf(" b%dK", p.MaxBlockSize>>10)
	}
	if p.HuffLiterals {
		s += " huff"
	}
	if p.PreSplit {
		s += " split"
	}
	return s
}

// measure codes src in chunks of chunk bytes: the coded size and the
// lower-quartile CPU seconds to compress and to decompress it all.
func measure(t *testing.T, e *Encoder, src []byte, chunk int) (size int, comp, decomp float64) {
	var encs [][]byte
	for off := 0; off < len(src); off += chunk {
		enc, err := e.Compress(nil, src[off:min(off+chunk, len(src))])
		if err != nil {
			t.Fatal(err)
		}
		encs = append(encs, enc)
		size += len(enc)
	}
	dst := make([]byte, len(src))
	reps := max(3, min(41, (32<<20)/max(1, len(src))))
	var cs, ds []float64
	buf := make([]byte, 2*chunk)
	for range reps {
		t0 := cpu()
		for off := 0; off < len(src); off += chunk {
			buf, _ = e.Compress(buf, src[off:min(off+chunk, len(src))])
		}
		t1 := cpu()
		for i, off := 0, 0; off < len(src); i, off = i+1, off+chunk {
			if err := Decompress(dst[off:min(off+chunk, len(src))], encs[i]); err != nil {
				t.Fatal(err)
			}
		}
		cs, ds = append(cs, t1-t0), append(ds, cpu()-t1)
	}
	slices.Sort(cs)
	slices.Sort(ds)
	return size, cs[len(cs)/4], ds[len(ds)/4] // the lower quartile: other work on the machine only slows runs
}

func cpu() float64 {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts)
	return float64(ts.Nano()) / 1e9
}

func mbs(n int, s float64) float64 { return float64(n) / s / 1e6 }
