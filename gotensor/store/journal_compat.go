package store

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"

	castagnoli "github.com/gotensor/gotensor/gotensor/internal/crc32c"
)

// Journal layouts written by earlier versions, still applied when a crash
// left one: a <file>.splice journal beside the file it edits, and slot
// records GTJ2 (a whole header and the data) and GTJ3 (pieces, no binding
// to the frame they were computed from).

const journalExt = ".splice"

var (
	journalMagic = [4]byte{'G', 'T', 'S', 'J'}
	slotMagicV2  = [4]byte{'G', 'T', 'J', '2'}
	slotMagicV3  = [4]byte{'G', 'T', 'J', '3'}
)

// isJournal says whether a directory entry is a <file>.splice journal.
func isJournal(name string) bool { return filepath.Ext(name) == journalExt }

// parseJournal reads a complete <file>.splice journal (magic, header
// length, header, data offset, data length, data, CRC32C of everything
// before); ok is false for a torn one.
func parseJournal(b []byte) (header []byte, off int64, data []byte, ok bool) {
	if len(b) < 28 || [4]byte(b[:4]) != journalMagic {
		return nil, 0, nil, false
	}
	if castagnoli.Checksum(b[:len(b)-4]) != binary.LittleEndian.Uint32(b[len(b)-4:]) {
		return nil, 0, nil, false
	}
	h := uint64(binary.LittleEndian.Uint32(b[4:]))
	if 28+h > uint64(len(b)) {
		return nil, 0, nil, false
	}
	header = b[8 : 8+h]
	off = int64(binary.LittleEndian.Uint64(b[8+h:]))
	n := binary.LittleEndian.Uint64(b[16+h:])
	if 28+h+n != uint64(len(b)) || off < 0 {
		return nil, 0, nil, false
	}
	return header, off, b[24+h : 24+h+n], true
}

// replayJournal finishes or drops the edit a crash left in journal file
// jpath, beside the file it edits.
func (s *Dir) replayJournal(jpath string) error {
	b, err := os.ReadFile(jpath)
	if err != nil {
		return err
	}
	if header, off, data, ok := parseJournal(b); ok {
		if err := s.replayEdit(strings.TrimSuffix(jpath, journalExt), record{pieces: splicePieces(header, off, data)}); err != nil {
			return err
		}
	}
	return os.Remove(jpath)
}

// splicePieces are the writes of a same-length splice: data at off, then
// the header.
func splicePieces(header []byte, off int64, data []byte) []Piece {
	return []Piece{{Off: off, B: data}, {Off: 0, B: header}}
}

// parseSlotV3 reads a GTJ3 record: magic, path length, the path, the piece
// count, each piece's offset (8 bytes), length (4) and bytes, and a CRC32C
// of everything before.
func parseSlotV3(b []byte) (rec record, ok bool) {
	if len(b) < 12 || [4]byte(b[:4]) != slotMagicV3 {
		return record{}, false
	}
	r := reader{b: b, at: 4}
	rec.rel = string(r.bytes(uint64(r.u32())))
	count := uint64(r.u32())
	if count > uint64(len(b))/12 {
		return record{}, false
	}
	for range count {
		off, n := r.u64(), uint64(r.u32())
		rec.pieces = append(rec.pieces, Piece{Off: int64(off), B: r.bytes(n)})
	}
	return rec, r.checksummed() && filepath.IsLocal(rec.rel)
}

// parseSlotV2 reads a GTJ2 record: magic, path length, the path, the edit
// as a <file>.splice journal lays it out, and a CRC32C of everything
// before.
func parseSlotV2(b []byte) (rec record, ok bool) {
	if len(b) < 8 || [4]byte(b[:4]) != slotMagicV2 {
		return record{}, false
	}
	p := uint64(binary.LittleEndian.Uint32(b[4:]))
	j := 8 + p // the journal's start
	if j+28 > uint64(len(b)) {
		return record{}, false
	}
	h := uint64(binary.LittleEndian.Uint32(b[j+4:]))
	if j+28+h > uint64(len(b)) {
		return record{}, false
	}
	n := binary.LittleEndian.Uint64(b[j+16+h:])
	end := j + 28 + h + n // the journal's end
	if n > uint64(len(b)) || end+4 > uint64(len(b)) {
		return record{}, false
	}
	if castagnoli.Checksum(b[:end]) != binary.LittleEndian.Uint32(b[end:]) {
		return record{}, false
	}
	header, off, data, ok := parseJournal(b[j:end])
	rel := string(b[8:j])
	if !ok || !filepath.IsLocal(rel) {
		return record{}, false
	}
	return record{rel: rel, pieces: splicePieces(header, off, data)}, true
}
