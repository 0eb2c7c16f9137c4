package wire

import "encoding/binary"

// SplicePayload lays out a splice request: the header length (4 bytes),
// the old header, the new header (as long), the length of the replaced
// bytes (8 bytes), then the bytes that replace them.
func SplicePayload(old, header []byte, n int64, data []byte) []byte {
	b := make([]byte, 0, 12+2*len(old)+len(data))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(old)))
	b = append(append(b, old...), header...)
	b = binary.LittleEndian.AppendUint64(b, uint64(n))
	return append(b, data...)
}

// ParseSplice reads a SplicePayload; the slices alias p.
func ParseSplice(p []byte) (old, header []byte, n int64, data []byte, err error) {
	if len(p) < 12 {
		return nil, nil, 0, nil, Protocol("splice payload of %d bytes", len(p))
	}
	h := uint64(binary.LittleEndian.Uint32(p))
	if uint64(len(p)) < 12+2*h {
		return nil, nil, 0, nil, Protocol("splice payload of %d bytes holds no %d-byte headers", len(p), h)
	}
	old, header = p[4:4+h], p[4+h:4+2*h]
	n = int64(binary.LittleEndian.Uint64(p[4+2*h:]))
	if n < 0 {
		return nil, nil, 0, nil, Protocol("splice replaces %d bytes", n)
	}
	return old, header, n, p[12+2*h:], nil
}
