package planes

import "testing"

// fill sets every byte, for lengths around the doubling copies' steps.
func TestFill(t *testing.T) {
	for _, c := range []byte{0, 1, 0xa5} {
		for n := 0; n <= 300; n++ {
			b := make([]byte, n+1)
			for i := range b {
				b[i] = ^c
			}
			fill(b[:n], c)
			for i := 0; i < n; i++ {
				if b[i] != c {
					t.Fatalf("fill(%d bytes, %#x): byte %d is %#x", n, c, i, b[i])
				}
			}
			if b[n] != ^c {
				t.Fatalf("fill(%d bytes) wrote past the end", n)
			}
		}
	}
}
