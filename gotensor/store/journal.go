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
// edit at a time; a slot's record names the file it edits. Older versions
// wrote <file>.splice beside the file: one found at open is still applied.

const journalExt = ".splice"

var journalMagic = [4]byte{'G', 'T', 'S', 'J'}

// journal lays out an edit: magic, header length, header, data offset,
// data length, data, CRC32C of everything before.
func journal(header []byte, off int64, data []byte) []byte {
	b := make([]byte, 0, 28+len(header)+len(data))
	b = append(b, journalMagic[:]...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(header)))
	b = append(b, header...)
	b = binary.LittleEndian.AppendUint64(b, uint64(off))
	b = binary.LittleEndian.AppendUint64(b, uint64(len(data)))
	b = append(b, data...)
	return binary.LittleEndian.AppendUint32(b, castagnoli.Checksum(b))
}

// parseJournal reads a complete journal; ok is false for a torn one.
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

// editInPlace writes header at 0 and data at off of f, key's file,
// through stripe i's journal slot; the caller holds stripe i's edit lock.
func (s *Dir) editInPlace(f *os.File, key string, i int, header []byte, off int64, data []byte) error {
	slot, err := s.slot(i)
	if err != nil {
		return err
	}
	rec := slotRecord(pathFor(key), header, off, data)
	if _, err := slot.WriteAt(rec, 0); err != nil {
		return err
	}
	if !s.NoSync {
		if err := unix.Fdatasync(int(slot.Fd())); err != nil {
			return err
		}
	}
	if err := s.applyEdit(f, header, off, data); err != nil {
		return err // the record stays: the next open applies it
	}
	return s.clearSlot(slot, len(rec))
}

// applyEdit writes data at off and header at 0 of f, open for writing.
func (s *Dir) applyEdit(f *os.File, header []byte, off int64, data []byte) error {
	if _, err := f.WriteAt(data, off); err != nil {
		return err
	}
	if _, err := f.WriteAt(header, 0); err != nil {
		return err
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
		if err := s.replayEdit(strings.TrimSuffix(jpath, journalExt), header, off, data); err != nil {
			return err
		}
	}
	return os.Remove(jpath)
}

// replayEdit applies an edit found in a journal to the file at path, if
// that file is still there and long enough.
func (s *Dir) replayEdit(path string, header []byte, off int64, data []byte) error {
	info, err := os.Stat(path)
	if err != nil || off+int64(len(data)) > info.Size() || int64(len(header)) > info.Size() {
		return nil
	}
	f, err := openBlocking(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	err = s.applyEdit(f, header, off, data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

const slotPrefix = ".gotensor.journal-"

var slotMagic = [4]byte{'G', 'T', 'J', '2'}

// bigSlot is the size past which a cleared slot is truncated, so an edit
// of a large tensor does not keep its bytes on disk.
const bigSlot = 1 << 20

// slotRecord lays out an edit in a slot: magic, path length, the path
// (relative to the store), the edit as journal lays it out, and a CRC32C
// of everything before.
func slotRecord(rel string, header []byte, off int64, data []byte) []byte {
	j := journal(header, off, data)
	b := make([]byte, 0, 12+len(rel)+len(j))
	b = append(b, slotMagic[:]...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(rel)))
	b = append(b, rel...)
	b = append(b, j...)
	return binary.LittleEndian.AppendUint32(b, castagnoli.Checksum(b))
}

// parseSlot reads the record at the start of a slot's bytes b (which may
// run on past it); ok is false for a cleared or torn one.
func parseSlot(b []byte) (rel string, header []byte, off int64, data []byte, ok bool) {
	if len(b) < 8 || [4]byte(b[:4]) != slotMagic {
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
		if rel, header, off, data, ok := parseSlot(b); ok {
			if err := s.replayEdit(filepath.Join(s.dir, rel), header, off, data); err != nil {
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
