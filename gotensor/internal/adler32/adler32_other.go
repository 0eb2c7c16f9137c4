//go:build !amd64 || noasm

package adler32

// asm is false: no assembly in this build (the tag noasm, or not amd64).
var asm = false

func blocksAVX2(p []byte, v *Lanes) { blocksGo(p, v) }
