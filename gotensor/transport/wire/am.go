package wire

import "encoding/binary"

// Over UCX a message is one active message: its AM header carries the
// 24-byte message header and the key, its data the payload, which UCX
// moves eagerly or by rendezvous (zero-copy into the receiver's buffer).

// AMHeader encodes m's header and key for a payload of payloadLen bytes.
func AMHeader(m *Message, payloadLen int) []byte {
	h := m.Header.withPayload(m.Key, uint64(payloadLen))
	b := make([]byte, HeaderSize+len(m.Key))
	h.Encode(b)
	copy(b[HeaderSize:], m.Key)
	return b
}

// ParseAMHeader checks an AM header against the payload length UCX
// announced, before any payload buffer is allocated.
func ParseAMHeader(b []byte, payloadLen, maxPayload uint64) (*Message, error) {
	if len(b) < HeaderSize {
		return nil, Protocol("active message header of %d bytes", len(b))
	}
	m := &Message{}
	m.Decode(b)
	if err := m.check(maxPayload); err != nil {
		return nil, err
	}
	switch {
	case len(b) != HeaderSize+int(m.KeyLen):
		return nil, Protocol("header says key of %d bytes, message carries %d", m.KeyLen, len(b)-HeaderSize)
	case m.Length == LongPayload && m.Arg < LongPayload:
		return nil, Protocol("long-payload marker on a payload of %d bytes", m.Arg)
	case m.PayloadLen() != payloadLen:
		return nil, Protocol("header says payload of %d bytes, message carries %d", m.PayloadLen(), payloadLen)
	}
	m.Key = string(b[HeaderSize:])
	return m, nil
}

// RMADesc names client memory the server may read or write once:
// u64 address, u64 length, then the packed UCX remote key.
type RMADesc struct {
	Addr, Length uint64
	Rkey         []byte
}

// MaxRkey bounds a packed remote key.
const MaxRkey = 4096

func (d *RMADesc) Encode() []byte {
	b := make([]byte, 16+len(d.Rkey))
	binary.LittleEndian.PutUint64(b, d.Addr)
	binary.LittleEndian.PutUint64(b[8:], d.Length)
	copy(b[16:], d.Rkey)
	return b
}

// ParseRMADesc checks a descriptor of at most maxLen bytes of remote memory.
func ParseRMADesc(b []byte, maxLen uint64) (*RMADesc, error) {
	if len(b) < 17 || len(b) > 16+MaxRkey {
		return nil, Protocol("memory descriptor of %d bytes", len(b))
	}
	d := &RMADesc{Addr: binary.LittleEndian.Uint64(b), Length: binary.LittleEndian.Uint64(b[8:]), Rkey: b[16:]}
	if d.Length == 0 || d.Length > maxLen {
		return nil, Protocol("remote buffer of %d bytes (limit %d)", d.Length, maxLen)
	}
	return d, nil
}
