package core

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/gotensor/gotensor/gotensor/store"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// slowUsage is a store whose Usage, after its first, waits for release:
// a node's answer queued behind bulk bytes on a busy connection.
type slowUsage struct {
	store.Store
	calls   atomic.Int32
	release chan struct{}
}

func (s *slowUsage) Usage() store.Usage {
	if s.calls.Add(1) > 1 {
		<-s.release
	}
	return s.Store.Usage()
}

// Only a store's first weighing waits for its usage; later ones go on
// with the usage they have while a stale one is refreshed.
func TestAutoDoesNotWaitForAUsageRefresh(t *testing.T) {
	st := &slowUsage{Store: store.NewMem("mem://usage", 0), release: make(chan struct{})}
	defer close(st.release)
	s := Wrap(st)
	defer s.Close()
	clock := &fakeClock{t: time.Unix(0, 0)}
	s.now, s.speed = clock.now, fixedSpeeds
	meta := tensor.Meta{DType: tensor.BFloat16, Shape: []int64{1 << 19}}
	raw := bf16Weights(1 << 19)
	for i := range 3 {
		s.choices = choices{} // weigh again
		clock.advance(2 * usageTTL)
		if i > 0 {
			time.Sleep(usageTTL + 100*time.Millisecond) // for a cache on the wall clock
		}
		done := make(chan error, 1)
		go func() { done <- s.WriteTensor(ctx, "w", meta, raw, "auto") }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("write %d waited on the store's usage", i)
		}
	}
	if n := st.calls.Load(); n != 2 { // the first, and one refresh still waiting
		t.Errorf("usage asked %d times, want 2", n)
	}
}
