//go:build !cgo

package binding

import (
	"github.com/gotensor/gotensor/gotensor/core"
	"github.com/gotensor/gotensor/gotensor/errs"
)

// viewsCross: without cgo no view crosses (DLPack needs C memory); views
// are read as copies.
const viewsCross = false

func crossView(*core.View, int64) (int64, error) {
	return 0, errs.New(errs.Unsupported, "views need cgo")
}

// releaseFreed has nothing to release without cgo.
func releaseFreed() {}

// DropView does nothing without cgo.
func DropView(int64) {}

// SetPinFuncs does nothing without cgo.
func SetPinFuncs(register, unregister uintptr, flags uint32) {}
