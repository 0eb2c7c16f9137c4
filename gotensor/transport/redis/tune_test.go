package redis

import (
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/gotensor/gotensor/gotensor/transport/redis/redistest"
)

// GOTENSOR_REDIS_TUNE=1: 64 MiB Put+Get through one server and a 3+3
// cluster at a few piece sizes, medians (not part of the tests).
func TestTune(t *testing.T) {
	if os.Getenv("GOTENSOR_REDIS_TUNE") == "" {
		t.Skip("GOTENSOR_REDIS_TUNE=1 runs it")
	}
	c0 := redistest.StartCluster(t, 3, 0)
	c := redistest.StartCluster(t, 3, 1)
	buf := randBytes(64<<20, 1)
	for _, u := range []string{"redis://" + c0.Nodes[0].Addr(), "redis://" + c.Nodes[0].Addr()} {
		for _, p := range []string{"512KiB", "1MiB", "2MiB", "4MiB"} {
			for _, stream := range []int{1 << 40} {
				s := open(t, u+"?piece="+p)
				var w, r []float64
				for range 9 {
					t0 := time.Now()
					must(t, s.Put(bg, "big", buf))
					t1 := time.Now()
					got, err := s.Get(bg, "big")
					must(t, err)
					if len(got) != len(buf) {
						t.Fatal("short")
					}
					t2 := time.Now()
					w = append(w, t1.Sub(t0).Seconds()*1e3)
					r = append(r, t2.Sub(t1).Seconds()*1e3)
				}
				slices.Sort(w)
				slices.Sort(r)
				fmt.Printf("%-40s piece %-5s streamread %-5v write %5.1f ms read %5.1f ms\n", u, p, stream < 1<<30, w[4], r[4])
				s.Close()
			}
		}
	}
}
