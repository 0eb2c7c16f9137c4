package binding

import (
	"context"
	"testing"
	"time"

	"github.com/gotensor/gotensor/gotensor/core"
	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/store"
)

// blocking is a store whose every operation waits for its context.
type blocking struct{}

func (blocking) Put(ctx context.Context, _ string, _ []byte) error { <-ctx.Done(); return ctx.Err() }
func (blocking) Get(ctx context.Context, _ string) ([]byte, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}
func (blocking) Head(ctx context.Context, _ string, _ int) ([]byte, int64, error) {
	<-ctx.Done()
	return nil, 0, ctx.Err()
}
func (blocking) Delete(ctx context.Context, _ string) error { <-ctx.Done(); return ctx.Err() }
func (blocking) Has(ctx context.Context, _ string) (bool, error) {
	<-ctx.Done()
	return false, ctx.Err()
}
func (blocking) List(ctx context.Context, _ string) ([]string, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}
func (blocking) Usage() store.Usage { return store.Usage{} }
func (blocking) URL() string        { return "blocking://" }
func (blocking) Close() error       { return nil }
func (blocking) Caps() store.Caps   { return store.Caps{} }

func blockingHandle() int64 { return stores.add(&openStore{Store: core.Wrap(blocking{})}) }

func TestTimeoutsReachTheStore(t *testing.T) {
	h := blockingHandle()
	defer Close(h)
	const ms = int64(time.Millisecond)
	t0 := time.Now()
	if err := Write(h, "k", []byte{0, 0}, int16Code, []int64{1}, "none", -1, 30*ms); !errs.Is(err, errs.Timeout) {
		t.Fatal("write:", err)
	}
	if _, err := Read(h, "k", nil, make([]int64, MetaWords), -1, 30*ms); !errs.Is(err, errs.Timeout) {
		t.Fatal("read:", err)
	}
	if err := Delete(h, "k", 30*ms); !errs.Is(err, errs.Timeout) {
		t.Fatal("delete:", err)
	}
	if _, err := Keys(h, "", 30*ms); !errs.Is(err, errs.Timeout) {
		t.Fatal("keys:", err)
	}
	if d := time.Since(t0); d > 5*time.Second {
		t.Fatalf("timeouts took %v", d)
	}
	// async: a per-call timeout, and cancellation of a running operation
	timed := StartWrite(h, "k", []byte{0, 0}, int16Code, []int64{1}, "none", -1, 30*ms)
	queued := StartReadInto(h, "k", make([]byte, 2), int16Code, []int64{1}, -1, -1) // behind timed
	if c := completions(t, timed)[timed]; c.Kind != errs.Timeout.String() {
		t.Fatalf("timed write: %+v", c)
	}
	time.Sleep(10 * time.Millisecond)
	if !Cancel(queued) {
		t.Fatal("queued read not running")
	}
	if c := completions(t, queued)[queued]; c.Kind != errs.Timeout.String() {
		t.Fatalf("cancelled read: %+v", c)
	}
	if Cancel(queued) {
		t.Fatal("a finished operation was cancelled")
	}
}

func TestStoreDefaultTimeoutFromURL(t *testing.T) {
	if _, err := urlTimeout("tcp://h:1?timeout=bad"); !errs.Is(err, errs.InvalidArgument) {
		t.Fatal(err)
	}
	if d, err := urlTimeout("tcp://h:1?token=x&timeout=250ms"); err != nil || d != 250*time.Millisecond {
		t.Fatal(d, err)
	}
	h := stores.add(&openStore{Store: core.Wrap(blocking{}), timeout: 20 * time.Millisecond})
	defer Close(h)
	if _, err := Exists(h, "k", 0); !errs.Is(err, errs.Timeout) {
		t.Fatal(err)
	}
}
