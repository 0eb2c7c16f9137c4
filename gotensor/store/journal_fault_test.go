package store

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"syscall"
	"testing"

	"github.com/gotensor/gotensor/gotensor/errs"
)

// faults fails the edit path's writes and syncs: the nth call (counting
// from 1) and, when sticky, every call after it.
type faults struct {
	n, calls int
	sticky   bool
	errno    syscall.Errno
}

func (f *faults) hit() error {
	f.calls++
	if f.n > 0 && (f.calls == f.n || f.sticky && f.calls > f.n) {
		return f.errno
	}
	return nil
}

// inject routes writeAt, dataSync and truncate through f until restore.
func (f *faults) inject() (restore func()) {
	w, d, tr := writeAt, dataSync, truncate
	restore = func() { writeAt, dataSync, truncate = w, d, tr }
	writeAt = func(file *os.File, b []byte, off int64) (int, error) {
		if err := f.hit(); err != nil {
			return 0, &os.PathError{Op: "write", Path: file.Name(), Err: err}
		}
		return w(file, b, off)
	}
	dataSync = func(file *os.File) error {
		if err := f.hit(); err != nil {
			return &os.PathError{Op: "sync", Path: file.Name(), Err: err}
		}
		return d(file)
	}
	truncate = func(file *os.File, n int64) error {
		if err := f.hit(); err != nil {
			return &os.PathError{Op: "truncate", Path: file.Name(), Err: err}
		}
		return tr(file, n)
	}
	return restore
}

// A row edit whose write or sync fails, at every write and sync of its
// path in turn (once, or from there on), never comes back: a later replace
// of the key (with other bytes, or the very bytes it had before the edit)
// or a delete and a new write is what the key holds after a reopen. The
// edit reports the failure (StoreFull for ENOSPC), and the store opens.
func TestDirFailedEditNeverResurrects(t *testing.T) {
	before := []byte("HDR0aaaabbbbcccc")
	for name, edit := range map[string]Edit{
		"same-length": {Off: 8, N: 4, Data: []byte("XXXX"), Pieces: []Piece{{Off: 3, B: []byte("1")}}},
		"lengthening": {Off: 8, N: 4, Data: []byte("XXXXXX"), Pieces: []Piece{{Off: 3, B: []byte("1")}}},
	} {
		t.Run(name, func(t *testing.T) { failedEdits(t, before, edit) })
	}
}

func failedEdits(t *testing.T, before []byte, edit Edit) {
	ctx := context.Background()
	// The calls a clean edit makes: the record and its sync, the data,
	// the header piece and the sync, the slot cleared and synced.
	var count faults
	func() {
		defer count.inject()()
		d, err := OpenDir(t.TempDir(), 0)
		if err != nil {
			t.Fatal(err)
		}
		d.Put(ctx, "k", before)
		v, _ := d.FrameVersion(ctx, "k")
		if _, ok, err := d.EditChecked(ctx, "k", v, edit); !ok || err != nil {
			t.Fatal(ok, err)
		}
		d.Close()
	}()
	calls := count.calls
	if calls != 7 {
		t.Fatalf("a clean edit made %d writes and syncs, want 7", calls)
	}
	for _, errno := range []syscall.Errno{syscall.EIO, syscall.ENOSPC} {
		for _, sticky := range []bool{false, true} {
			for n := 1; n <= calls; n++ {
				for _, then := range []string{"replace", "restore", "delete+put"} {
					name := fmt.Sprintf("%v/sticky=%v/call%d/%s", errno, sticky, n, then)
					t.Run(name, func(t *testing.T) {
						failedEditThen(t, before, edit, faults{n: n, sticky: sticky, errno: errno}, then)
					})
				}
			}
		}
	}
}

func failedEditThen(t *testing.T, before []byte, edit Edit, f faults, then string) {
	ctx := context.Background()
	root := t.TempDir()
	d, err := OpenDir(root, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Put(ctx, "k", before); err != nil {
		t.Fatal(err)
	}
	v, _ := d.FrameVersion(ctx, "k")
	defer f.inject()()
	_, ok, err := d.EditChecked(ctx, "k", v, edit)
	clearing := f.n >= 6 // the fault hit the slot's clearing: the edit itself is done
	switch {
	case clearing && (err != nil || !ok):
		t.Fatalf("an edit applied and synced reported %v, %v", ok, err)
	case !clearing && err == nil:
		t.Fatal("the failed edit reported success")
	case !clearing && f.errno == syscall.ENOSPC && !errs.Is(err, errs.StoreFull):
		t.Fatalf("ENOSPC reported as %v, want StoreFull", err)
	}
	f.n = 0 // the disk is back
	after := []byte("NEW0ppppqqqqrrrr")
	switch then {
	case "replace":
		err = d.Put(ctx, "k", after)
	case "restore": // the very bytes the edit was computed from
		after = before
		err = d.Put(ctx, "k", after)
	case "delete+put":
		if err = d.Delete(ctx, "k"); err == nil {
			err = d.Put(ctx, "k", after)
		}
	}
	if err != nil {
		t.Fatalf("%s after the failed edit: %v", then, err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	d, err = OpenDir(root, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if got, err := d.Get(ctx, "k"); err != nil || !bytes.Equal(got, after) {
		t.Fatalf("after %s and a reopen: %q (%v), want %q", then, got, err, after)
	}
	assertSlotsClean(t, root)
}

// assertSlotsClean checks every journal slot in root is private and holds
// no bytes of a record.
func assertSlotsClean(t *testing.T, root string) {
	t.Helper()
	ents, _ := os.ReadDir(root)
	for _, e := range ents {
		if !isSlot(e.Name()) {
			continue
		}
		info, _ := e.Info()
		if info.Mode().Perm() != 0o600 {
			t.Errorf("slot %s mode %v, want 0600", e.Name(), info.Mode().Perm())
		}
		b, _ := os.ReadFile(root + "/" + e.Name())
		if len(bytes.Trim(b, "\x00")) > 0 {
			t.Errorf("slot %s keeps %q", e.Name(), b)
		}
	}
}

// Journal slots are private (0600, and a slot an older version made 0644
// is made so) and keep nothing of an edit once it is done: neither the
// rows it wrote nor the key's file name.
func TestDirSlotsArePrivateAndForget(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	d, err := OpenDir(root, 0)
	if err != nil {
		t.Fatal(err)
	}
	d.Put(ctx, "secret-key", []byte("HDR0aaaabbbbcccc"))
	older := d.slotPath((d.editStripe("secret-key") + 1) % len(d.slots))
	os.WriteFile(older, nil, 0o644)
	d.Close()
	if d, err = OpenDir(root, 0); err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if ok, err := d.Splice(ctx, "secret-key", []byte("HDR0"), []byte("HDR1"), 8, 4, []byte("ROWS")); !ok || err != nil {
		t.Fatal(ok, err)
	}
	d.Delete(ctx, "secret-key")
	if _, err := d.slot((d.editStripe("secret-key") + 1) % len(d.slots)); err != nil {
		t.Fatal(err)
	}
	assertSlotsClean(t, root)
}
