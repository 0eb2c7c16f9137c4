//go:build !amd64 || noasm

package planes

// huffFast is false: huff0's own decoder (with its assembly where it has
// some) decodes planes' 4X blocks. Tests set it to run the Go loops.
var huffFast = false

var (
	huffRounds4   = huffRounds4Go
	huffRounds1   = huffRounds1Go
	huffRounds4X3 = huffRounds4X3Go
	huffRounds1X3 = huffRounds1X3Go
)

func huffRounds2(a, b *huffBits, vals *[256]uint16, lens *[256]uint8, blk []byte, k int) {
	huffRounds2Go(a, b, vals, lens, blk, k)
}
