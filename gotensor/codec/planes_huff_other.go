//go:build !amd64

package codec

// huffFast is false: huff0's own decoder (with its assembly where it has
// some) decodes planes' 4X blocks. Tests set it to run the Go loops.
var huffFast = false

var (
	huffRounds4 = huffRounds4Go
	huffRounds1 = huffRounds1Go
)
