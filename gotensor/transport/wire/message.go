// Package wire is the memory node's protocol (docs/PROTOCOL.md): message
// headers, their limits, the handshake, and the active-message form UCX
// carries. It is versioned, length-prefixed and pipelined: many requests,
// tagged by id, share one connection.
package wire

import (
	"encoding/binary"
	"errors"
	"io"
	"net"

	"github.com/gotensor/gotensor/gotensor/errs"
)

const (
	Version = 1

	HeaderSize = 24
	// MaxKey bounds keys on the wire (store.MaxKeyLen).
	MaxKey = 1024
	// DefaultMaxMessage bounds one payload (a frame): 64 GiB plus headroom.
	DefaultMaxMessage = 64<<30 + 1<<20
	// ReadStep is how much a payload buffer grows per read when the
	// receiver did not allocate it whole.
	ReadStep = 16 << 20
	// MaxUploads is how many streamed writes one connection may have open;
	// clients wait for a slot rather than exceed it.
	MaxUploads = 16
	// LongPayload in the length field says the real length (>= 4 GiB - 1)
	// is in the argument field.
	LongPayload = 1<<32 - 1
)

// Header is the fixed part of every message after the handshake:
// u32 payload length, u8 op, u8 status (0 ok, else errs.Kind+1),
// u16 key length, u64 request id, u64 argument (Head: byte count).
type Header struct {
	Length uint32
	Op     Op
	Status uint8
	KeyLen uint16
	ID     uint64
	Arg    uint64
}

// Encode writes h into b[:HeaderSize].
func (h *Header) Encode(b []byte) {
	binary.LittleEndian.PutUint32(b[0:], h.Length)
	b[4] = byte(h.Op)
	b[5] = h.Status
	binary.LittleEndian.PutUint16(b[6:], h.KeyLen)
	binary.LittleEndian.PutUint64(b[8:], h.ID)
	binary.LittleEndian.PutUint64(b[16:], h.Arg)
}

// Decode reads h from b[:HeaderSize].
func (h *Header) Decode(b []byte) {
	h.Length = binary.LittleEndian.Uint32(b[0:])
	h.Op = Op(b[4])
	h.Status = b[5]
	h.KeyLen = binary.LittleEndian.Uint16(b[6:])
	h.ID = binary.LittleEndian.Uint64(b[8:])
	h.Arg = binary.LittleEndian.Uint64(b[16:])
}

// PayloadLen is the real payload length the header announces.
func (h *Header) PayloadLen() uint64 {
	if h.Length == LongPayload {
		return h.Arg
	}
	return uint64(h.Length)
}

// withPayload sets the length fields for a payload of n bytes.
func (h Header) withPayload(key string, n uint64) Header {
	h.KeyLen = uint16(len(key))
	if n >= LongPayload {
		h.Length, h.Arg = LongPayload, n
	} else {
		h.Length = uint32(n)
	}
	return h
}

// Message is one request or response.
type Message struct {
	Header
	Key     string
	Payload []byte
	// Refused is set when the receiver would not hold the payload (it was
	// read and dropped): the request is answered with this error.
	Refused error
	// Release returns what the payload holds of the receiver's budget, or
	// (a response) the lease on the stored frame it carries; nil: nothing.
	Release func()
	// Lent takes back a payload buffer the store lent, when the store did
	// not keep it (nil: the buffer is the garbage collector's).
	Lent func(b []byte)
	// Into, on a request, is where a link that can (remote.ReceivesInto)
	// receives a successful response's payload of exactly len(Into) bytes:
	// a range read straight into the caller's memory. The link writes
	// nothing there once the call has returned. nil: memory it chooses.
	Into []byte
}

// Done releases m's hold on the receiver's budget, once.
func (m *Message) Done() {
	if m.Release != nil {
		m.Release()
		m.Release = nil
	}
}

// Reply is an empty success response to m.
func Reply(m *Message) *Message { return &Message{Header: Header{Op: m.Op, ID: m.ID}} }

// Fail is m's error response.
func Fail(m *Message, err error) *Message {
	return &Message{Header: Header{Op: m.Op, ID: m.ID, Status: StatusOf(err)}, Payload: []byte(err.Error())}
}

// Protocol is the error for a malformed message.
func Protocol(format string, args ...any) error {
	return errs.New(errs.CorruptData, "protocol: "+format, args...)
}

// Alloc gives the buffer a payload of n bytes is read into (n bytes: read
// whole; less capacity: grown as bytes arrive), or an error to refuse it
// (the payload is read and dropped), or a Stop to end the read there.
// It may set m.Release.
type Alloc func(m *Message, n uint64) ([]byte, error)

// Stop, returned by an Alloc, ends the read without reading the payload:
// Read returns Err. The peer announced a payload the receiver will not
// take at all, and the connection cannot go on (its bytes are not read).
type Stop struct{ Err error }

func (s *Stop) Error() string { return s.Err.Error() }
func (s *Stop) Unwrap() error { return s.Err }

// Whole allocates every payload whole (a client reading its server).
func Whole(_ *Message, n uint64) ([]byte, error) { return make([]byte, n), nil }

// Reader reads messages from one connection, reusing its scratch space.
type Reader struct {
	r       io.Reader
	scratch [HeaderSize + MaxKey]byte
}

// NewReader reads messages from r.
func NewReader(r io.Reader) *Reader { return &Reader{r: r} }

// ReadMessage reads one message from r (see Reader.Read).
func ReadMessage(r io.Reader, maxPayload uint64, alloc Alloc) (*Message, error) {
	return NewReader(r).Read(maxPayload, alloc)
}

// Read reads one message, checking every length against the limits before
// trusting it and allocating only what alloc grants.
func (rd *Reader) Read(maxPayload uint64, alloc Alloc) (*Message, error) {
	r := rd.r
	hb := rd.scratch[:HeaderSize]
	if _, err := io.ReadFull(r, hb); err != nil {
		return nil, err
	}
	m := &Message{}
	m.Decode(hb)
	if err := m.check(maxPayload); err != nil {
		return nil, err
	}
	if m.KeyLen > 0 {
		kb := rd.scratch[HeaderSize : HeaderSize+int(m.KeyLen)]
		if _, err := io.ReadFull(r, kb); err != nil {
			return nil, err
		}
		m.Key = string(kb)
	}
	n := m.PayloadLen()
	if n == 0 {
		return m, nil
	}
	buf, err := alloc(m, n)
	if stop := (*Stop)(nil); errors.As(err, &stop) {
		return nil, stop.Err
	}
	if err != nil { // drop the payload without holding it
		m.Refused = err
		if _, err := io.CopyN(io.Discard, r, int64(n)); err != nil {
			return nil, err
		}
		return m, nil
	}
	if m.Payload, err = readPayload(r, buf[:0], n); err != nil {
		if m.Lent != nil {
			m.Lent(buf)
		}
		m.Done()
		return nil, err
	}
	return m, nil
}

func (h *Header) check(maxPayload uint64) error {
	switch n := h.PayloadLen(); {
	case h.Op == 0 || h.Op >= opMax:
		return Protocol("unknown op %d", h.Op)
	case h.KeyLen > MaxKey:
		return Protocol("key of %d bytes exceeds %d", h.KeyLen, MaxKey)
	case h.Length == LongPayload && h.Arg < LongPayload:
		return Protocol("a %d-byte payload announced in the long form", h.Arg)
	case n > maxPayload:
		return Protocol("payload of %d bytes exceeds the limit of %d", n, maxPayload)
	}
	return nil
}

// readPayload reads n bytes into buf, growing it while its capacity is short.
func readPayload(r io.Reader, buf []byte, n uint64) ([]byte, error) {
	if uint64(cap(buf)) >= n {
		buf = buf[:n]
		_, err := io.ReadFull(r, buf)
		return buf, err
	}
	for uint64(len(buf)) < n {
		step := min(n-uint64(len(buf)), ReadStep)
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
	return buf, nil
}

// Writer writes messages to one connection (one at a time), reusing its
// scratch space.
type Writer struct {
	w    io.Writer
	hb   [HeaderSize + MaxKey]byte
	bufs net.Buffers
}

// NewWriter writes messages to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// WriteMessage writes one message to w (see Writer.Write).
func WriteMessage(w io.Writer, m *Message) error { return NewWriter(w).Write(m) }

// Write sends one message (header, key, payload) with a single vectored
// write where the connection supports it; the payload is not copied.
func (wr *Writer) Write(m *Message) error {
	h := m.Header.withPayload(m.Key, uint64(len(m.Payload)))
	h.Encode(wr.hb[:])
	n := HeaderSize + copy(wr.hb[HeaderSize:], m.Key)
	if len(m.Payload) == 0 {
		_, err := wr.w.Write(wr.hb[:n])
		return err
	}
	wr.bufs = append(wr.bufs[:0], wr.hb[:n], m.Payload)
	bufs := wr.bufs // WriteTo consumes what it is given
	_, err := bufs.WriteTo(wr.w)
	return err
}

// StatusErr turns a response's status and message into an error.
func StatusErr(status uint8, msg []byte) error {
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

// StatusOf is the status byte for err.
func StatusOf(err error) uint8 {
	if err == nil {
		return 0
	}
	return uint8(errs.KindOf(err)) + 1
}
