package engine

import (
	"bytes"
	"hash/adler32"
	"testing"

	"github.com/klauspost/compress/flate"
	"github.com/pierrec/lz4/v4"

	"github.com/gotensor/gotensor/gotensor/errs"
)

func TestSoftwareInflate(t *testing.T) {
	raw := bytes.Repeat([]byte("gotensor "), 1000)
	var buf bytes.Buffer
	w, _ := flate.NewWriter(&buf, 1)
	w.Write(raw)
	w.Close()
	dst := make([]byte, len(raw))
	sum, err := (Software{}).Inflate(dst, buf.Bytes())
	if err != nil || !bytes.Equal(dst, raw) || sum != adler32.Checksum(raw) {
		t.Fatalf("inflate: %v", err)
	}
	if _, err := (Software{}).Inflate(make([]byte, len(raw)-1), buf.Bytes()); !errs.Is(err, errs.CorruptData) {
		t.Fatalf("too long a stream: %v", err)
	}
	if _, err := (Software{}).Inflate(make([]byte, len(raw)+1), buf.Bytes()); !errs.Is(err, errs.CorruptData) {
		t.Fatalf("too short a stream: %v", err)
	}
	if _, err := (Software{}).Inflate(dst, append(buf.Bytes(), 0)); !errs.Is(err, errs.CorruptData) {
		t.Fatalf("trailing garbage: %v", err)
	}
}

func TestSoftwareLZ4(t *testing.T) {
	raw := bytes.Repeat([]byte("tensor"), 500)
	enc := make([]byte, lz4.CompressBlockBound(len(raw)))
	n, _ := lz4.CompressBlock(raw, enc, nil)
	dst := make([]byte, len(raw))
	if err := (Software{}).LZ4Block(dst, enc[:n]); err != nil || !bytes.Equal(dst, raw) {
		t.Fatal(err)
	}
	if err := (Software{}).LZ4Block(make([]byte, len(raw)+5), enc[:n]); !errs.Is(err, errs.CorruptData) {
		t.Fatal(err)
	}
}
