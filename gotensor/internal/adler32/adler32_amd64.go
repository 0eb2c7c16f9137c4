//go:build amd64 && !noasm

package adler32

import (
	"golang.org/x/sys/cpu"

	"github.com/gotensor/gotensor/gotensor/internal/kernels"
)

// asm: whole blocks go to blocksAVX2 (tests turn it off to run the Go
// twin alone).
var asm = cpu.X86.HasAVX2

// blocksAVX2 is blocksGo in AVX2 assembly; p holds at least one whole
// block.
//
//go:noescape
func blocksAVX2(p []byte, v *Lanes)

func init() {
	kernels.Register("adler32.avx2", &asm)
}
