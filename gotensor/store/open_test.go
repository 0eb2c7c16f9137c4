package store

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// openBlocking opens as os.OpenFile does: a missing file is fs.ErrNotExist
// (KeyNotFound upstream), the descriptor is close-on-exec and blocking.
func TestOpenBlocking(t *testing.T) {
	dir := t.TempDir()
	if _, err := openBlocking(filepath.Join(dir, "missing"), os.O_RDONLY, 0); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
	path := filepath.Join(dir, "f")
	w, err := openBlocking(path, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("frame")); err != nil {
		t.Fatal(err)
	}
	w.Close()
	f, err := openBlocking(path, os.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fd := int(f.Fd())
	if fl, _ := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); fl&unix.FD_CLOEXEC == 0 {
		t.Fatal("not close-on-exec")
	}
	if fl, _ := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0); fl&unix.O_NONBLOCK != 0 {
		t.Fatal("non-blocking")
	}
	if b, err := io.ReadAll(f); err != nil || string(b) != "frame" {
		t.Fatalf("read %q, %v", b, err)
	}
}
