package binding

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

var float32Code = int64(tensor.Float32)

// weightsLike are n float32s of a slowly varying sequence: data zstd codes
// at its usual pace (neither all zeros nor noise).
func weightsLike(n int, seed byte) []byte {
	b := make([]byte, 4*n)
	for i := range n {
		b[4*i+2], b[4*i+3] = byte(i>>7)+seed, 0x3c
	}
	return b
}

// A write that raises Timeout stored nothing, on mem:// and file://: the
// old value stays, and the deadline stops the coding within a chunk's
// work, not after the whole tensor (zstd on 64 MiB takes seconds here).
func TestTimedOutWriteStoresNothing(t *testing.T) {
	for _, url := range []string{"mem://", "file://" + t.TempDir()} {
		h, err := Open(url)
		if err != nil {
			t.Fatal(err)
		}
		old := weightsLike(1<<10, 1)
		if err := Write(h, "k", old, float32Code, []int64{1 << 10}, "none", -1, 0); err != nil {
			t.Fatal(err)
		}
		big := weightsLike(16<<20, 2)
		begun := time.Now()
		err = Write(h, "k", big, float32Code, []int64{16 << 20}, "zstd", -1, int64(time.Millisecond))
		took := time.Since(begun)
		if !errs.Is(err, errs.Timeout) {
			t.Fatalf("%s: a 1 ms write of 64 MiB with zstd: %v", url, err)
		}
		if took > 2*time.Second {
			t.Errorf("%s: the 1 ms deadline stopped the write after %v", url, took)
		}
		back := make([]byte, len(old))
		if err := ReadInto(h, "k", back, float32Code, []int64{1 << 10}, -1, 0); err != nil || !bytes.Equal(back, old) {
			t.Fatalf("%s: after the timed-out write the key reads %v (old value kept: %v)", url, err, bytes.Equal(back, old))
		}
		Close(h)
	}
}

// Cancel of an operation that has not changed the store reports true, and
// it then changes nothing; the same Cancel after a write finished reports
// false and the write stands.
func TestCancelledWriteStoresNothing(t *testing.T) {
	h, _ := Open("mem://")
	defer Close(h)
	for trial := range 20 {
		key := fmt.Sprintf("k%d", trial)
		raw := weightsLike(4<<20, byte(trial))
		op := StartWrite(h, key, raw, float32Code, []int64{4 << 20}, "zstd", -1, 0)
		cancelled := Cancel(op)
		c := completions(t, op)[op]
		ok, err := Exists(h, key, 0)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case cancelled && ok:
			t.Fatalf("trial %d: Cancel said true, and the write was stored (%+v)", trial, c)
		case !cancelled && c.Kind == "" && !ok:
			t.Fatalf("trial %d: the write succeeded and was not stored", trial)
		}
	}
	op := StartWrite(h, "done", weightsLike(16, 0), float32Code, []int64{16}, "none", -1, 0)
	completions(t, op)
	if Cancel(op) {
		t.Fatal("a finished write was cancelled")
	}
}
