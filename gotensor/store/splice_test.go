package store

import (
	"bytes"
	"context"
	"os"
	"syscall"
	"testing"

	"github.com/gotensor/gotensor/gotensor/errs"
)

// A splice edits a frame no one reads in place, leaves a leased frame as
// its reader saw it (copy on write), and applies only while the frame
// still starts with the header it was computed from.
func TestSplice(t *testing.T) {
	ctx := context.Background()
	dir, err := OpenDir(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	for _, st := range []Store{NewMem("mem://", 0), dir} {
		frame := []byte("HDR0aaaabbbbcccc")
		if err := st.Put(ctx, "k", append([]byte(nil), frame...)); err != nil {
			t.Fatal(err)
		}
		var release func()
		var leased []byte
		if l, ok := st.(Leaser); ok {
			leased, release, _ = l.Lease(ctx, "k")
		}
		sp := st.(Splicer)
		if ok, err := sp.Splice(ctx, "k", []byte("HDRx"), []byte("HDR1"), 8, 4, []byte("BBBB")); ok || err != nil {
			t.Fatalf("%s: splice from a stale header: %v %v", st.URL(), ok, err)
		}
		if ok, err := sp.Splice(ctx, "k", []byte("HDR0"), []byte("HDR1"), 8, 4, []byte("BBBBBB")); !ok || err != nil {
			t.Fatalf("%s: splice: %v %v", st.URL(), ok, err)
		}
		if got, _ := st.Get(ctx, "k"); string(got) != "HDR1aaaaBBBBBBcccc" {
			t.Fatalf("%s: after the splice %q", st.URL(), got)
		}
		if leased != nil {
			if !bytes.Equal(leased, frame) {
				t.Fatalf("leased frame changed under its reader: %q", leased)
			}
			release()
		}
		if u := st.Usage(); u.Bytes != 18 {
			t.Fatalf("%s: usage %d bytes", st.URL(), u.Bytes)
		}
	}
	// unleased and the same length: the frame's own memory is edited
	m := NewMem("mem://", 0)
	m.Put(ctx, "k", []byte("HDR0aaaabbbb"))
	b, release, _ := m.Lease(ctx, "k")
	release()
	if ok, _ := m.Splice(ctx, "k", []byte("HDR0"), []byte("HDR1"), 4, 4, []byte("AAAA")); !ok || string(b) != "HDR1AAAAbbbb" {
		t.Fatalf("in place: %v %q", ok, b)
	}
}

// A same-length splice edits the file in place; a journal a crash left is
// applied when the directory is opened again, and a torn one is dropped.
func TestDirEditInPlaceAndJournal(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	d, err := OpenDir(root, 0)
	if err != nil {
		t.Fatal(err)
	}
	d.Put(ctx, "k", []byte("HDR0aaaabbbb"))
	d.Put(ctx, "j", []byte("HDR0aaaabbbb"))
	if ok, err := d.Splice(ctx, "k", []byte("HDR0"), []byte("HDR1"), 4, 4, []byte("AAAA")); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if got, _ := d.Get(ctx, "k"); string(got) != "HDR1AAAAbbbb" {
		t.Fatalf("in place: %q", got)
	}
	path := root + "/" + pathFor("j")
	full := journal([]byte("HDR2"), 8, []byte("BBBB"))
	os.WriteFile(path+journalExt, full, 0o644)                                // a crash after the journal
	os.WriteFile(root+"/"+pathFor("k")+journalExt, full[:len(full)-1], 0o644) // a crash while writing it
	d.Close()
	d, err = OpenDir(root, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if got, _ := d.Get(ctx, "j"); string(got) != "HDR2aaaaBBBB" {
		t.Fatalf("journal not applied: %q", got)
	}
	if got, _ := d.Get(ctx, "k"); string(got) != "HDR1AAAAbbbb" {
		t.Fatalf("torn journal applied: %q", got)
	}
	if ks, _ := d.List(ctx, ""); len(ks) != 2 {
		t.Fatalf("keys %v", ks)
	}
	for _, k := range []string{"j", "k"} {
		if _, err := os.Stat(root + "/" + pathFor(k) + journalExt); !os.IsNotExist(err) {
			t.Fatalf("journal of %s left: %v", k, err)
		}
	}
}

// An in-place edit journals through its stripe's slot, which it clears: a
// record a crash left in a slot is applied at the next open, a torn or
// cleared one is not, and a slot's record never reaches a file replaced
// after the edit.
func TestDirJournalSlots(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	d, err := OpenDir(root, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"k", "j"} {
		d.Put(ctx, k, []byte("HDR0aaaabbbb"))
	}
	for i := 0; i < 3; i++ { // the same slot, used again
		if ok, err := d.Splice(ctx, "k", []byte("HDR"+string(rune('0'+i))), []byte("HDR"+string(rune('1'+i))), 4, 4, []byte("AAAA")); !ok || err != nil {
			t.Fatal(i, ok, err)
		}
	}
	ki, ji := d.editStripe("k"), d.editStripe("j")
	if b, _ := os.ReadFile(d.slotPath(ki)); len(b) < 4 || string(b[:4]) != "\x00\x00\x00\x00" {
		t.Fatalf("slot not cleared: %q", b)
	}
	if ents, _ := os.ReadDir(root); len(ents) != 4 { // lock, two frames, one slot
		t.Fatalf("files after edits: %v", ents)
	}
	d.Put(ctx, "k", []byte("NEW0ccccdddd")) // replaced after its edit: the cleared slot must not touch it
	rec := boundRecord(t, root, "j", []Piece{{Off: 8, B: []byte("BBBB")}, {Off: 2, B: []byte("R2")}})
	d.Close()
	if ji == ki { // one stripe: the torn record goes in another slot
		ki = (ji + 1) % len(d.slots)
	}
	os.WriteFile(d.slotPath(ji), append(rec, "stale tail"...), 0o644) // a crash after the record
	os.WriteFile(d.slotPath(ki), rec[:len(rec)-1], 0o644)             // a crash while writing it
	d, err = OpenDir(root, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if got, _ := d.Get(ctx, "j"); string(got) != "HDR2aaaaBBBB" {
		t.Fatalf("slot record not applied: %q", got)
	}
	if got, _ := d.Get(ctx, "k"); string(got) != "NEW0ccccdddd" {
		t.Fatalf("a cleared or torn slot applied: %q", got)
	}
	for _, i := range []int{ji, ki} {
		if b, _ := os.ReadFile(d.slotPath(i)); len(b) >= 4 && string(b[:4]) == "GTJ4" {
			t.Fatalf("slot %d not cleared after replay", i)
		}
	}
	if ks, _ := d.List(ctx, ""); len(ks) != 2 {
		t.Fatalf("keys %v", ks)
	}
}

// A slot record names a path inside the store only.
func TestParseSlotRejectsOutsidePath(t *testing.T) {
	pieces := []Piece{{Off: 1, B: []byte("d")}, {Off: 0, B: []byte("H")}}
	bound := func(rel string) []byte {
		return record{rel: rel, dev: 7, ino: 9, pieces: pieces, old: [][]byte{nil, []byte("h")}}.encode()
	}
	for _, rec := range [][]byte{bound("../x.gtf"), slotRecordV3("../x.gtf", pieces), slotRecordV2("../x.gtf", []byte("H"), 1, []byte("d"))} {
		if _, ok := parseSlot(rec); ok {
			t.Fatalf("a path outside the store parsed: %q", rec[:4])
		}
	}
	for _, rec := range [][]byte{bound("a/b.gtf"), slotRecordV3("a/b.gtf", pieces), slotRecordV2("a/b.gtf", []byte("H"), 1, []byte("d"))} {
		r, ok := parseSlot(rec)
		got := r.pieces
		if !ok || r.rel != "a/b.gtf" || len(got) != 2 || got[0].Off != 1 || string(got[0].B) != "d" || got[1].Off != 0 || string(got[1].B) != "H" {
			t.Fatal("round trip", r, ok)
		}
		if string(rec[:4]) == "GTJ4" && (r.dev != 7 || r.ino != 9 || r.old[0] != nil || string(r.old[1]) != "h") {
			t.Fatal("binding round trip", r)
		}
		for cut := 1; cut < len(rec); cut++ {
			if _, ok := parseSlot(rec[:cut]); ok {
				t.Fatalf("a record cut at %d of %d parsed", cut, len(rec))
			}
		}
	}
}

// An edit that lengthens a frame with a short tail after it (a KV cache's
// coded row appended in place of a zero row) is written into the same
// file, its tail moved along: the key's size, its usage and ranged reads
// follow, over the capacity it is StoreFull with the frame unchanged, and
// with a tail past maxGrowTail the file is rewritten (a new inode).
func TestDirLengtheningEditInPlace(t *testing.T) {
	ctx := context.Background()
	d, err := OpenDir(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ino := func(key string) uint64 {
		st, err := os.Stat(d.dir + "/" + pathFor(key))
		if err != nil {
			t.Fatal(err)
		}
		return st.Sys().(*syscall.Stat_t).Ino
	}
	d.Put(ctx, "k", []byte("HDR0aaaabbbbcccc"))
	before, used := ino("k"), d.Usage().Bytes
	if b, _, _ := d.GetRange(ctx, "k", 0, 100); string(b) != "HDR0aaaabbbbcccc" { // a cached handle
		t.Fatalf("%q", b)
	}
	v, _ := d.FrameVersion(ctx, "k")
	e := Edit{Off: 8, N: 4, Data: []byte("XXXXXX"), Pieces: []Piece{{Off: 3, B: []byte("1")}}}
	if _, ok, err := d.EditChecked(ctx, "k", v, e); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if got, _ := d.Get(ctx, "k"); string(got) != "HDR1aaaaXXXXXXcccc" {
		t.Fatalf("lengthened: %q", got)
	}
	if b, size, _ := d.GetRange(ctx, "k", 12, 100); string(b) != "XXcccc" || size != 18 {
		t.Fatalf("range after the edit: %q of %d", b, size)
	}
	if ino("k") != before {
		t.Fatal("a lengthening edit with a short tail rewrote the file")
	}
	if u := d.Usage().Bytes; u != used+2 {
		t.Fatalf("usage %d, want %d", u, used+2)
	}

	small, err := OpenDir(t.TempDir(), 4096)
	if err != nil {
		t.Fatal(err)
	}
	defer small.Close()
	if err := small.Put(ctx, "k", []byte("HDR0aaaabbbbcccc")); err != nil {
		t.Fatal(err)
	}
	v, _ = small.FrameVersion(ctx, "k")
	room := small.capacity - small.Used()
	big := Edit{Off: 8, N: 4, Data: make([]byte, 4+room+1)}
	if _, _, err := small.EditChecked(ctx, "k", v, big); !errs.Is(err, errs.StoreFull) {
		t.Fatalf("an edit past the capacity: %v", err)
	}
	if got, _ := small.Get(ctx, "k"); string(got) != "HDR0aaaabbbbcccc" {
		t.Fatalf("after a refused edit: %q", got)
	}

	long := append([]byte("HDR0aaaa"), make([]byte, maxGrowTail+8)...)
	d.Put(ctx, "long", long)
	before = ino("long")
	v, _ = d.FrameVersion(ctx, "long")
	if _, ok, err := d.EditChecked(ctx, "long", v, Edit{Off: 4, N: 4, Data: []byte("AAAAA")}); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if got, _ := d.Get(ctx, "long"); len(got) != len(long)+1 || string(got[:9]) != "HDR0AAAAA" {
		t.Fatalf("long tail: %q...", got[:9])
	}
	if ino("long") == before {
		t.Fatal("a lengthening edit with a long tail was written in place")
	}
}

// A lengthening edit's record that a crash left is applied at the next
// open whether the file was not yet touched or partly extended: the
// frame is the edited one, longer, and the store counts its new size.
func TestDirReplaysLengtheningEdit(t *testing.T) {
	ctx := context.Background()
	for _, torn := range []int{0, 3, 10} { // bytes of the edit's data already in the file
		root := t.TempDir()
		d, err := OpenDir(root, 0)
		if err != nil {
			t.Fatal(err)
		}
		d.Put(ctx, "j", []byte("HDR0aaaabbbbcccc"))
		data := []byte("BBBBBBcccc")
		rec := boundRecord(t, root, "j", []Piece{{Off: 8, B: data}, {Off: 2, B: []byte("R2")}})
		slot := d.slotPath(d.editStripe("j"))
		d.Close()
		f, _ := os.OpenFile(root+"/"+pathFor("j"), os.O_WRONLY, 0)
		f.WriteAt(data[:torn], 8)
		f.Close()
		os.WriteFile(slot, rec, 0o600)
		d, err = OpenDir(root, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := d.Get(ctx, "j"); string(got) != "HDR2aaaaBBBBBBcccc" {
			t.Fatalf("torn %d: replayed %q", torn, got)
		}
		if b, size, _ := d.GetRange(ctx, "j", 14, 10); string(b) != "cccc" || size != 18 {
			t.Fatalf("torn %d: range %q of %d", torn, b, size)
		}
		if u := d.Usage().Bytes; u != 18 {
			t.Fatalf("torn %d: usage %d after the replay, want 18", torn, u)
		}
		d.Close()
	}
}
