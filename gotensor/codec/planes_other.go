//go:build !amd64

package codec

var haveSSSE3 = false

func splitFast2(hi, lo, src []byte, n int) int     { return 0 }
func mergeFast2(dst, hi, lo []byte, n int) int     { return 0 }
func splitFast4(p [][]byte, src []byte, n int) int { return 0 }
func mergeFast4(dst []byte, p [][]byte, n int) int { return 0 }

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
