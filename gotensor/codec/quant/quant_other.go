//go:build !amd64 || noasm

package quant

// No kernels in this build (the tag noasm, or not amd64): the Go loops
// quantize and convert all.
var haveSSSE3, haveAVX2, haveF16C = false, false, false

func minMaxSumFast(x []float32) (mn, mx, sum float32, done bool)                   { return 0, 0, 0, false }
func quantize8Fast(out []byte, x []float32, mn, scale, levels float32) int         { return 0 }
func quantize4Fast(out []byte, x []float32, mn, scale, levels float32) int         { return 0 }
func bf16ToF32Fast(dst []float32, src []byte) int                                  { return 0 }
func dequantize8Fast(dst []float32, q []byte, scale, mn float32) int               { return 0 }
func minMaxColsFast(mn, mx, sum, x []float32) int                                  { return 0 }
func quantizeColsFast(out []byte, even, odd, mn, sc []float32, levels float32) int { return 0 }
func dequantizeColsFast(dst []float32, q []byte, sc, mn []float32) int             { return 0 }
func nibblesFast(out, in []byte, tab *[16]uint32, elem int) int                    { return 0 }
func f16ToF32Fast(dst []float32, src []byte) int                                   { return 0 }
func f32ToF16Fast(dst []byte, src []float32) int                                   { return 0 }
func f32ToBF16Fast(dst []byte, src []float32) int                                  { return 0 }
func quantGroupsFast(data []byte, pairs, x []float32, group, bits int, levels float32) int {
	return 0
}
func levels4Fast(dst, sc, mn []float32) int                                { return 0 }
func nibblesGroupsFast(out, in, words []byte, groups, half, elem int) bool { return false }
func nibbleCodesFast(out, in []byte, shift uint) int                       { return 0 }
