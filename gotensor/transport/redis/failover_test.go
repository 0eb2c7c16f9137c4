package redis

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/transport/redis/redistest"
)

// A master killed (SIGKILL) while writes with replicas=1 and reads run:
// every acknowledged write reads back bit-exact after its replica took
// over; every call meanwhile succeeds or fails Unavailable or Timeout.
func TestFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	c := redistest.StartCluster(t, 3, 1)
	s := open(t, "redis://"+c.Nodes[0].Addr()+"?replicas=1&piece=256KiB&timeout=5s")
	type acked struct {
		key string
		b   []byte
	}
	var (
		mu       sync.Mutex
		done     []acked
		writes   atomic.Int64
		failed   atomic.Int64
		readsOK  atomic.Int64
		kinds    sync.Map
		killedAt atomic.Int64
		ends     struct {
			sync.Mutex
			m map[string][2]float64 // op: first and last failure, s after the kill
		}
	)
	ends.m = map[string][2]float64{}
	bad := func(op string, err error) {
		now := time.Now().UnixNano()
		failed.Add(1)
		kinds.Store(errs.KindOf(err).String(), true)
		if k := killedAt.Load(); k != 0 {
			at := float64(now-k) / 1e9
			ends.Lock()
			name := op + " " + errs.KindOf(err).String()
			e, seen := ends.m[name]
			if !seen {
				e[0] = at
			}
			e[1] = at
			ends.m[name] = e
			ends.Unlock()
		}
		if !errs.Is(err, errs.Unavailable) && !errs.Is(err, errs.Timeout) {
			t.Errorf("%s during failover: %v (want Unavailable or Timeout)", op, err)
		}
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(2)
		go func() { // writer
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				k := fmt.Sprintf("w%d/%d", w, i)
				n := 4096
				if i%3 == 0 {
					n = 1<<20 + i // pieces on every master
				}
				b := randBytes(n, uint64(w<<32|i))
				writes.Add(1)
				if err := s.Put(bg, k, b); err != nil {
					bad("put", err)
					continue
				}
				mu.Lock()
				done = append(done, acked{k, b})
				mu.Unlock()
			}
		}()
		go func() { // reader
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 1))
			for {
				select {
				case <-stop:
					return
				default:
				}
				mu.Lock()
				if len(done) == 0 {
					mu.Unlock()
					time.Sleep(time.Millisecond)
					continue
				}
				a := done[r.IntN(len(done))]
				mu.Unlock()
				got, err := s.Get(bg, a.key)
				if err != nil {
					bad("get", err)
					continue
				}
				if !bytes.Equal(got, a.b) {
					t.Errorf("%s read back differs during failover", a.key)
				}
				readsOK.Add(1)
			}
		}()
	}
	time.Sleep(1500 * time.Millisecond)
	victim := c.Masters()[1]
	killedAt.Store(time.Now().UnixNano())
	victim.Kill()
	time.Sleep(6 * time.Second)
	victim.Restart() // it comes back as the new master's replica: replicas=1 can be met again on its shard
	time.Sleep(6 * time.Second)
	close(stop)
	wg.Wait()
	c.WaitOK(20 * time.Second)
	for _, a := range done {
		got, err := s.Get(bg, a.key)
		if err != nil {
			t.Fatalf("acknowledged write %s after failover: %v", a.key, err)
		}
		if !bytes.Equal(got, a.b) {
			t.Fatalf("acknowledged write %s reads back different after failover", a.key)
		}
	}
	var ks []string
	kinds.Range(func(k, _ any) bool { ks = append(ks, k.(string)); return true })
	t.Logf("failover: %d writes, %d acknowledged and read back bit-exact after the failover, %d reads ok during it, %d calls failed %v",
		writes.Load(), len(done), readsOK.Load(), failed.Load(), ks)
	for name, e := range ends.m {
		t.Logf("  %s: from %.1f to %.1f s after the kill (the killed master restarted at 6 s)", name, e[0], e[1])
	}
	if len(done) == 0 || readsOK.Load() == 0 {
		t.Fatal("nothing written or read")
	}
	// writes go on after the failover
	must(t, s.Put(bg, "after", []byte("x")))
}
