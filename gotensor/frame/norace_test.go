//go:build !race

package frame

const flipStride = 1
