package crc32c

// A CRC is affine in its message: for messages a and b of one length,
// crc(a) ^ crc(b) is the CRC of a^b with no initial or final inversion.
// The CRC of a message after some of its bytes change is therefore its
// old CRC and the linear CRC of the change, which zero bytes before it do
// not affect and the zero bytes after it shift by x^(8z) modulo the
// polynomial, as zlib's crc32_combine computes in O(log z).

// poly is the Castagnoli polynomial, bit-reversed.
const poly = 0x82f63b78

// multModP returns a*b modulo the polynomial (reflected: x^0 is the top bit).
func multModP(a, b uint32) uint32 {
	m := uint32(1) << 31
	var p uint32
	for ; m != 0; m >>= 1 {
		if a&m != 0 {
			p ^= b
			if a&(m-1) == 0 {
				break
			}
		}
		if b&1 != 0 {
			b = b>>1 ^ poly
		} else {
			b >>= 1
		}
	}
	return p
}

// x2n[k] is x^(2^k) modulo the polynomial.
var x2n = func() (t [64]uint32) {
	p := uint32(1) << 30 // x^1
	for k := range t {
		t[k] = p
		p = multModP(p, p)
	}
	return t
}()

// xPow8 returns x^(8n) modulo the polynomial.
func xPow8(n int64) uint32 {
	p := uint32(1) << 31 // x^0
	for k := 3; n != 0; n, k = n>>1, k+1 {
		if n&1 != 0 {
			p = multModP(x2n[k&63], p)
		}
	}
	return p
}

// shift returns the linear CRC of a message followed by n zero bytes,
// given the linear CRC (no inversions) of the message.
func shift(lin uint32, n int64) uint32 { return multModP(xPow8(n), lin) }

// Patch returns the CRC-32C of a message of total bytes whose CRC-32C was
// crc after its bytes [off, off+len(old)) changed from old to new (of
// old's length); it reads only old and new.
func Patch(crc uint32, total, off int64, old, new []byte) uint32 {
	if len(old) != len(new) || off < 0 || off+int64(len(old)) > total {
		panic("crc32c: Patch of a range outside the message")
	}
	var lin uint32 // linear CRC of old^new, byte by byte through the table
	for i := range old {
		lin = table[byte(lin)^old[i]^new[i]] ^ lin>>8
	}
	return crc ^ shift(lin, total-off-int64(len(old)))
}

// Combine returns the CRC-32C of a followed by b, given crcA and crcB and
// b's length.
func Combine(crcA, crcB uint32, lenB int64) uint32 {
	return multModP(xPow8(lenB), crcA) ^ crcB
}
