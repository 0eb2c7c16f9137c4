package transport

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gotensor/gotensor/gotensor/store"
)

// loadDuration bounds each load test (GOTENSOR_LOAD_SECONDS lengthens it).
func loadDuration() time.Duration {
	if s := os.Getenv("GOTENSOR_LOAD_SECONDS"); s != "" {
		if d, err := time.ParseDuration(s + "s"); err == nil {
			return d
		}
	}
	return 1500 * time.Millisecond
}

// runLoad drives one server with a bounded number of clients for a bounded
// time: each client owns keys it writes, reads back and deletes (checking
// every byte), and all of them read a shared set of keys.
func runLoad(t *testing.T, open func() (store.Store, error), clients int) {
	shared := map[string][]byte{}
	seed, err := open()
	if err != nil {
		t.Fatal(err)
	}
	defer seed.Close()
	for i := range 8 {
		k := fmt.Sprintf("shared/%d", i)
		shared[k] = bytes.Repeat([]byte{byte(i)}, 64<<10+i)
		if err := seed.Put(ctx, k, shared[k]); err != nil {
			t.Fatal(err)
		}
	}
	stop := time.Now().Add(loadDuration())
	var ops atomic.Int64
	var wg sync.WaitGroup
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, err := open()
			if err != nil {
				t.Error(err)
				return
			}
			defer st.Close()
			rng := rand.New(rand.NewPCG(uint64(c), 1))
			for i := 0; time.Now().Before(stop); i++ {
				k := fmt.Sprintf("c%d/%d", c, i%16)
				v := make([]byte, 1+rng.IntN(1<<20))
				for j := range v {
					v[j] = byte(i + j*c)
				}
				if err := st.Put(ctx, k, v); err != nil {
					t.Errorf("put %s: %v", k, err)
					return
				}
				got, err := st.Get(ctx, k)
				if err != nil || !bytes.Equal(got, v) {
					t.Errorf("get %s: %v", k, err)
					return
				}
				sk := fmt.Sprintf("shared/%d", rng.IntN(8))
				if got, err := st.Get(ctx, sk); err != nil || !bytes.Equal(got, shared[sk]) {
					t.Errorf("get %s: %v", sk, err)
					return
				}
				if i%5 == 4 {
					if err := st.Delete(ctx, k); err != nil {
						t.Errorf("delete %s: %v", k, err)
						return
					}
				}
				ops.Add(3)
			}
		}()
	}
	wg.Wait()
	if ops.Load() < int64(clients) {
		t.Fatalf("only %d operations ran", ops.Load())
	}
	t.Logf("%d clients, %d operations in %v", clients, ops.Load(), loadDuration())
}

func TestLoadTCP(t *testing.T) {
	_, addr := startServer(t, "tok", 0)
	runLoad(t, func() (store.Store, error) {
		u, _ := url.Parse("tcp://" + addr + "?token=tok")
		return OpenURL(u)
	}, 8)
}
