package huffman

import "encoding/binary"

// Counts is a byte histogram kept in four tables, summed at the end: an
// exponent plane repeats a few bytes, and counting runs of one byte in
// one table waits on each increment's store before the next (zstd's
// HIST_count_parallel does the same). Counts[j][b] may be added to
// directly, spreading neighbours over the four tables.
type Counts [4][256]uint32

// Add counts the bytes of p.
func (c *Counts) Add(p []byte) {
	i := 0
	for ; i+8 <= len(p); i += 8 {
		v := binary.LittleEndian.Uint64(p[i:])
		c[0][byte(v)]++
		c[1][byte(v>>8)]++
		c[2][byte(v>>16)]++
		c[3][byte(v>>24)]++
		c[0][byte(v>>32)]++
		c[1][byte(v>>40)]++
		c[2][byte(v>>48)]++
		c[3][byte(v>>56)]++
	}
	for _, v := range p[i:] {
		c[0][v]++
	}
}

// Sum writes the four tables' total into hist.
func (c *Counts) Sum(hist *[256]uint32) {
	for s := range hist {
		hist[s] = c[0][s] + c[1][s] + c[2][s] + c[3][s]
	}
}
