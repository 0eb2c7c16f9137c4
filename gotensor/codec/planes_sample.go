package codec

import "math"

// Which planes are worth entropy coding. A mantissa plane of real weights
// is close to uniform: Huffman coding saves a fraction of a percent there
// and costs as much time as the exponent plane, both ways. The decision
// comes from a histogram of a sample, far cheaper than a failed
// compression; the Miller-Madow correction keeps a uniform plane from
// looking a few percent compressible in a small sample.

const (
	sampleRuns   = 8    // runs of elements spread over the chunk
	sampleRunLen = 1024 // elements per run
)

// entropyBits is the order-0 entropy, in bits, of the m bytes counted in
// hist, with the Miller-Madow bias correction.
func entropyBits(hist *[256]uint32, m int) float64 {
	total := float64(m)
	bins, bits := 0, 0.0
	for _, c := range hist {
		if c > 0 {
			bins++
			bits += float64(c) * math.Log2(total/float64(c))
		}
	}
	return bits + float64(bins-1)/(2*math.Ln2) // (bins-1)/2N nats per byte
}

// sampledPlaneBits counts byte plane j of the elements of src (k bytes
// each, rotated when rot) in runs spread over the chunk, and returns the
// entropy of the sample in bits and the sample size.
func sampledPlaneBits(hist *[256]uint32, src []byte, k int, rot bool, j int) (bits float64, m int) {
	n := len(src) / k
	*hist = [256]uint32{}
	runs, runLen := sampleRuns, sampleRunLen
	if n <= runs*runLen {
		runs, runLen = 1, n
	}
	stride := n / runs
	shift := 8 * (k - 1 - j)
	for r := 0; r < runs; r++ {
		run := src[r*stride*k : (r*stride+runLen)*k]
		switch {
		case k == 2 && rot:
			for i := 0; i+1 < len(run); i += 2 {
				v := uint16(run[i]) | uint16(run[i+1])<<8
				hist[byte((v<<1|v>>15)>>shift)]++
			}
		case k == 4 && rot:
			for i := 0; i+3 < len(run); i += 4 {
				v := uint32(run[i]) | uint32(run[i+1])<<8 | uint32(run[i+2])<<16 | uint32(run[i+3])<<24
				hist[byte((v<<1|v>>31)>>shift)]++
			}
		default:
			for i := 0; i+k <= len(run); i += k {
				var v uint64
				for b := 0; b < k; b++ {
					v |= uint64(run[i+b]) << (8 * b)
				}
				if rot {
					v = rotl(v, k)
				}
				hist[byte(v>>shift)]++
			}
		}
		m += runLen
	}
	return entropyBits(hist, m), m
}
