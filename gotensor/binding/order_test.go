package binding

import (
	"encoding/binary"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/gotensor/gotensor/gotensor/errs"
)

// One thread's operations on a key take effect in the order it submitted
// them: a read started after 20 async writes sees the last one.
func TestPerKeyOrder(t *testing.T) {
	h, _ := Open("mem://")
	defer Close(h)
	const writes = 20
	for trial := 0; trial < 30; trial++ {
		bufs := make([][]byte, writes)
		ops := make([]int64, writes)
		for i := range bufs {
			bufs[i] = make([]byte, 8<<10)
			binary.LittleEndian.PutUint64(bufs[i], uint64(i))
			ops[i] = StartWrite(h, "o", bufs[i], int16Code, []int64{4 << 10}, "auto", -1, 0)
		}
		dst := make([]byte, 8<<10)
		rid := StartReadInto(h, "o", dst, int16Code, []int64{4 << 10}, -1, 0)
		// a sync read on the key waits for the async operations before it
		sync := make([]byte, 8<<10)
		if err := ReadInto(h, "o", sync, int16Code, []int64{4 << 10}, -1, 0); err != nil {
			t.Fatal(err)
		}
		if got := binary.LittleEndian.Uint64(sync); got != writes-1 {
			t.Fatalf("trial %d: sync read saw write %d, want %d", trial, got, writes-1)
		}
		res := completions(t, append(ops, rid)...)
		for _, c := range res {
			if c.Kind != "" {
				t.Fatalf("trial %d: %+v", trial, c)
			}
		}
		if got := binary.LittleEndian.Uint64(dst); got != writes-1 {
			t.Fatalf("trial %d: async read saw write %d, want %d", trial, got, writes-1)
		}
		if err := Delete(h, "o", 0); err != nil {
			t.Fatal(err)
		}
	}
	if order.pending.Load() != 0 || len(order.last) != 0 {
		t.Fatalf("turns left behind: %d pending, %d keys", order.pending.Load(), len(order.last))
	}
}

// Different keys do not wait for each other: an operation queued behind a
// blocked one on another key still runs.
func TestKeysStayConcurrent(t *testing.T) {
	h := blockingHandle()
	defer Close(h)
	blocked := StartWrite(h, "a", []byte{0, 0}, int16Code, []int64{1}, "none", -1, -1)
	mem, _ := Open("mem://")
	defer Close(mem)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := Write(h, "b", []byte{0, 0}, int16Code, []int64{1}, "none", -1, int64(50e6)); !errs.Is(err, errs.Timeout) {
			t.Errorf("key b: %v", err) // reaches the store (and times out there) rather than queueing behind a
		}
	}()
	wg.Wait()
	if Cancel(blocked) { // it waits inside the store's Put: past its commit point, so not cancelled, only stopped
		t.Fatal("a write the store had begun was reported cancelled")
	}
	if c := completions(t, blocked)[blocked]; c.Kind != errs.Timeout.String() {
		t.Fatalf("stopped write: %+v", c)
	}
}

// Row writes, row reads and deletes started asynchronously keep the key's
// order too: a row read sees the row write before it, and a delete waits
// for both.
func TestRowsAndDeleteKeepOrder(t *testing.T) {
	h, _ := Open("mem://")
	defer Close(h)
	for trial := 0; trial < 30; trial++ {
		whole := make([]byte, 8*64) // 8 rows of 32 int16s
		w := StartWriteForRows(h, "r", whole, int16Code, []int64{8, 32}, "none", 1, -1, 0)
		row := make([]byte, 64)
		binary.LittleEndian.PutUint16(row, uint16(trial+1))
		wr := StartWriteRows(h, "r", 5, row, int16Code, []int64{1, 32}, -1, 0)
		got := make([]byte, 64)
		rr := StartReadRows(h, "r", 5, got, int16Code, []int64{1, 32}, -1, 0)
		del := StartDelete(h, "r", 0)
		for op, c := range completions(t, w, wr, rr, del) {
			if c.Kind != "" {
				t.Fatalf("trial %d: op %d: %+v", trial, op, c)
			}
		}
		if v := binary.LittleEndian.Uint16(got); v != uint16(trial+1) {
			t.Fatalf("trial %d: row read saw %d", trial, v)
		}
		if ok, err := Exists(h, "r", 0); err != nil || ok {
			t.Fatalf("trial %d: key left after the delete: %v %v", trial, ok, err)
		}
	}
}

// A failed operation's completion carries its error as fields: kind, the
// key it is about, and the message without the kind.
func TestCompletionCarriesFailureFields(t *testing.T) {
	h, _ := Open("mem://")
	defer Close(h)
	key := "gone \"quoted\"\x1e"
	op := StartDelete(h, key, 0)
	c := completions(t, op)[op]
	want := Failure{Kind: "KeyNotFound", Key: key, Message: `key "gone \"quoted\"\x1e" not found in mem://`}
	if c.Failure != want {
		t.Fatalf("got %+v, want %+v", c.Failure, want)
	}
	if (FailureOf(nil) != Failure{}) {
		t.Fatal("a nil error has a failure")
	}
}

// Claim returns the completions of the operations, once they finish, that
// the queue's reader has not drained.
func TestClaim(t *testing.T) {
	h := blockingHandle()
	defer Close(h)
	blocked := StartWrite(h, "a", []byte{0, 0}, int16Code, []int64{1}, "none", -1, -1)
	mem, _ := Open("mem://")
	defer Close(mem)
	quick := StartWrite(mem, "b", []byte{0, 0}, int16Code, []int64{1}, "none", -1, 0)
	if c := completions(t, quick)[quick]; c.Kind != "" {
		t.Fatalf("quick write: %+v", c)
	}
	queued := StartWrite(mem, "c", []byte{0, 0}, int16Code, []int64{1}, "none", -1, 0)
	for {
		if _, running := running.Load(queued); !running {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if got := Claim([]int64{queued}); len(got) != 1 || got[0].Op != queued || got[0].Kind != "" {
		t.Fatalf("a queued completion was not taken: %+v", got)
	}
	go func() {
		time.Sleep(20 * time.Millisecond)
		Cancel(blocked)
	}()
	got := Claim([]int64{quick, blocked}) // quick was drained: only blocked's
	if len(got) != 1 || got[0].Op != blocked || got[0].Kind != errs.Timeout.String() {
		t.Fatalf("claimed %+v", got)
	}
	if recs := Completions(50); recs != "" {
		t.Fatalf("a claimed operation was queued too: %s", recs)
	}
	if Cancel(blocked) {
		t.Fatal("a finished operation was cancelled")
	}
}

// Operations claimed as they finish are reported exactly once: to Claim,
// or to the queue's reader.
func TestClaimRacesReportOnce(t *testing.T) {
	h, _ := Open("mem://")
	defer Close(h)
	for trial := 0; trial < 200; trial++ {
		ops := make([]int64, 8)
		for i := range ops {
			ops[i] = StartWrite(h, fmt.Sprintf("k%d", i), []byte{0, 0}, int16Code, []int64{1}, "none", -1, 0)
		}
		claimed := map[int64]bool{}
		for _, c := range Claim(ops[:4]) {
			claimed[c.Op] = true
		}
		if len(claimed) != 4 {
			t.Fatalf("trial %d: claimed %d of 4", trial, len(claimed))
		}
		var queued []int64
		for _, op := range ops {
			if !claimed[op] {
				queued = append(queued, op)
			}
		}
		completions(t, queued...)
		if recs := Completions(0); recs != "" {
			t.Fatalf("trial %d: reported twice: %s", trial, recs)
		}
	}
}

// A held operation's completion goes to no queue: a Claim finds it after
// it finished, and then it is forgotten.
func TestHoldKeepsTheCompletionForClaim(t *testing.T) {
	h, _ := Open("mem://")
	defer Close(h)
	op := StartWrite(h, "held", []byte{0, 0}, int16Code, []int64{1}, "none", -1, 0)
	if !Hold(op) {
		t.Skip("the write finished before Hold") // rare: nothing to test this time
	}
	v, _ := running.Load(op)
	<-v.(*runningOp).reported
	if recs := Completions(50); recs != "" {
		t.Fatalf("a held operation was queued: %s", recs)
	}
	if got := Claim([]int64{op}); len(got) != 1 || got[0].Op != op || got[0].Kind != "" {
		t.Fatalf("claimed %+v", got)
	}
	if _, known := running.Load(op); known {
		t.Fatal("a claimed operation is still known")
	}
	if Hold(op) {
		t.Fatal("a finished operation was held")
	}
}

// An operation no goroutine has begun (here: every in-flight slot is
// taken) runs on the claiming thread, after the key's operations before it.
func TestClaimRunsAnOperationNotBegun(t *testing.T) {
	b := blockingHandle()
	defer Close(b)
	var blocked []int64
	for i := 0; i < MaxInFlight; i++ {
		blocked = append(blocked, StartWrite(b, fmt.Sprintf("b%d", i), []byte{0, 0}, int16Code, []int64{1}, "none", -1, -1))
	}
	for len(inFlight) < MaxInFlight {
		time.Sleep(time.Millisecond)
	}
	h, _ := Open("mem://")
	defer Close(h)
	w1 := StartWrite(h, "x", []byte{1, 0}, int16Code, []int64{1}, "none", -1, 0)
	w2 := StartWrite(h, "x", []byte{2, 0}, int16Code, []int64{1}, "none", -1, 0)
	dst := make([]byte, 2)
	r := StartReadInto(h, "x", dst, int16Code, []int64{1}, -1, 0)
	got := Claim([]int64{w1, w2, r})
	if len(got) != 3 {
		t.Fatalf("claimed %+v", got)
	}
	for _, c := range got {
		if c.Kind != "" {
			t.Fatalf("claimed %+v", got)
		}
	}
	if dst[0] != 2 {
		t.Fatalf("the read saw write %d, want 2", dst[0])
	}
	for _, op := range blocked {
		Cancel(op)
	}
	completions(t, blocked...)
}
