package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	castagnoli "github.com/gotensor/gotensor/gotensor/internal/crc32c"
)

// A row write that keeps a file's length edits it in place, crash-safely:
// the edit goes first to a journal (synced), then into the file, which is
// synced, then the journal is cleared (synced). A journal found when the
// directory is opened is applied again (the edit is idempotent), or
// dropped when it is incomplete (the file was not touched).
//
// The journals are slots: one file per edit-lock stripe in the store's
// directory (.gotensor.journal-NN), opened once and kept open, so an edit
// costs a pwrite to it and one to clear it rather than the create, write,
// close and unlink of a journal file per edit (most of a one-row append's
// cost). An edit holds its key's stripe exclusively, so a slot has one
// edit at a time; a slot's record names the file it edits and holds the
// bytes the edit writes: a row write's chunks, the table entries they
// change and the header checksum, not the whole header. Records of the
// previous layout (the whole header and the data, magic GTJ2) and the
// <file>.splice journals older versions wrote beside the file are still
// applied when found at open.

const journalExt = ".splice"

var journalMagic = [4]byte{'G', 'T', 'S', 'J'}

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

// editInPlace writes pieces, in order, into f, key's file, through stripe
// i's journal slot; the caller holds stripe i's edit lock.
func (s *Dir) editInPlace(f *os.File, key string, i int, pieces []Piece) error {
	slot, err := s.slot(i)
	if err != nil {
		return err
	}
	rec := slotRecord(pathFor(key), pieces)
	if _, err := slot.WriteAt(rec, 0); err != nil {
		return err
	}
	if !s.NoSync {
		if err := unix.Fdatasync(int(slot.Fd())); err != nil {
			return err
		}
	}
	if err := s.applyEdit(f, pieces); err != nil {
		return err // the record stays: the next open applies it
	}
	return s.clearSlot(slot, len(rec))
}

// applyEdit writes pieces, in order, into f, open for writing.
func (s *Dir) applyEdit(f *os.File, pieces []Piece) error {
	for _, p := range pieces {
		if _, err := f.WriteAt(p.B, p.Off); err != nil {
			return err
		}
	}
	if !s.NoSync {
		return f.Sync()
	}
	return nil
}

// replayJournal finishes or drops the edit a crash left in journal file
// jpath, beside the file it edits (written by an older version).
func (s *Dir) replayJournal(jpath string) error {
	b, err := os.ReadFile(jpath)
	if err != nil {
		return err
	}
	if header, off, data, ok := parseJournal(b); ok {
		if err := s.replayEdit(strings.TrimSuffix(jpath, journalExt), splicePieces(header, off, data)); err != nil {
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

// replayEdit applies an edit found in a journal to the file at path, if
// that file is still there and long enough.
func (s *Dir) replayEdit(path string, pieces []Piece) error {
	info, err := os.Stat(path)
	if err != nil {
		return nil
	}
	for _, p := range pieces {
		if p.Off+int64(len(p.B)) > info.Size() {
			return nil
		}
	}
	f, err := openBlocking(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	err = s.applyEdit(f, pieces)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

const slotPrefix = ".gotensor.journal-"

var (
	slotMagic   = [4]byte{'G', 'T', 'J', '3'}
	slotMagicV2 = [4]byte{'G', 'T', 'J', '2'} // the previous layout, still replayed
)

// bigSlot is the size past which a cleared slot is truncated, so an edit
// of a large tensor does not keep its bytes on disk.
const bigSlot = 1 << 20

// slotRecord lays out an edit in a slot: magic, path length, the path
// (relative to the store), the piece count, each piece's offset (8
// bytes), length (4) and bytes, and a CRC32C of everything before.
func slotRecord(rel string, pieces []Piece) []byte {
	n := 16 + len(rel)
	for _, p := range pieces {
		n += 12 + len(p.B)
	}
	b := make([]byte, 0, n)
	b = append(b, slotMagic[:]...)
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

// parseSlot reads the record at the start of a slot's bytes b (which may
// run on past it), of either layout; ok is false for a cleared or torn one.
func parseSlot(b []byte) (rel string, pieces []Piece, ok bool) {
	if len(b) >= 4 && [4]byte(b[:4]) == slotMagicV2 {
		rel, header, off, data, ok := parseSlotV2(b)
		return rel, splicePieces(header, off, data), ok
	}
	if len(b) < 12 || [4]byte(b[:4]) != slotMagic {
		return "", nil, false
	}
	le := binary.LittleEndian
	p := uint64(le.Uint32(b[4:]))
	at := 8 + p
	if at+8 > uint64(len(b)) {
		return "", nil, false
	}
	rel = string(b[8:at])
	count := uint64(le.Uint32(b[at:]))
	at += 4
	if count > uint64(len(b))/12 {
		return "", nil, false
	}
	pieces = make([]Piece, 0, count)
	for range count {
		if at+12 > uint64(len(b)) {
			return "", nil, false
		}
		off, n := le.Uint64(b[at:]), uint64(le.Uint32(b[at+8:]))
		at += 12
		if n > uint64(len(b))-at || off > 1<<62 {
			return "", nil, false
		}
		pieces = append(pieces, Piece{Off: int64(off), B: b[at : at+n]})
		at += n
	}
	if at+4 > uint64(len(b)) || castagnoli.Checksum(b[:at]) != le.Uint32(b[at:]) || !filepath.IsLocal(rel) {
		return "", nil, false
	}
	return rel, pieces, true
}

// parseSlotV2 reads a record of the previous layout: magic GTJ2, path
// length, the path, the edit as a <file>.splice journal lays it out, and
// a CRC32C of everything before.
func parseSlotV2(b []byte) (rel string, header []byte, off int64, data []byte, ok bool) {
	if len(b) < 8 || [4]byte(b[:4]) != slotMagicV2 {
		return "", nil, 0, nil, false
	}
	p := uint64(binary.LittleEndian.Uint32(b[4:]))
	j := 8 + p // the journal's start
	if j+28 > uint64(len(b)) {
		return "", nil, 0, nil, false
	}
	h := uint64(binary.LittleEndian.Uint32(b[j+4:]))
	if j+28+h > uint64(len(b)) {
		return "", nil, 0, nil, false
	}
	n := binary.LittleEndian.Uint64(b[j+16+h:])
	end := j + 28 + h + n // the journal's end
	if n > uint64(len(b)) || end+4 > uint64(len(b)) {
		return "", nil, 0, nil, false
	}
	if castagnoli.Checksum(b[:end]) != binary.LittleEndian.Uint32(b[end:]) {
		return "", nil, 0, nil, false
	}
	header, off, data, ok = parseJournal(b[j:end])
	rel = string(b[8:j])
	if !ok || !filepath.IsLocal(rel) {
		return "", nil, 0, nil, false
	}
	return rel, header, off, data, true
}

// slot is the open journal slot of stripe i, opened on first use; the
// caller holds stripe i's edit lock.
func (s *Dir) slot(i int) (*os.File, error) {
	s.slotMu.Lock()
	defer s.slotMu.Unlock()
	if s.slots[i] != nil {
		return s.slots[i], nil
	}
	f, err := openBlocking(s.slotPath(i), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	s.slots[i] = f
	return f, nil
}

func (s *Dir) slotPath(i int) string {
	return filepath.Join(s.dir, fmt.Sprintf("%s%02d", slotPrefix, i))
}

// clearSlot marks slot f empty (and synced, unless NoSync, so that a crash
// later cannot replay the edit over a file replaced since).
func (s *Dir) clearSlot(f *os.File, used int) error {
	var err error
	if used > bigSlot {
		err = f.Truncate(0)
	} else {
		_, err = f.WriteAt(make([]byte, len(slotMagic)), 0)
	}
	if err == nil && !s.NoSync {
		err = unix.Fdatasync(int(f.Fd()))
	}
	return err
}

// replaySlots finishes the edits a crash left in the slots and clears them.
func (s *Dir) replaySlots() error {
	for i := range s.slots {
		b, err := os.ReadFile(s.slotPath(i))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if rel, pieces, ok := parseSlot(b); ok {
			if err := s.replayEdit(filepath.Join(s.dir, rel), pieces); err != nil {
				return err
			}
		}
		f, err := s.slot(i)
		if err != nil {
			return err
		}
		if err := s.clearSlot(f, len(b)); err != nil {
			return err
		}
	}
	return nil
}

// isSlot says whether a directory entry is a journal slot.
func isSlot(name string) bool { return strings.HasPrefix(name, slotPrefix) }

// isJournal says whether a directory entry is an edit's journal.
func isJournal(name string) bool { return filepath.Ext(name) == journalExt }
