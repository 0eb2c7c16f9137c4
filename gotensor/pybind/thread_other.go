//go:build !linux

package pybind

// #include <pthread.h>
import "C"

import "unsafe"

// threadID identifies the calling OS thread.
func threadID() uint64 {
	t := C.pthread_self()
	return uint64(*(*uintptr)(unsafe.Pointer(&t)))
}
