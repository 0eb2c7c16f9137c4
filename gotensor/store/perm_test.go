package store

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/gotensor/gotensor/gotensor/errs"
)

// A directory the process may not write is a permission error
// (Unauthorized, Python's PermissionError), not Unavailable: opening a
// store in it, and under it. The child runs as nobody, since root passes
// every permission check.
func TestDirWithoutPermissionIsUnauthorized(t *testing.T) {
	if dir := os.Getenv("GOTENSOR_PERM_CHILD"); dir != "" {
		for _, d := range []string{dir, filepath.Join(dir, "sub")} {
			_, err := OpenDir(d, 0)
			fmt.Printf("open %s: %s\n", filepath.Base(d), errs.KindOf(err))
		}
		return
	}
	if os.Getuid() != 0 {
		t.Skip("needs root to run a child as another user")
	}
	base, err := os.MkdirTemp("", "gotensor-perm-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(base)
	os.Chmod(base, 0o755)
	bin := filepath.Join(base, "store.test")
	copyFile(t, os.Args[0], bin)
	dir := filepath.Join(base, "store") // root's, 0755: nobody may read it, not write it
	os.Mkdir(dir, 0o755)
	cmd := exec.Command(bin, "-test.run=^TestDirWithoutPermissionIsUnauthorized$")
	cmd.Env = append(os.Environ(), "GOTENSOR_PERM_CHILD="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	for _, want := range []string{"open store: Unauthorized", "open sub: Unauthorized"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("want %q, child said:\n%s", want, out)
		}
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
}
