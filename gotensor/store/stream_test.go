package store

import (
	"bytes"
	"testing"

	"github.com/gotensor/gotensor/gotensor/errs"
)

// A frame laid out up front keeps its parts in place: a part received into
// its slot is not copied, one received elsewhere is copied there, and the
// frame is the laid-out memory itself once the header fills its room.
func TestPartsPlacedInTheFrame(t *testing.T) {
	frame := make([]byte, 4+8)
	p := NewParts(1 << 20)
	p.Place(frame, 4)
	if !p.Placed() {
		t.Fatal("not placed")
	}
	if p.Slot(6, 4) != nil || p.Slot(-1, 2) != nil || p.Slot(0, 0) != nil {
		t.Fatal("a slot outside the payload was given")
	}
	slot := p.Slot(0, 4)
	if &slot[0] != &frame[4] || cap(slot) != 4 {
		t.Fatal("the first part's slot is not at the payload's start")
	}
	copy(slot, "abcd")
	if err := p.Add(0, slot); err != nil {
		t.Fatal(err)
	}
	if err := p.Add(4, []byte("efgh")); err != nil { // received elsewhere: copied into place
		t.Fatal(err)
	}
	if err := p.Add(8, []byte("x")); err == nil {
		t.Fatal("a part past the laid-out payload was taken")
	}
	got, err := p.FrameIn([]byte("HDR!"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if &got[0] != &frame[0] || string(got) != "HDR!abcdefgh" {
		t.Fatalf("frame %q, in place %v", got, &got[0] == &frame[0])
	}
}

// A laid-out frame is refused at the commit when the header does not fill
// its room or the parts leave a gap.
func TestPlacedFrameRefusesAnotherLayout(t *testing.T) {
	for _, c := range []struct {
		name  string
		hdr   string
		parts []int64
	}{
		{"longer header", "HEADER", []int64{0, 4}},
		{"gap", "HDR!", []int64{0}},
	} {
		p := NewParts(1 << 20)
		p.Place(make([]byte, 12), 4)
		for _, off := range c.parts {
			if err := p.Add(off, bytes.Repeat([]byte{1}, 4)); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := p.FrameIn([]byte(c.hdr), nil); !errs.Is(err, errs.CorruptData) {
			t.Fatalf("%s: %v", c.name, err)
		}
	}
}
