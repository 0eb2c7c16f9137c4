package pybind

import (
	"encoding/json"
	"fmt"
	"runtime"
	"sync"
	"testing"

	"github.com/gotensor/gotensor/gotensor/binding"
)

// take is TakeError decoded; the caller's goroutine must be locked to its
// thread, as a call from Python is.
func take(t *testing.T) (binding.Failure, bool) {
	t.Helper()
	js := TakeError()
	if js == "" {
		return binding.Failure{}, false
	}
	var f binding.Failure
	if err := json.Unmarshal([]byte(js), &f); err != nil {
		t.Fatalf("TakeError %q: %v", js, err)
	}
	return f, true
}

func TestFailedCallLeavesItsFieldsForItsThread(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	h, err := Open("mem://")
	if err != nil {
		t.Fatal(err)
	}
	defer Close(h)
	if _, ok := take(t); ok {
		t.Fatal("a failure before any failed call")
	}
	if _, err := Stat(h, "missing \"one\"", 0); err == nil {
		t.Fatal("stat of a missing key succeeded")
	}
	f, ok := take(t)
	want := binding.Failure{Kind: "KeyNotFound", Key: "missing \"one\"", Message: `key "missing \"one\"" not found in mem://`}
	if !ok || f != want {
		t.Fatalf("got %+v, want %+v", f, want)
	}
	if _, ok := take(t); ok {
		t.Fatal("a failure is taken once")
	}
	if err := Panic(); err == nil {
		t.Fatal("Panic returned no error")
	}
	if f, _ := take(t); f != (binding.Failure{Kind: "Internal", Message: "panic: deliberate panic"}) {
		t.Fatalf("panic: %+v", f)
	}
	if _, err := Exists(h, "present", 0); err != nil {
		t.Fatal(err)
	}
	if _, ok := take(t); ok {
		t.Fatal("a successful call left a failure")
	}
}

// Threads failing at the same time each take their own error.
func TestThreadsTakeTheirOwnFailures(t *testing.T) {
	h, _ := Open("mem://")
	defer Close(h)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			key := fmt.Sprintf("missing-%d", i)
			for range 200 {
				if err := Delete(h, key, 0); err == nil {
					t.Error("delete of a missing key succeeded")
					return
				}
				runtime.Gosched()
				if f, ok := take(t); !ok || f.Key != key {
					t.Errorf("thread %d took %+v", i, f)
					return
				}
			}
		}()
	}
	wg.Wait()
}
