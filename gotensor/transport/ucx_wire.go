package transport

import (
	"encoding/binary"
)

// Over UCX a message is one active message: its AM header carries the
// 24-byte message header and the key, its data the payload, which UCX
// moves eagerly or by rendezvous (zero-copy into the receiver's buffer).

// bye, sent as a handshake message, tells the server a client is leaving:
// endpoints without peer failure detection (shared memory) learn it no
// other way.
const bye = "GTBY"

// amHeader encodes m's header and key.
func amHeader(m *message, payloadLen int) []byte {
	h := m.header
	h.keyLen = uint16(len(m.key))
	if uint64(payloadLen) >= longPayload {
		h.length, h.arg = longPayload, uint64(payloadLen)
	} else {
		h.length = uint32(payloadLen)
	}
	b := make([]byte, headerSize+len(m.key))
	h.put(b)
	copy(b[headerSize:], m.key)
	return b
}

// parseAMHeader checks an AM header against the payload length UCX
// announced, before any payload buffer is allocated.
func parseAMHeader(b []byte, payloadLen, maxPayload uint64) (*message, error) {
	if len(b) < headerSize {
		return nil, protoErr("active message header of %d bytes", len(b))
	}
	m := &message{}
	m.get(b)
	switch {
	case m.op == 0 || m.op >= opMax:
		return nil, protoErr("unknown op %d", m.op)
	case m.keyLen > MaxKey:
		return nil, protoErr("key of %d bytes exceeds %d", m.keyLen, MaxKey)
	case len(b) != headerSize+int(m.keyLen):
		return nil, protoErr("header says key of %d bytes, message carries %d", m.keyLen, len(b)-headerSize)
	case m.length == longPayload && m.arg < longPayload:
		return nil, protoErr("long-payload marker on a payload of %d bytes", m.arg)
	case m.payloadLen() != payloadLen:
		return nil, protoErr("header says payload of %d bytes, message carries %d", m.payloadLen(), payloadLen)
	case payloadLen > maxPayload:
		return nil, protoErr("payload of %d bytes exceeds the limit of %d", payloadLen, maxPayload)
	}
	m.key = string(b[headerSize:])
	return m, nil
}

// rmaDesc names client memory the server may read or write once:
// u64 address, u64 length, then the packed UCX remote key.
type rmaDesc struct {
	addr, length uint64
	rkey         []byte
}

const maxRkey = 4096

func (d *rmaDesc) encode() []byte {
	b := make([]byte, 16+len(d.rkey))
	binary.LittleEndian.PutUint64(b, d.addr)
	binary.LittleEndian.PutUint64(b[8:], d.length)
	copy(b[16:], d.rkey)
	return b
}

func parseRMADesc(b []byte, maxLen uint64) (*rmaDesc, error) {
	if len(b) < 17 || len(b) > 16+maxRkey {
		return nil, protoErr("memory descriptor of %d bytes", len(b))
	}
	d := &rmaDesc{addr: binary.LittleEndian.Uint64(b), length: binary.LittleEndian.Uint64(b[8:]), rkey: b[16:]}
	if d.length == 0 || d.length > maxLen {
		return nil, protoErr("remote buffer of %d bytes (limit %d)", d.length, maxLen)
	}
	return d, nil
}
