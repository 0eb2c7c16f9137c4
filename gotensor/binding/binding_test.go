package binding

import (
	"strings"
	"testing"
	"unsafe"

	"github.com/gotensor/gotensor/gotensor/errs"
)

func TestAsyncCompletions(t *testing.T) {
	h, err := Open("mem://")
	if err != nil {
		t.Fatal(err)
	}
	defer Close(h)
	src := []byte{1, 2, 3, 4}
	wid := StartWrite(h, "k", src, "int16", "2", "none", -1)
	fid := StartFetch(h, "missing")
	results := map[string]string{}
	for len(results) < 2 {
		for _, rec := range strings.Split(Completions(1000), recordSep) {
			if rec == "" {
				continue
			}
			f := strings.SplitN(rec, fieldSep, 3)
			results[f[0]] = f[1]
		}
	}
	if kind, ok := results[itoa(wid)]; !ok || kind != "" {
		t.Fatalf("write: %v", results)
	}
	if results[itoa(fid)] != errs.KeyNotFound.String() {
		t.Fatalf("missing key not reported: %v", results)
	}
	if Completions(1) != "" {
		t.Fatal("spurious completion")
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
	if err := Write(999, "k", nil, "int8", "0", "none", -1); !errs.Is(err, errs.InvalidArgument) {
		t.Fatal(err)
	}
	h, _ := Open("mem://")
	Close(h)
	if err := Close(h); !errs.Is(err, errs.InvalidArgument) {
		t.Fatal(err)
	}
}
