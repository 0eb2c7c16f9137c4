package store

import (
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	castagnoli "github.com/gotensor/gotensor/gotensor/internal/crc32c"
)

// journal lays out an edit as older versions did in <file>.splice: magic,
// header length, header, data offset, data length, data, CRC32C of
// everything before.
func journal(header []byte, off int64, data []byte) []byte {
	b := append([]byte(nil), journalMagic[:]...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(header)))
	b = append(b, header...)
	b = binary.LittleEndian.AppendUint64(b, uint64(off))
	b = binary.LittleEndian.AppendUint64(b, uint64(len(data)))
	b = append(b, data...)
	return binary.LittleEndian.AppendUint32(b, castagnoli.Checksum(b))
}

// slotRecordV2 lays out a slot record of the previous layout (GTJ2).
func slotRecordV2(rel string, header []byte, off int64, data []byte) []byte {
	b := append([]byte(nil), slotMagicV2[:]...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(rel)))
	b = append(b, rel...)
	b = append(b, journal(header, off, data)...)
	return binary.LittleEndian.AppendUint32(b, castagnoli.Checksum(b))
}

// slotRecordV3 lays out a slot record of the GTJ3 layout.
func slotRecordV3(rel string, pieces []Piece) []byte {
	b := append([]byte(nil), slotMagicV3[:]...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(rel)))
	b = append(b, rel...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(pieces)))
	for _, p := range pieces {
		b = binary.LittleEndian.AppendUint64(b, uint64(p.Off))
		b = binary.LittleEndian.AppendUint32(b, uint32(len(p.B)))
		b = append(b, p.B...)
	}
	return binary.LittleEndian.AppendUint32(b, castagnoli.Checksum(b))
}

// boundRecord is the record an edit of key's file in the store at root
// writes, bound to that file as it is now.
func boundRecord(t *testing.T, root, key string, pieces []Piece) []byte {
	t.Helper()
	f, err := os.Open(filepath.Join(root, pathFor(key)))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rec, err := bindRecord(f, pathFor(key), pieces)
	if err != nil {
		t.Fatal(err)
	}
	return rec.encode()
}

// A slot record of the previous layout that a crash left is still applied
// at the next open, and a torn one is not.
func TestDirReplaysPreviousSlotLayout(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	d, err := OpenDir(root, 0)
	if err != nil {
		t.Fatal(err)
	}
	d.Put(ctx, "j", []byte("HDR0aaaabbbb"))
	d.Put(ctx, "k", []byte("HDR0aaaabbbb"))
	ji, ki := d.editStripe("j"), d.editStripe("k")
	d.Close()
	if ki == ji {
		ki = (ji + 1) % len(d.slots)
	}
	os.WriteFile(d.slotPath(ji), slotRecordV2(pathFor("j"), []byte("HDR2"), 8, []byte("BBBB")), 0o644)
	torn := slotRecordV2(pathFor("k"), []byte("HDR2"), 8, []byte("BBBB"))
	os.WriteFile(d.slotPath(ki), torn[:len(torn)-1], 0o644)
	d, err = OpenDir(root, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if got, _ := d.Get(ctx, "j"); string(got) != "HDR2aaaaBBBB" {
		t.Fatalf("GTJ2 record not applied: %q", got)
	}
	if got, _ := d.Get(ctx, "k"); string(got) != "HDR0aaaabbbb" {
		t.Fatalf("torn GTJ2 record applied: %q", got)
	}
}
