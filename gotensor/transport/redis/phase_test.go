package redis

import (
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/gotensor/gotensor/gotensor/transport/redis/redistest"
)

func TestPhases(t *testing.T) {
	if os.Getenv("GOTENSOR_REDIS_TUNE") == "" {
		t.Skip("GOTENSOR_REDIS_TUNE=1 runs it")
	}
	c := redistest.StartCluster(t, 3, 1)
	buf := randBytes(64<<20, 1)
	s := open(t, "redis://"+c.Nodes[0].Addr()+"?piece=2MiB")
	var a, b, d []float64
	for range 9 {
		n := 32
		keys := s.topo.Load().placement(n)
		m := &manifest{ver: newVer(), size: int64(len(buf)), segs: make([]segment, n)}
		at := int64(0)
		for i := range n {
			l := (int64(len(buf)) - at) / int64(n-i)
			m.segs[i] = segment{n: l, piece: keys[i]}
			at += l
		}
		t0 := time.Now()
		must(t, s.writePieces(bg, "big", m, buf))
		t1 := time.Now()
		must(t, s.commit(bg, "big", m.encode(), "", m.pieces()))
		t2 := time.Now()
		_, err := s.Get(bg, "big")
		must(t, err)
		t3 := time.Now()
		a = append(a, t1.Sub(t0).Seconds()*1e3)
		b = append(b, t2.Sub(t1).Seconds()*1e3)
		d = append(d, t3.Sub(t2).Seconds()*1e3)
	}
	slices.Sort(a)
	slices.Sort(b)
	slices.Sort(d)
	fmt.Printf("pieces %.1f ms commit %.1f ms get %.1f ms\n", a[4], b[4], d[4])
}
