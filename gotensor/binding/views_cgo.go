//go:build cgo

package binding

/*
#include <stdlib.h>
#include "dlpack.h"
*/
import "C"

import (
	"sync/atomic"
	"unsafe"

	"github.com/gotensor/gotensor/gotensor/core"
	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/internal/cowmap"
)

// viewsCross: views cross to Python (DLPack needs cgo).
const viewsCross = true

// crossView makes view id's DLPack managed tensor and returns its address.
func crossView(v *core.View, id int64) (int64, error) {
	m := C.gt_new_view(unsafe.Pointer(unsafe.SliceData(v.Data)), C.int64_t(len(v.Data)), C.int64_t(id))
	if m == nil {
		return 0, errs.New(errs.Internal, "out of memory for a view's record")
	}
	return int64(uintptr(unsafe.Pointer(m))), nil
}

// releaseFreed releases the views whose tensors were freed since the last
// call (their deleters only recorded them): called on the way into the
// binding's calls, and by the sweeper while views are out.
func releaseFreed() {
	head := (*unsafe.Pointer)(unsafe.Pointer(&C.gt_freed_views))
	if atomic.LoadPointer(head) == nil {
		return
	}
	for v := (*C.gtView)(atomic.SwapPointer(head, nil)); v != nil; {
		next := v.next
		releaseView(v)
		v = next
	}
}

// releaseView releases view v and frees its record.
func releaseView(v *C.gtView) {
	viewDone(int64(v.id))
	C.free(unsafe.Pointer(v))
}

// viewAt is the view record at addr (C memory: converted through memory,
// as BytesAt does).
func viewAt(addr int64) *C.gtView {
	a := uintptr(addr)
	return (*C.gtView)(*(*unsafe.Pointer)(unsafe.Pointer(&a)))
}

// freeAsTorch runs the deleter of the managed tensor at addr, as torch
// does when it frees the tensor (tests).
func freeAsTorch(addr int64) { C.gt_run_deleter(viewAt(addr)) }

// DropView releases the view whose managed tensor is at addr, for a caller
// that never handed it to torch (torch calls its deleter otherwise).
func DropView(addr int64) {
	if addr > 0 {
		releaseView(viewAt(addr))
	}
}

// SetPinFuncs installs the CUDA runtime's cudaHostRegister and
// cudaHostUnregister, by address (Python finds them in the runtime torch
// loaded), as the way views of mem://?pinned=true stores are page-locked,
// with cudaHostRegister's flags; 0 for register uninstalls them.
func SetPinFuncs(register, unregister uintptr, flags uint32) {
	if register == 0 || unregister == 0 {
		cowmap.SetPinner(nil)
		return
	}
	cowmap.SetPinner(&cowmap.Pinner{
		Pin: func(p unsafe.Pointer, n int) error {
			if rc := C.gt_call_register(C.uintptr_t(register), p, C.size_t(n), C.uint(flags)); rc != 0 {
				return errs.New(errs.Unavailable, "cudaHostRegister of %d bytes failed (cudaError %d)", n, int(rc))
			}
			return nil
		},
		Unpin: func(p unsafe.Pointer) { C.gt_call_unregister(C.uintptr_t(unregister), p) },
	})
}
