package wire

import (
	"bytes"
	"testing"
)

func FuzzReadMessage(f *testing.F) {
	var buf bytes.Buffer
	WriteMessage(&buf, &Message{Header: Header{Op: OpPut, ID: 7}, Key: "layer.0", Payload: []byte("frame")})
	f.Add(buf.Bytes())
	buf.Reset()
	WriteMessage(&buf, &Message{Header: Header{Op: OpHead, ID: 8, Arg: 4096}, Key: "k"})
	f.Add(buf.Bytes())
	grow := func(_ *Message, n uint64) ([]byte, error) { return make([]byte, 0, min(n, 64)), nil }
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ReadMessage(bytes.NewReader(b), 1<<20, grow)
		if err != nil {
			return
		}
		if len(m.Key) > MaxKey || uint64(len(m.Payload)) > 1<<20 {
			t.Fatalf("limits not enforced: key %d payload %d", len(m.Key), len(m.Payload))
		}
		var out bytes.Buffer
		if err := WriteMessage(&out, m); err != nil {
			t.Fatal(err)
		}
		m2, err := ReadMessage(&out, 1<<20, Whole)
		if err != nil || m2.Key != m.Key || !bytes.Equal(m2.Payload, m.Payload) || m2.ID != m.ID {
			t.Fatalf("re-encoding differs: %v", err)
		}
	})
}

func FuzzParseAMHeader(f *testing.F) {
	f.Add(AMHeader(&Message{Header: Header{Op: OpPut, ID: 3}, Key: "layer.0"}, 5), uint64(5))
	f.Add(AMHeader(&Message{Header: Header{Op: OpGetRMA, ID: 4}, Key: "k"}, 40), uint64(40))
	f.Add(AMHeader(&Message{Header: Header{Op: OpGet}}, 1<<33), uint64(1<<33))
	f.Fuzz(func(t *testing.T, b []byte, n uint64) {
		m, err := ParseAMHeader(b, n, 1<<30)
		if err != nil {
			return
		}
		if m.PayloadLen() != n || n > 1<<30 || len(m.Key) != int(m.KeyLen) || !m.Op.Valid() {
			t.Fatalf("accepted an inconsistent header: %+v for %d bytes", m.Header, n)
		}
		if got := AMHeader(m, int(n)); !bytes.Equal(got, b) {
			t.Fatalf("re-encoding differs")
		}
		if m.Op == OpPutRMA || m.Op == OpGetRMA {
			ParseRMADesc(b, 1<<30) // must not panic on anything
		}
	})
}

// A refused payload is read and dropped: the next message is intact.
func TestRefusedPayloadIsDrained(t *testing.T) {
	var buf bytes.Buffer
	WriteMessage(&buf, &Message{Header: Header{Op: OpPut, ID: 1}, Key: "a", Payload: make([]byte, 1000)})
	WriteMessage(&buf, &Message{Header: Header{Op: OpPing, ID: 2}})
	refuse := func(*Message, uint64) ([]byte, error) { return nil, Protocol("no") }
	m, err := ReadMessage(&buf, 1<<20, refuse)
	if err != nil || m.Refused == nil || m.Payload != nil {
		t.Fatalf("%+v %v", m, err)
	}
	if m, err := ReadMessage(&buf, 1<<20, refuse); err != nil || m.ID != 2 {
		t.Fatalf("%+v %v", m, err)
	}
}

// FuzzReadMessages reads a stream of several messages through one Reader
// (scratch reused between them, as a connection does): each message read
// re-encodes to the bytes it came from, and the stream is consumed in order.
func FuzzReadMessages(f *testing.F) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	w.Write(&Message{Header: Header{Op: OpPut, ID: 1}, Key: "a", Payload: []byte("frame-a")})
	w.Write(&Message{Header: Header{Op: OpGet, ID: 2}, Key: "b"})
	w.Write(&Message{Header: Header{Op: OpPutPart, ID: 3, Arg: 8}, Key: "c", Payload: bytes.Repeat([]byte{9}, 300)})
	w.Write(&Message{Header: Header{Op: OpList, ID: 4}, Key: ""})
	f.Add(buf.Bytes())
	f.Add(buf.Bytes()[:buf.Len()-5])
	grow := func(_ *Message, n uint64) ([]byte, error) { return make([]byte, 0, min(n, 64)), nil }
	f.Fuzz(func(t *testing.T, b []byte) {
		rd := NewReader(bytes.NewReader(b))
		consumed := 0
		for i := 0; i < 64; i++ {
			m, err := rd.Read(1<<20, grow)
			if err != nil {
				return
			}
			if len(m.Key) > MaxKey || uint64(len(m.Payload)) > 1<<20 {
				t.Fatalf("message %d: limits not enforced: key %d payload %d", i, len(m.Key), len(m.Payload))
			}
			var out bytes.Buffer
			if err := WriteMessage(&out, m); err != nil {
				t.Fatal(err)
			}
			if end := consumed + out.Len(); end > len(b) || !bytes.Equal(b[consumed:end], out.Bytes()) {
				t.Fatalf("message %d does not re-encode to the bytes it was read from", i)
			}
			consumed += out.Len()
		}
	})
}
