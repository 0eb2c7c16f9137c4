package pybind

import (
	"encoding/json"
	"fmt"
	"sync"

	"github.com/gotensor/gotensor/gotensor/binding"
	"github.com/gotensor/gotensor/gotensor/errs"
)

// gopy raises a returned error as RuntimeError(err.Error()), text only. So
// that Python need not parse that text, every exported function ends with
// guard, which keeps a failed call's error as a binding.Failure under the
// calling OS thread (a call from C runs its Go code on the caller's
// thread); Python's handler of the RuntimeError, on that same thread,
// takes it with TakeError. Calls that succeed keep nothing.

var failures sync.Map // OS thread id -> binding.Failure

// guard turns a panic into an Internal error and keeps *errp, if any, for
// TakeError. Use it as `defer guard(&err)` in every function that returns
// an error.
func guard(errp *error) {
	if r := recover(); r != nil {
		*errp = &errs.Error{Kind: errs.Internal, Msg: fmt.Sprintf("panic: %v", r)}
	}
	if *errp != nil {
		failures.Store(threadID(), binding.FailureOf(*errp))
	}
}

// TakeError returns the error of the calling thread's last failed call as
// JSON {"kind", "key", "message"} (binding.Failure) and forgets it; "" when
// the thread has none.
func TakeError() string {
	f, ok := failures.LoadAndDelete(threadID())
	if !ok {
		return ""
	}
	b, err := json.Marshal(f)
	if err != nil { // unreachable: a Failure holds only strings
		return ""
	}
	return string(b)
}
