package store_test

import (
	"context"
	"testing"

	"github.com/gotensor/gotensor/gotensor/store"
)

// A mem:// frame is checked only when PutChecked and only while every
// splice into it is SpliceChecked, in place or copied on write.
func TestMemKeepsWhichFramesAreChecked(t *testing.T) {
	ctx := context.Background()
	m := store.NewMem("mem://", 0)
	checked := func(key string) bool {
		t.Helper()
		_, ok, release, err := m.LeaseChecked(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		release()
		return ok
	}
	frame := []byte("HEADpayload-bytes")
	if err := m.Put(ctx, "a", append([]byte(nil), frame...)); err != nil {
		t.Fatal(err)
	}
	if err := m.PutChecked(ctx, "b", append([]byte(nil), frame...)); err != nil {
		t.Fatal(err)
	}
	if checked("a") || !checked("b") {
		t.Fatalf("Put: checked %v, PutChecked: checked %v", checked("a"), checked("b"))
	}
	splice := func(checkedSplice bool, key string, data string) {
		t.Helper()
		f := m.SpliceChecked
		if !checkedSplice {
			f = m.Splice
		}
		if ok, err := f(ctx, key, []byte("HEAD"), []byte("HEAD"), 4, int64(len(data)), []byte(data)); !ok || err != nil {
			t.Fatalf("splice: %v %v", ok, err)
		}
	}
	splice(true, "b", "PAYLOAD") // in place
	if !checked("b") {
		t.Fatal("SpliceChecked in place made the frame unchecked")
	}
	_, _, release, _ := m.LeaseChecked(ctx, "b") // a reader holds it: copied on write
	splice(true, "b", "payload")
	if !checked("b") {
		t.Fatal("SpliceChecked copied on write made the frame unchecked")
	}
	release()
	splice(false, "b", "PAYLOAD")
	if checked("b") {
		t.Fatal("a Splice from elsewhere left the frame checked")
	}
	splice(true, "a", "PAYLOAD")
	if checked("a") {
		t.Fatal("SpliceChecked made an unchecked frame checked")
	}
}
