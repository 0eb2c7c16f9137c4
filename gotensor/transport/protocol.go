// Package transport moves frames between a client and a memory node
// (`gotensor serve`). The wire protocol (docs/PROTOCOL.md) is versioned,
// length-prefixed and pipelined: many requests, tagged by id, share one
// connection. Servers keep frames exactly as clients encoded them.
package transport

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"io"
	"sync/atomic"

	"github.com/gotensor/gotensor/gotensor/errs"
)

// Magic opens the handshake in both directions.
var Magic = [4]byte{'G', 'T', 'R', 'P'}

const (
	Version = 1

	headerSize = 24
	nonceSize  = 32
	macSize    = sha256.Size

	// MaxKey bounds keys on the wire (store.MaxKeyLen).
	MaxKey = 1024
	// DefaultMaxMessage bounds one payload (a frame): 64 GiB plus headroom.
	DefaultMaxMessage = 64<<30 + 1<<20
	// readStep is how much payload buffer grows per read: a peer that
	// announces a huge message must send it before we hold that much.
	readStep = 16 << 20
	// A server allocates announced payloads whole while all connections
	// together hold less than preallocBudget that way; beyond it, buffers
	// grow as bytes arrive. (Only authenticated peers get this far.)
	preallocBudget = 4 << 30
)

// Op is a request type.
type Op uint8

const (
	OpPing Op = iota + 1
	OpPut
	OpGet
	OpHead
	OpDelete
	OpHas
	OpList
	OpUsage
	// One-sided ops (UCX): the payload is a memory descriptor, and the
	// server reads the frame from, or writes it into, the client's memory.
	OpPutRMA
	OpGetRMA
	// Streamed frames: parts by offset (arg), then the header commits them;
	// get-range answers bytes [arg, arg+n) with n an 8-byte payload.
	OpGetRange
	OpPutPart
	OpPutCommit
	OpPutAbort
	opMax
)

// header is the fixed part of every message after the handshake:
// u32 payload length, u8 op, u8 status (0 ok, else errs.Kind+1),
// u16 key length, u64 request id, u64 argument (Head: byte count).
type header struct {
	length uint32
	op     Op
	status uint8
	keyLen uint16
	id     uint64
	arg    uint64
}

// Payloads longer than 4 GiB - 1 set length to this marker and put the
// real length in the argument field.
const longPayload = 1<<32 - 1

func (h *header) put(b []byte) {
	binary.LittleEndian.PutUint32(b[0:], h.length)
	b[4] = byte(h.op)
	b[5] = h.status
	binary.LittleEndian.PutUint16(b[6:], h.keyLen)
	binary.LittleEndian.PutUint64(b[8:], h.id)
	binary.LittleEndian.PutUint64(b[16:], h.arg)
}

func (h *header) get(b []byte) {
	h.length = binary.LittleEndian.Uint32(b[0:])
	h.op = Op(b[4])
	h.status = b[5]
	h.keyLen = binary.LittleEndian.Uint16(b[6:])
	h.id = binary.LittleEndian.Uint64(b[8:])
	h.arg = binary.LittleEndian.Uint64(b[16:])
}

// message is one request or response.
type message struct {
	header
	key     string
	payload []byte
}

func protoErr(format string, args ...any) error {
	return errs.New(errs.CorruptData, "protocol: "+format, args...)
}

// payloadLen is the real payload length of a message header.
func (h *header) payloadLen() uint64 {
	if h.length == longPayload {
		return h.arg
	}
	return uint64(h.length)
}

// readMessage reads one message, checking every length against the limits
// before trusting it. reserve says how much of an announced payload may be
// allocated at once (and releases it when the read ends); beyond that the
// buffer grows as bytes actually arrive.
func readMessage(r io.Reader, maxPayload uint64, reserve func(n uint64) (uint64, func())) (*message, error) {
	var hb [headerSize]byte
	if _, err := io.ReadFull(r, hb[:]); err != nil {
		return nil, err
	}
	m := &message{}
	m.get(hb[:])
	if m.op == 0 || m.op >= opMax {
		return nil, protoErr("unknown op %d", m.op)
	}
	if m.keyLen > MaxKey {
		return nil, protoErr("key of %d bytes exceeds %d", m.keyLen, MaxKey)
	}
	n := m.payloadLen()
	if n > maxPayload {
		return nil, protoErr("payload of %d bytes exceeds the limit of %d", n, maxPayload)
	}
	if m.keyLen > 0 {
		kb := make([]byte, m.keyLen)
		if _, err := io.ReadFull(r, kb); err != nil {
			return nil, err
		}
		m.key = string(kb)
	}
	if n > 0 {
		prealloc, release := reserve(n)
		defer release()
		buf := make([]byte, 0, min(n, max(readStep, prealloc)))
		for uint64(len(buf)) < n {
			step := min(n-uint64(len(buf)), readStep)
			if uint64(cap(buf)-len(buf)) < step {
				nb := make([]byte, len(buf), min(n, uint64(cap(buf))*2+step))
				copy(nb, buf)
				buf = nb
			}
			got, err := io.ReadFull(r, buf[len(buf):len(buf)+int(step)])
			buf = buf[:len(buf)+got]
			if err != nil {
				return nil, err
			}
		}
		m.payload = buf
	}
	return m, nil
}

// writeMessage writes one message (header, key, payload) with a single
// vectored write where the connection supports it.
func writeMessage(w io.Writer, m *message) error {
	var hb [headerSize]byte
	h := m.header
	h.keyLen = uint16(len(m.key))
	if uint64(len(m.payload)) >= longPayload {
		h.length, h.arg = longPayload, uint64(len(m.payload))
	} else {
		h.length = uint32(len(m.payload))
	}
	h.put(hb[:])
	bufs := [][]byte{hb[:]}
	if m.key != "" {
		bufs = append(bufs, []byte(m.key))
	}
	if len(m.payload) > 0 {
		bufs = append(bufs, m.payload)
	}
	nb := netBuffers(bufs)
	_, err := nb.WriteTo(w)
	return err
}

// mac is the handshake proof: HMAC-SHA256 over the server's nonce.
func mac(token, nonce []byte) []byte {
	m := hmac.New(sha256.New, token)
	m.Write([]byte("gotensor-v1 auth\x00"))
	m.Write(nonce)
	return m.Sum(nil)
}

// statusErr turns a response's status and message into an error.
func statusErr(status uint8, msg []byte) error {
	if status == 0 {
		return nil
	}
	kind := errs.Kind(status - 1)
	text := string(msg)
	// the message already starts with the kind's name: keep it as the server wrote it
	if len(text) > len(kind.String())+2 && text[:len(kind.String())] == kind.String() {
		text = text[len(kind.String())+2:]
	}
	return &errs.Error{Kind: kind, Msg: text}
}

func statusOf(err error) uint8 {
	if err == nil {
		return 0
	}
	return uint8(errs.KindOf(err)) + 1
}

// trustAll preallocates whatever is announced (a client reading its server).
func trustAll(n uint64) (uint64, func()) { return n, func() {} }

// budget hands out preallocation from a shared allowance.
type budget struct{ used atomic.Int64 }

func (b *budget) reserve(n uint64) (uint64, func()) {
	if b.used.Add(int64(n)) <= preallocBudget {
		return n, func() { b.used.Add(-int64(n)) }
	}
	b.used.Add(-int64(n))
	return 0, func() {}
}
