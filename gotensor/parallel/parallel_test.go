package parallel

import (
	"errors"
	"sync/atomic"
	"testing"

	"github.com/gotensor/gotensor/gotensor/errs"
)

func TestForVisitsEveryIndexOnce(t *testing.T) {
	for _, w := range []int{1, 2, 7} {
		SetWorkers(w)
		seen := make([]atomic.Int32, 1000)
		if err := For(len(seen), func(i int) error { seen[i].Add(1); return nil }); err != nil {
			t.Fatal(err)
		}
		for i := range seen {
			if seen[i].Load() != 1 {
				t.Fatalf("workers=%d: index %d visited %d times", w, i, seen[i].Load())
			}
		}
	}
	SetWorkers(0)
}

func TestForStopsOnError(t *testing.T) {
	SetWorkers(4)
	defer SetWorkers(0)
	boom := errors.New("boom")
	var ran atomic.Int32
	err := For(100000, func(i int) error {
		ran.Add(1)
		if i == 10 {
			return boom
		}
		return nil
	})
	if err != boom {
		t.Fatalf("got %v", err)
	}
	if ran.Load() == 100000 {
		t.Fatal("kept going after the error")
	}
}

func TestForBytesIsSerialForSmallWork(t *testing.T) {
	SetWorkers(4)
	defer SetWorkers(0)
	order := []int{}
	ForBytes(50, MinParallelBytes-1, func(i int) error { order = append(order, i); return nil }) // no lock: must be serial
	for i, v := range order {
		if v != i {
			t.Fatalf("small work ran out of order: %v", order)
		}
	}
}

// A panicking worker is its call's Internal error; the process lives.
func TestPanicIsInternalError(t *testing.T) {
	for _, w := range []int{1, 4} {
		SetWorkers(w)
		err := For(100, func(i int) error {
			if i == 37 {
				panic("boom")
			}
			return nil
		})
		if !errs.Is(err, errs.Internal) {
			t.Fatalf("workers=%d: %v", w, err)
		}
		if err := ForBytes(3, 10, func(int) error { panic("small") }); !errs.Is(err, errs.Internal) {
			t.Fatalf("serial ForBytes: %v", err)
		}
		if err := Safe(func() error { var m map[int]int; m[0] = 1; return nil }); !errs.Is(err, errs.Internal) {
			t.Fatalf("Safe: %v", err)
		}
	}
	SetWorkers(0)
}
