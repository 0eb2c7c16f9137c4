package pybind

import "syscall"

// threadID identifies the calling OS thread.
func threadID() uint64 { return uint64(syscall.Gettid()) }
