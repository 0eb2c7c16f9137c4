package store

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gotensor/gotensor/gotensor/errs"
)

// A misspelt option used to be ignored (mem://x?capcity=1MiB was unbounded).
func TestUnknownOptionsRejected(t *testing.T) {
	dir := t.TempDir()
	for _, u := range []string{"mem://x?capcity=1MiB", "mem://?capacity=1MiB&fsync=0", "file://" + dir + "?capcity=1",
		"mem://a,b?cap=1"} {
		s, err := Open(u)
		if !errs.Is(err, errs.InvalidArgument) || !strings.Contains(err.Error(), "capacity") {
			if s != nil {
				s.Close()
			}
			t.Errorf("Open(%q) = %v; want InvalidArgument naming the known options", u, err)
		}
	}
	for _, u := range []string{"mem://x?capacity=1MiB&timeout=5s&token=t", "file://" + dir + "?fsync=0&capacity=1MiB"} {
		s, err := Open(u)
		if err != nil {
			t.Fatalf("Open(%q): %v", u, err)
		}
		s.Close()
	}
}

// No token may reach an error message: URLs in errors are redacted.
func TestErrorsHideToken(t *testing.T) {
	for _, u := range []string{"bogus://x?token=SEKRIT", "mem://x?token=SEKRIT&capcity=1", "file://host/d?token=SEKRIT",
		"mem://x?token=SEKRIT&capacity=lots", "::bad?token=SEKRIT"} {
		if _, err := Open(u); err == nil || strings.Contains(err.Error(), "SEKRIT") {
			t.Errorf("Open(%q) = %v", u, err)
		}
	}
	s, err := Open("mem://named?token=SEKRIT")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Get(ctx, "missing"); !errs.Is(err, errs.KeyNotFound) || strings.Contains(err.Error(), "SEKRIT") {
		t.Fatalf("get: %v", err)
	}
	if s.URL() != "mem://named" {
		t.Fatalf("URL %q", s.URL())
	}
}

// mem://NAME opened twice in a process is one store; each handle closes
// alone, and the store goes with the last. mem:// stays private.
func TestMemNamesShared(t *testing.T) {
	a, err := Open("mem://shared")
	must(t, err)
	b, err := Open("mem://shared?capacity=0")
	must(t, err)
	must(t, a.Put(ctx, "k", []byte("v")))
	if got, err := b.Get(ctx, "k"); err != nil || string(got) != "v" {
		t.Fatalf("second handle: %q, %v", got, err)
	}
	if _, err := Open("mem://shared?capacity=1MiB"); !errs.Is(err, errs.InvalidArgument) {
		t.Fatalf("capacity differing from the open store's: %v", err)
	}
	must(t, a.Close())
	must(t, a.Close())
	if _, err := a.Get(ctx, "k"); !errs.Is(err, errs.Closed) {
		t.Fatalf("closed handle: %v", err)
	}
	// Every edit through a closed handle fails and changes nothing.
	if _, err := a.(Splicer).Splice(ctx, "k", nil, nil, 0, 1, []byte("x")); !errs.Is(err, errs.Closed) {
		t.Fatalf("closed handle's Splice: %v", err)
	}
	if _, err := a.(CheckedLeaser).SpliceChecked(ctx, "k", nil, nil, 0, 1, []byte("x")); !errs.Is(err, errs.Closed) {
		t.Fatalf("closed handle's SpliceChecked: %v", err)
	}
	if _, _, err := a.(Editor).EditChecked(ctx, "k", 0, Edit{Off: 0, N: 1, Data: []byte("x")}); !errs.Is(err, errs.Closed) {
		t.Fatalf("closed handle's EditChecked: %v", err)
	}
	if got, err := b.Get(ctx, "k"); err != nil || string(got) != "v" {
		t.Fatalf("after closing the other handle: %q, %v", got, err)
	}
	must(t, b.Close())
	c, err := Open("mem://shared")
	must(t, err)
	defer c.Close()
	if ok, _ := c.Has(ctx, "k"); ok {
		t.Fatal("the store outlived its last handle")
	}
	p, err := Open("mem://")
	must(t, err)
	defer p.Close()
	q, err := Open("mem://")
	must(t, err)
	defer q.Close()
	must(t, p.Put(ctx, "k", []byte("v")))
	if ok, _ := q.Has(ctx, "k"); ok {
		t.Fatal("mem:// without a name is shared")
	}
	if _, ok := b.(Leaser); !ok {
		t.Fatal("a named handle does not lease")
	}
}

func TestFileWhereDirectoryBelongs(t *testing.T) {
	f := filepath.Join(t.TempDir(), "f")
	must(t, os.WriteFile(f, []byte("x"), 0o644))
	for _, dir := range []string{f, filepath.Join(f, "sub")} {
		if _, err := Open("file://" + dir); !errs.Is(err, errs.InvalidArgument) {
			t.Errorf("%s: %v; want InvalidArgument", dir, err)
		}
	}
}

func TestDirOpenTwiceInOneProcess(t *testing.T) {
	dir := t.TempDir()
	a, err := Open("file://" + dir)
	must(t, err)
	_, err = Open("file://" + dir + "/.")
	if !errs.Is(err, errs.Unavailable) || !strings.Contains(err.Error(), "this process") {
		t.Fatalf("second open: %v", err)
	}
	must(t, a.Close())
	b, err := Open("file://" + dir)
	must(t, err)
	b.Close()
}

// Only the values of options known to be safe reach a message: a misspelt
// token= (tokn=, Token=), a value pasted as an option, and an option given
// twice are refused without showing the secret.
func TestMisspeltOptionsHideTheirValues(t *testing.T) {
	dir := t.TempDir()
	for _, u := range []string{"mem://x?tokn=SEKRIT9", "mem://x?Token=SEKRIT9", "mem://?tokn=SEKRIT9", "file://" + dir + "?tokn=SEKRIT9",
		"mem://x?SEKRIT9", "mem://x?capacity=1MiB&capacity=2MiB&token=SEKRIT9", "mem://x?token=SEKRIT9&token=SEKRIT9",
		"mem://x?sekritsekritsekritsekritsekritsekritsekrit=1"} {
		_, err := Open(u)
		if !errs.Is(err, errs.InvalidArgument) {
			t.Errorf("Open(%q) = %v, want InvalidArgument", u, err)
			continue
		}
		if strings.Contains(strings.ToLower(err.Error()), "sekrit") {
			t.Errorf("Open(%q): the error shows the secret: %v", u, err)
		}
	}
	_, err := Open("mem://x?capacity=1MiB&capacity=2MiB")
	if err == nil || !strings.Contains(err.Error(), `"capacity" given 2 times`) {
		t.Errorf("an option given twice: %v", err)
	}
	if got := Redact("tcp://h:1?timeout=5s&tokn=abc&ca=/x.pem&token=t"); got != "tcp://h:1?timeout=5s&tokn=xxxxx&ca=/x.pem&token=xxxxx" {
		t.Errorf("Redact: %s", got)
	}
}
