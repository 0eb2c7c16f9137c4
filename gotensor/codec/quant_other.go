//go:build !amd64

package codec

func f32ToBF16Fast(dst []byte, src []float32) int { return 0 }
func quantGroupsFast(data []byte, pairs, x []float32, group, bits int, levels float32) int {
	return 0
}
func levels4Fast(dst, sc, mn []float32) int                                { return 0 }
func nibblesGroupsFast(out, in, words []byte, groups, half, elem int) bool { return false }

func nibbleCodesFast(out, in []byte, shift uint) int { return 0 }

var haveAVX2, haveF16C = false, false
