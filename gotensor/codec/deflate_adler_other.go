//go:build !amd64

package codec

// adler32Go is Adler-32 without libdeflate.
func adler32Go(b []byte) uint32 { return adler32Words(b) }
