// Package half converts float32 to and from IEEE half and bfloat16,
// rounding to nearest even, as torch does.
package half

import "math"

// F16ToF32 converts normal numbers inline and the rest in f16ToF32Special.
func F16ToF32(h uint16) float32 {
	if e := h & 0x7C00; e != 0 && e != 0x7C00 {
		return math.Float32frombits(uint32(h&0x8000)<<16 | (uint32(h&0x7FFF)+112<<10)<<13)
	}
	return f16ToF32Special(h)
}

func f16ToF32Special(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := int(h>>10) & 0x1F
	mant := uint32(h & 0x3FF)
	switch {
	case exp == 0x1F: // inf, NaN
		return math.Float32frombits(sign | 0x7F800000 | mant<<13)
	case exp == 0:
		if mant == 0 {
			return math.Float32frombits(sign)
		}
		f := float32(mant) * (1.0 / (1 << 24)) // subnormal: mant * 2^-24
		if sign != 0 {
			f = -f
		}
		return f
	}
	return math.Float32frombits(sign | uint32(exp-15+127)<<23 | mant<<13)
}

// F32ToF16 converts what becomes a normal half inline and the rest in
// f32ToF16Special.
func F32ToF16(f float32) uint16 {
	b := math.Float32bits(f)
	if e := b >> 23 & 0xFF; e-113 < 29 { // exponent 2^-14 .. 2^14: normal, even after rounding up
		m := b&0x7FFFFFFF - 112<<23
		return uint16(b>>16)&0x8000 | uint16((m+0xFFF+(m>>13)&1)>>13)
	}
	return f32ToF16Special(f)
}

func f32ToF16Special(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int(b>>23) & 0xFF
	mant := b & 0x7FFFFF
	if exp == 0xFF { // inf, NaN (keep a quiet NaN)
		if mant != 0 {
			return sign | 0x7E00
		}
		return sign | 0x7C00
	}
	e := exp - 127 + 15
	if e >= 0x1F {
		return sign | 0x7C00 // overflow to inf
	}
	if e <= 0 { // subnormal or zero in half
		if e < -10 {
			return sign
		}
		mant |= 0x800000
		shift := uint32(14 - e)
		half := mant >> shift
		rem := mant & (1<<shift - 1)
		mid := uint32(1) << (shift - 1)
		if rem > mid || (rem == mid && half&1 == 1) {
			half++
		}
		return sign | uint16(half)
	}
	half := uint32(e)<<10 | mant>>13
	rem := mant & 0x1FFF
	if rem > 0x1000 || (rem == 0x1000 && half&1 == 1) {
		half++ // may carry into the exponent, up to inf: correct
	}
	return sign | uint16(half)
}

// F32ToBF16 rounds f to bfloat16 (a NaN stays a quiet NaN).
func F32ToBF16(f float32) uint16 {
	b := math.Float32bits(f)
	if b&0x7FFFFFFF > 0x7F800000 {
		return uint16(b>>16) | 0x40 // quiet NaN
	}
	b += 0x7FFF + (b>>16)&1
	return uint16(b >> 16)
}
