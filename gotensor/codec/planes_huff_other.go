//go:build !amd64

package codec

// huffFast is false: huff0's own decoder, with its assembly where it has
// some, is the faster one without the double-symbol decoder's.
const huffFast = false

var huffRounds4 = huffRounds4Go
