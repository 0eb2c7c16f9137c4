package main

import (
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/store"
	"github.com/gotensor/gotensor/gotensor/transport/schemes"
)

// rssCapacity is the node's capacity in the RSS case.
const rssCapacity = 512 << 20

// rssCase runs 8 clients of mixed sizes (4 KiB to 64 MiB puts, gets and
// deletes, keys shared so frames are replaced) against a tcp node of
// rssCapacity for a few seconds, sampling the node process's resident
// memory; it reports the peak over the capacity.
func rssCase() []record {
	addr, pid, stop := childPID(nil, "-role", "serve", "-transport", "tcp", "-capacity", strconv.Itoa(rssCapacity))
	defer stop()
	schemes.Register()
	var peak int64
	done := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			if r := rssOf(pid); r > peak {
				peak = r
			}
			select {
			case <-done:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	sizes := []int{4 << 10, 256 << 10, 4 << 20, 16 << 20, 64 << 20}
	deadline := time.Now().Add(4 * time.Second)
	var wg sync.WaitGroup
	var full, ops int64
	var mu sync.Mutex
	for c := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, err := store.Open("tcp://" + addr)
			if err != nil {
				log.Fatal(err)
			}
			defer st.Close()
			r := rand.New(rand.NewPCG(uint64(c), 7))
			bufs := map[int][]byte{}
			for time.Now().Before(deadline) {
				n := sizes[r.IntN(len(sizes))]
				if bufs[n] == nil {
					bufs[n] = make([]byte, n)
				}
				key := fmt.Sprintf("k%d", r.IntN(24))
				var err error
				switch r.IntN(4) {
				case 0, 1:
					err = st.Put(ctx, key, bufs[n])
				case 2:
					_, err = st.Get(ctx, key)
				case 3:
					err = st.Delete(ctx, key)
				}
				mu.Lock()
				ops++
				if errs.Is(err, errs.StoreFull) {
					full++
				} else if err != nil && !errs.Is(err, errs.KeyNotFound) {
					log.Fatal(err)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(done)
	<-sampled
	log.Printf("rss: %d operations, %d refused StoreFull, peak RSS %d MiB for a capacity of %d MiB", ops, full, peak>>20, rssCapacity>>20)
	return []record{{"node under 8 mixed clients", "tcp", "peak_rss_over_capacity", rssCapacity, float64(peak) / rssCapacity, int(ops)}}
}

// rssOf reads a process's resident set size (bytes) from /proc.
func rssOf(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}
