//go:build linux

package cowmap

import (
	"bytes"
	"testing"
	"unsafe"
)

func filled(t *testing.T, n int) *Memfd {
	t.Helper()
	f, err := NewMemfd("test", n)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	for i := range f.Shared {
		f.Shared[i] = byte(i * 7)
	}
	return f
}

// The three ways of finding the written pages: write protection
// (tracked mappings), PAGEMAP_SCAN's private copies and, where the kernel
// has no PAGEMAP_SCAN, /proc/self/pagemap.
func TestWritesStayPrivateAndRevertGivesThePagesBack(t *testing.T) {
	ways := []string{"pagemap"}
	if scanPages(openPagemap(t), make([]byte, PageSize()), privateCopies, func(_, _ uintptr) bool { return true }) {
		ways = append(ways, "scan")
	} else {
		t.Log("this kernel has no PAGEMAP_SCAN: the pagemap read only")
	}
	if trackFd() >= 0 {
		ways = append(ways, "tracked")
	} else {
		t.Log("userfaultfd's asynchronous write protection is refused here: no tracked mappings")
	}
	for _, way := range ways {
		noTrack.Store(way != "tracked")
		noScan.Store(way == "pagemap")
		t.Run(way, func(t *testing.T) { revertsWrittenPages(t, way == "tracked") })
	}
	noTrack.Store(false)
	noScan.Store(false)
}

func openPagemap(t testing.TB) int {
	fd, err := pagemap()
	if err != nil {
		t.Fatal(err)
	}
	return fd
}

func revertsWrittenPages(t *testing.T, tracked bool) {
	f := filled(t, 64*PageSize())
	want := bytes.Clone(f.Shared)
	for _, populate := range []bool{false, true} {
		m, err := Map(f.Fd(), 0, len(f.Shared)-100, populate) // a part of the last page, as a file's
		if err != nil {
			t.Fatal(err)
		}
		if m.tracked != tracked {
			t.Fatalf("tracked %v, want %v", m.tracked, tracked)
		}
		if !bytes.Equal(m.Bytes(), want[:len(m.Bytes())]) {
			t.Fatal("mapping shows other bytes than the file")
		}
		b := m.Bytes()
		b[5*PageSize()+3] ^= 0xff // two runs of written pages
		b[6*PageSize()] ^= 0xff
		b[40*PageSize()+9] ^= 0xff
		b[len(b)-1] ^= 0xff // in the last page, which the mapping holds a part of
		if !bytes.Equal(f.Shared, want) {
			t.Fatal("a write into the private mapping reached the file")
		}
		before := Counts.Reverted.Load()
		if !m.Revert() {
			t.Fatal("Revert failed")
		}
		if got := Counts.Reverted.Load() - before; got != 4 {
			t.Fatalf("reverted %d pages, want the 4 written", got)
		}
		if !bytes.Equal(m.Bytes(), want[:len(m.Bytes())]) {
			t.Fatal("after Revert the mapping does not show the file's bytes")
		}
		// the file changes (its owner edits it): an unwritten page follows
		f.Shared[7*PageSize()] ^= 1
		if m.Bytes()[7*PageSize()] != f.Shared[7*PageSize()] {
			t.Fatal("a page never written does not follow its file")
		}
		f.Shared[7*PageSize()] ^= 1
		// written again after the Revert: found again (a tracked page is
		// protected anew when it is given back)
		b[5*PageSize()+3] ^= 0xff
		before = Counts.Reverted.Load()
		if !m.Revert() || Counts.Reverted.Load()-before != 1 || !bytes.Equal(m.Bytes(), want[:len(m.Bytes())]) {
			t.Fatalf("a page written after a Revert: reverted %d pages, want 1", Counts.Reverted.Load()-before)
		}
		m.Unmap()
	}
}

func TestRestoreCopiesBackWhatDiffers(t *testing.T) {
	f := filled(t, 32*PageSize())
	m, err := Map(f.Fd(), 0, len(f.Shared), false)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Unmap()
	m.Bytes()[100] = ^m.Bytes()[100]
	if n := m.Restore(f.Shared); n != restoreBlock {
		t.Fatalf("restored %d bytes, want one block", n)
	}
	if !bytes.Equal(m.Bytes(), f.Shared) || m.Restore(f.Shared) != 0 {
		t.Fatal("Restore did not bring the bytes back")
	}
}

func TestPinnerRegistersOnceAndUnregistersBeforeUnmap(t *testing.T) {
	var pinned, unpinned []uintptr
	SetPinner(&Pinner{
		Pin:   func(p unsafe.Pointer, n int) error { pinned = append(pinned, uintptr(p)); return nil },
		Unpin: func(p unsafe.Pointer) { unpinned = append(unpinned, uintptr(p)) },
	})
	defer SetPinner(nil)
	f := filled(t, 4*PageSize())
	m, err := Map(f.Fd(), 0, len(f.Shared), true)
	if err != nil {
		t.Fatal(err)
	}
	addr := m.Addr()
	if m.Pin() != nil || m.Pin() != nil || len(pinned) != 1 || !m.Pinned() {
		t.Fatalf("pinned %d times", len(pinned))
	}
	if m.Revert() {
		t.Fatal("Revert claims to bring back a pinned mapping")
	}
	m.Unmap()
	if len(unpinned) != 1 || unpinned[0] != addr {
		t.Fatal("the mapping was not unpinned before it was unmapped")
	}
}

// BenchmarkRevert is the cleaning of an 8 MiB mapping after a view that
// wrote one page: tracked, by PAGEMAP_SCAN's private copies and by the
// pagemap read.
func BenchmarkRevert(b *testing.B) {
	f, err := NewMemfd("bench", 8<<20)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	for i := range f.Shared {
		f.Shared[i] = byte(i)
	}
	noTrack.Store(true)
	m, err := Map(f.Fd(), 0, len(f.Shared), true)
	noTrack.Store(false)
	if err != nil {
		b.Fatal(err)
	}
	defer m.Unmap()
	tracked, err := Map(f.Fd(), 0, len(f.Shared), true)
	if err != nil {
		b.Fatal(err)
	}
	defer tracked.Unmap()
	for _, way := range []string{"tracked", "scan", "pagemap"} {
		b.Run(way, func(b *testing.B) {
			if way == "tracked" && !tracked.tracked {
				b.Skip("no tracked mappings here")
			}
			m := m
			if way == "tracked" {
				m = tracked
			}
			noScan.Store(way == "pagemap")
			defer noScan.Store(false)
			for b.Loop() {
				m.Bytes()[4096*100] = 1
				if !m.Revert() {
					b.Fatal("Revert failed")
				}
			}
		})
	}
}
