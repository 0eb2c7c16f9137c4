//go:build doca && !fakedoca

package engine

// The real SDK at its standard place; CGO_CFLAGS and CGO_LDFLAGS add others
// (tools/doca-check.sh points them at a header directory and stub libraries).

/*
#cgo CFLAGS: -I/opt/mellanox/doca/include
#cgo LDFLAGS: -ldoca_compress -ldoca_common
#cgo amd64 LDFLAGS: -L/opt/mellanox/doca/lib/x86_64-linux-gnu
#cgo arm64 LDFLAGS: -L/opt/mellanox/doca/lib/aarch64-linux-gnu
*/
import "C"
