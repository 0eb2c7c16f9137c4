//go:build race

package frame

// Under the race detector the exhaustive corruption tests flip every 7th
// bit: the plain `go test` run flips them all.
const flipStride = 7
