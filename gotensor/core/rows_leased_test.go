package core_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/gotensor/gotensor/gotensor/core"
	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/store"
	"github.com/gotensor/gotensor/gotensor/tensor"
)

// A mem:// row read copies the raw chunks of a frame this process wrote
// straight out of the lease (any rows, edge chunks in part, after row
// writes too), and still checks a frame that came from elsewhere: a
// flipped byte in a Put frame is CorruptData.
func TestMemRowReadCopiesCheckedFramesAndChecksOthers(t *testing.T) {
	ctx := context.Background()
	const url = "mem://rows-leased-test"
	s, err := core.Open(url)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	raw, err := store.Open(url) // the same named store
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	cl := raw.(store.CheckedLeaser)
	model, rows, got := writeRowModel(t, s)
	patch := bytes.Repeat([]byte{0xAB}, 3*96)
	if err := s.WriteRows(ctx, "k", 40, tensor.Meta{DType: tensor.Float32, Shape: []int64{3, 24}}, patch); err != nil {
		t.Fatal(err)
	}
	copy(model[40*96:], patch)
	if err := s.ReadRows(ctx, "k", 10, rows, got); err != nil || !bytes.Equal(got, model[960:960+80*96]) {
		t.Fatalf("rows [10:90) after a row write: %v", err)
	}
	f, checked, release, err := cl.LeaseChecked(ctx, "k")
	if err != nil || !checked {
		t.Fatalf("a frame the core wrote and spliced: checked %v, %v", checked, err)
	}
	bad := append([]byte(nil), f...)
	release()
	bad[len(bad)-9600+5000] ^= 1 // in the second chunk
	if err := raw.Put(ctx, "k", bad); err != nil {
		t.Fatal(err)
	}
	if err := s.ReadRows(ctx, "k", 10, rows, got); !errs.Is(err, errs.CorruptData) {
		t.Fatalf("corrupt chunk of a Put frame: %v", err)
	}
}
