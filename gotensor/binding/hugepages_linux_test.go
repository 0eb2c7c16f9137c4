//go:build linux

package binding

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/gotensor/gotensor/gotensor/tensor"
)

// vmFlags returns the VmFlags of the mapping that holds address a, from /proc/self/smaps.
func vmFlags(t *testing.T, a uintptr) []string {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skip("no /proc/self/smaps:", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	in := false
	for sc.Scan() {
		line := sc.Text()
		var lo, hi uintptr
		if n, _ := fmt.Sscanf(strings.Fields(line)[0], "%x-%x", &lo, &hi); n == 2 && !strings.HasSuffix(strings.Fields(line)[0], ":") {
			in = lo <= a && a < hi
			continue
		}
		if in && strings.HasPrefix(line, "VmFlags:") {
			return strings.Fields(line)[1:]
		}
	}
	t.Fatalf("no mapping holds %#x", a)
	return nil
}

func has(flags []string, f string) bool {
	for _, g := range flags {
		if g == f {
			return true
		}
	}
	return false
}

// ReadRows and ReadInto both advise the destination's whole huge pages.
func TestReadsAdviseHugePagesOnTheDestinationsWholeHugePagesOnly(t *testing.T) {
	if _, err := os.Stat("/sys/kernel/mm/transparent_hugepage/enabled"); err != nil || !smallPages {
		t.Skip("no transparent huge pages here")
	}
	for name, read := range map[string]func(h int64, dst []byte, shape []int64) error{
		"ReadRows": func(h int64, dst []byte, shape []int64) error {
			return ReadRows(h, "w", 0, dst, int64(tensor.Uint8), shape, -1, 0)
		},
		"ReadInto": func(h int64, dst []byte, shape []int64) error {
			return ReadInto(h, "w", dst, int64(tensor.Uint8), shape, -1, 0)
		},
	} {
		t.Run(name, func(t *testing.T) { checkAdvisedRead(t, read) })
	}
}

func checkAdvisedRead(t *testing.T, read func(h int64, dst []byte, shape []int64) error) {
	m, err := unix.Mmap(-1, 0, 4*hugePage, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(m)
	base := uintptr(unsafe.Pointer(&m[0]))
	skip := int((base+hugePage-1)&^(hugePage-1)-base) + hugePage/2 // half a huge page past an aligned address
	dst := m[skip : skip+2*hugePage]                               // holds one whole aligned huge page
	h, err := Open("mem://")
	if err != nil {
		t.Fatal(err)
	}
	defer Close(h)
	src := make([]byte, len(dst))
	for i := range src {
		src[i] = byte(i * 7)
	}
	shape := []int64{int64(len(dst)) / 4096, 4096}
	if err := Write(h, "w", src, int64(tensor.Uint8), shape, "none", -1, 0); err != nil {
		t.Fatal(err)
	}
	if err := read(h, dst, shape); err != nil {
		t.Fatal(err)
	}
	if string(dst) != string(src) {
		t.Fatal("the rows read back differ")
	}
	start := uintptr(unsafe.Pointer(&dst[0]))
	whole := (start + hugePage - 1) &^ (hugePage - 1)
	if !has(vmFlags(t, whole), "hg") {
		t.Fatalf("the whole huge page at %#x inside the destination is not advised huge", whole)
	}
	if has(vmFlags(t, start), "hg") {
		t.Fatalf("the destination's partial first huge page at %#x is advised huge", start)
	}
	small := m[skip : skip+hugePage-4096] // no whole huge page: nothing advised
	before := vmFlags(t, uintptr(unsafe.Pointer(&m[0])))
	adviseHugePages(small)
	if has(before, "hg") || has(vmFlags(t, uintptr(unsafe.Pointer(&m[0]))), "hg") {
		t.Fatal("memory outside the destination's whole huge pages is advised huge")
	}
}
