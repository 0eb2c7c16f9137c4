//go:build !amd64 || noasm

package deflate

import "github.com/gotensor/gotensor/gotensor/internal/adler32"

var haveAVX2 = false

// mergeAdlerKernel has no kernel here: mergeAdler2 merges and sums in Go.
func mergeAdlerKernel(_, _, _ []byte, _ *[2]adler32.Lanes) bool { return false }
