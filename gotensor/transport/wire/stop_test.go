package wire

import (
	"bytes"
	"errors"
	"testing"
)

// An Alloc's Stop ends the read at the header: Read returns its error and
// reads none of the payload the header announced.
func TestStopEndsTheReadBeforeThePayload(t *testing.T) {
	var buf bytes.Buffer
	WriteMessage(&buf, &Message{Header: Header{Op: OpGet, ID: 1}, Payload: make([]byte, 1000)})
	want := Protocol("too long")
	stop := func(*Message, uint64) ([]byte, error) { return nil, &Stop{Err: want} }
	if m, err := ReadMessage(&buf, 1<<20, stop); !errors.Is(err, want) || m != nil {
		t.Fatalf("%+v %v", m, err)
	}
	if buf.Len() != 1000 {
		t.Fatalf("%d payload bytes left unread, want 1000", buf.Len())
	}
}
