package store

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gotensor/gotensor/gotensor/errs"
)

// A read-only open reads a directory another store owns (its lock held):
// keys written after the open, their frames, usage; it writes nothing
// (writes are Unauthorized), creates no directory, lock or slot, and a
// missing directory is an error rather than a new store.
func TestReadOnlyDirReadsBesideItsOwner(t *testing.T) {
	root := filepath.Join(t.TempDir(), "store")
	if _, err := Open("file://" + root + "?readonly=true"); !errs.Is(err, errs.InvalidArgument) {
		t.Fatalf("a missing directory: %v", err)
	}
	if _, err := os.Stat(root); !os.IsNotExist(err) {
		t.Fatal("a read-only open created the directory")
	}
	owner, err := OpenDir(root, 0)
	must(t, err)
	defer owner.Close()
	must(t, owner.Put(ctx, "a", []byte("frame-a")))
	before, _ := os.ReadDir(root)
	ro, err := Open("file://" + root + "?readonly=1")
	must(t, err)
	defer ro.Close()
	must(t, owner.Put(ctx, "b", []byte("frame-b"))) // after the read-only open
	if keys, _ := ro.List(ctx, ""); len(keys) != 2 {
		t.Fatalf("keys %v", keys)
	}
	if got, err := ro.Get(ctx, "b"); err != nil || string(got) != "frame-b" {
		t.Fatalf("get b: %q %v", got, err)
	}
	if u := ro.Usage(); u.Keys != 2 || u.Bytes != 14 {
		t.Fatalf("usage %+v", u)
	}
	if err := ro.Put(ctx, "c", []byte("x")); !errs.Is(err, errs.Unauthorized) {
		t.Fatalf("put on a read-only store: %v", err)
	}
	if err := ro.Delete(ctx, "a"); !errs.Is(err, errs.Unauthorized) {
		t.Fatalf("delete on a read-only store: %v", err)
	}
	must(t, owner.Delete(ctx, "a"))
	if _, err := ro.Get(ctx, "a"); !errs.Is(err, errs.KeyNotFound) {
		t.Fatalf("a key its owner deleted: %v", err)
	}
	after, _ := os.ReadDir(root)
	if len(after) != len(before) { // b added, a removed: nothing of the read-only store's
		t.Fatalf("files before %v, after %v", before, after)
	}
}
