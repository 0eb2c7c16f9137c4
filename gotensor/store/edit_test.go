package store

import (
	"context"
	"testing"
)

// Both local stores: an edit applies at the version it names only; every
// change of the frame (an edit, a splice, a Put, a delete and Put again)
// gives a new version; edits that keep, grow and shrink the length give
// the frame spliced by hand.
func TestEditorVersions(t *testing.T) {
	ctx := context.Background()
	dir, err := OpenDir(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	for _, st := range []interface {
		Store
		Editor
		Splicer
	}{NewMem("mem://", 0), dir} {
		st.Put(ctx, "k", []byte("HDR0aaaabbbb"))
		v0, err := st.FrameVersion(ctx, "k")
		if err != nil {
			t.Fatal(err)
		}
		if v, _ := st.FrameVersion(ctx, "k"); v != v0 {
			t.Fatalf("%s: version moved with no change: %d, %d", st.URL(), v0, v)
		}
		e := Edit{Pieces: []Piece{{Off: 3, B: []byte("1")}}, Off: 4, N: 4, Data: []byte("AAAA")}
		v1, ok, err := st.EditChecked(ctx, "k", v0, e)
		if !ok || err != nil || v1 == v0 {
			t.Fatalf("%s: edit at the current version: %v %v, version %d after %d", st.URL(), ok, err, v1, v0)
		}
		if _, ok, _ := st.EditChecked(ctx, "k", v0, Edit{Off: 4, N: 4, Data: []byte("XXXX")}); ok {
			t.Fatalf("%s: an edit at a stale version applied", st.URL())
		}
		steps := []struct {
			e    Edit
			want string
		}{
			{Edit{Pieces: []Piece{{Off: 3, B: []byte("2")}}, Off: 8, N: 4, Data: []byte("BBBBBB")}, "HDR2AAAABBBBBB"}, // grows
			{Edit{Pieces: []Piece{{Off: 3, B: []byte("3")}}, Off: 4, N: 4, Data: []byte("C")}, "HDR3CBBBBBB"},         // shrinks
			{Edit{Off: 5, N: 6, Data: []byte("dddddddd")}, "HDR3Cdddddddd"},                                           // grows in its room
			{Edit{Off: 5, N: 8, Data: []byte("eeeeeeee")}, "HDR3Ceeeeeeee"},                                           // keeps it
		}
		v := v1
		for i, s := range steps {
			nv, ok, err := st.EditChecked(ctx, "k", v, s.e)
			if !ok || err != nil || nv == v {
				t.Fatalf("%s step %d: %v %v", st.URL(), i, ok, err)
			}
			if got, _ := st.Get(ctx, "k"); string(got) != s.want {
				t.Fatalf("%s step %d: %q, want %q", st.URL(), i, got, s.want)
			}
			v = nv
		}
		if _, ok, _ := st.EditChecked(ctx, "k", v, Edit{Pieces: []Piece{{Off: 6, B: []byte("zz")}}, Off: 5, N: 1, Data: []byte("e")}); ok {
			t.Fatalf("%s: a piece past the edited range applied", st.URL())
		}
		changes := []func(){
			func() { st.Splice(ctx, "k", []byte("HDR3"), []byte("HDR4"), 4, 1, []byte("E")) },
			func() { st.Put(ctx, "k", []byte("HDR5ffffgggg")) },
			func() { st.Delete(ctx, "k"); st.Put(ctx, "k", []byte("HDR5ffffgggg")) },
		}
		for i, change := range changes {
			change()
			nv, err := st.FrameVersion(ctx, "k")
			if err != nil || nv == v {
				t.Fatalf("%s change %d: version %d after %d (%v)", st.URL(), i, nv, v, err)
			}
			v = nv
		}
		if _, err := st.FrameVersion(ctx, "missing"); err == nil {
			t.Fatalf("%s: a version for a missing key", st.URL())
		}
	}
}

// A Mem frame no lease holds grows and shrinks in its own buffer while
// that has room: no copy of the frame.
func TestMemEditInPlaceWithRoom(t *testing.T) {
	ctx := context.Background()
	m := NewMem("mem://", 0)
	m.Put(ctx, "k", append(make([]byte, 0, 64), "HDR0aaaabbbb"...))
	buf := &m.m["k"].b[0]
	for i, d := range []string{"AAAAAAAA", "A", "AAAAAAAAAAAAAAAAAAAAAA"} {
		v, _ := m.FrameVersion(ctx, "k")
		if _, ok, err := m.EditChecked(ctx, "k", v, Edit{Off: 4, N: int64(len(m.m["k"].b) - 8), Data: []byte(d)}); !ok || err != nil {
			t.Fatal(i, ok, err)
		}
		if got := m.m["k"].b; string(got) != "HDR0"+d+"bbbb" {
			t.Fatalf("edit %d: %q", i, got)
		}
		if &m.m["k"].b[0] != buf {
			t.Fatalf("edit %d: the frame was copied", i)
		}
	}
	if m.Usage().Bytes != int64(len("HDR0bbbb")+22) {
		t.Fatalf("usage %d", m.Usage().Bytes)
	}
}

// A Mem frame a lease holds is not edited under it: the lease keeps its
// bytes, and the store has the edited frame.
func TestMemEditKeepsLeasedBytes(t *testing.T) {
	ctx := context.Background()
	m := NewMem("mem://", 0)
	m.Put(ctx, "k", []byte("HDR0aaaabbbb"))
	b, release, _ := m.Lease(ctx, "k")
	v, _ := m.FrameVersion(ctx, "k")
	if _, ok, err := m.EditChecked(ctx, "k", v, Edit{Off: 4, N: 4, Data: []byte("AAAA")}); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if string(b) != "HDR0aaaabbbb" {
		t.Fatalf("leased bytes changed: %q", b)
	}
	release()
	if got, _ := m.Get(ctx, "k"); string(got) != "HDR0AAAAbbbb" {
		t.Fatalf("%q", got)
	}
}
