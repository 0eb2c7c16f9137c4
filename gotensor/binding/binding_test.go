package binding

import (
	"encoding/json"
	"testing"
	"time"
	"unsafe"

	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// seen holds completions drained while waiting for other operations.
var seen = map[int64]Completion{}

// completions waits for the operations ops and returns their records.
func completions(t *testing.T, ops ...int64) map[int64]Completion {
	t.Helper()
	out := map[int64]Completion{}
	deadline := time.Now().Add(20 * time.Second)
	for {
		for _, op := range ops {
			if c, ok := seen[op]; ok {
				out[op] = c
				delete(seen, op)
			}
		}
		if len(out) == len(ops) {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d operations completed", len(out), len(ops))
		}
		recs := Completions(200)
		if recs == "" {
			continue
		}
		var cs []Completion
		if err := json.Unmarshal([]byte(recs), &cs); err != nil {
			t.Fatalf("completion records %q: %v", recs, err)
		}
		for _, c := range cs {
			seen[c.Op] = c
		}
	}
}

var int16Code = int64(tensor.Int16)

func TestAsyncCompletions(t *testing.T) {
	h, err := Open("mem://")
	if err != nil {
		t.Fatal(err)
	}
	defer Close(h)
	src := []byte{1, 2, 3, 4}
	// keys and errors holding the old record separators, quotes and newlines
	key := "k\x1e\x1f\"\\"
	wid := StartWrite(h, key, src, int16Code, []int64{2}, "none", -1, 0)
	meta := make([]int64, MetaWords)
	fid := StartRead(h, "missing\x1e\x1f", nil, meta, -1, 0)
	res := completions(t, wid, fid)
	if c := res[wid]; c.Kind != "" {
		t.Fatalf("write: %+v", c)
	}
	if c := res[fid]; c.Kind != errs.KeyNotFound.String() {
		t.Fatalf("missing key not reported: %+v", c)
	}
	if Completions(1) != "" {
		t.Fatal("spurious completion")
	}
	dst := make([]byte, 4)
	if fh, err := Read(h, key, dst, meta, -1, 0); err != nil || fh != 0 || string(dst) != string(src) {
		t.Fatal(fh, err, dst)
	}
	if meta[0] != int16Code || meta[1] != 1 || meta[2] != 4 || meta[3] != 2 {
		t.Fatal("meta", meta[:4])
	}
}

func TestReadFallsBackToFetchHandle(t *testing.T) {
	h, _ := Open("mem://")
	defer Close(h)
	src := make([]byte, 4096)
	for i := range src {
		src[i] = byte(i)
	}
	if err := Write(h, "big", src, int16Code, []int64{64, 32}, "none", -1, 0); err != nil {
		t.Fatal(err)
	}
	meta := make([]int64, MetaWords)
	fh, err := Read(h, "big", make([]byte, 1024), meta, -1, 0)
	if err != nil || fh == 0 {
		t.Fatal(fh, err)
	}
	if meta[1] != 2 || meta[2] != 4096 || meta[3] != 64 || meta[4] != 32 {
		t.Fatal("meta", meta[:5])
	}
	dst := make([]byte, 4096)
	if err := Decode(fh, dst, -1, 0); err != nil || string(dst) != string(src) {
		t.Fatal(err)
	}
}

func TestBytesAt(t *testing.T) {
	buf := []byte("hello")
	b, err := BytesAt(uintptr(unsafe.Pointer(&buf[0])), 5)
	if err != nil || string(b) != "hello" {
		t.Fatal(b, err)
	}
	if _, err := BytesAt(0, 5); !errs.Is(err, errs.InvalidArgument) {
		t.Fatal(err)
	}
	if _, err := BytesAt(0, -1); !errs.Is(err, errs.InvalidArgument) {
		t.Fatal(err)
	}
	if b, err := BytesAt(0, 0); err != nil || len(b) != 0 {
		t.Fatal(b, err)
	}
}

func TestHandlesAreChecked(t *testing.T) {
	if err := Write(999, "k", nil, int64(tensor.Int8), []int64{0}, "none", -1, 0); !errs.Is(err, errs.InvalidArgument) {
		t.Fatal(err)
	}
	h, _ := Open("mem://")
	if err := Write(h, "k", nil, 9999, nil, "none", -1, 0); !errs.Is(err, errs.InvalidArgument) {
		t.Fatal("bad dtype code:", err)
	}
	Close(h)
	if err := Close(h); !errs.Is(err, errs.InvalidArgument) {
		t.Fatal(err)
	}
}
