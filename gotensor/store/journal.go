package store

import (
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
)

// A row write that keeps a file's length edits it in place, crash-safely:
// the edit goes first to a journal beside the file (<file>.splice, synced),
// then into the file, which is synced, then the journal is removed. A
// journal found when the directory is opened is applied again (the edit is
// idempotent), or dropped when it is incomplete (the file was not touched).

const journalExt = ".splice"

var journalMagic = [4]byte{'G', 'T', 'S', 'J'}

var journalCRC = crc32.MakeTable(crc32.Castagnoli)

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
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, journalCRC))
}

// parseJournal reads a complete journal; ok is false for a torn one.
func parseJournal(b []byte) (header []byte, off int64, data []byte, ok bool) {
	if len(b) < 28 || [4]byte(b[:4]) != journalMagic {
		return nil, 0, nil, false
	}
	if crc32.Checksum(b[:len(b)-4], journalCRC) != binary.LittleEndian.Uint32(b[len(b)-4:]) {
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

// editInPlace writes header at 0 and data at off of f, the file at path,
// through its journal.
func (s *Dir) editInPlace(f *os.File, path string, header []byte, off int64, data []byte) error {
	jpath := path + journalExt
	if err := s.writeSynced(jpath, journal(header, off, data)); err != nil {
		os.Remove(jpath)
		return err
	}
	if err := s.applyEdit(f, header, off, data); err != nil {
		return err // the journal stays: the next open applies it
	}
	return os.Remove(jpath)
}

func (s *Dir) writeSynced(path string, b []byte) error {
	f, err := openBlocking(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if !s.NoSync {
		if err := f.Sync(); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
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

// replayJournal finishes or drops the edit a crash left in journal file jpath.
func (s *Dir) replayJournal(jpath string) error {
	b, err := os.ReadFile(jpath)
	if err != nil {
		return err
	}
	path := strings.TrimSuffix(jpath, journalExt)
	if header, off, data, ok := parseJournal(b); ok {
		if info, err := os.Stat(path); err == nil && off+int64(len(data)) <= info.Size() {
			f, err := openBlocking(path, os.O_WRONLY, 0)
			if err != nil {
				return err
			}
			err = s.applyEdit(f, header, off, data)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
		}
	}
	return os.Remove(jpath)
}

// isJournal says whether a directory entry is an edit's journal.
func isJournal(name string) bool { return filepath.Ext(name) == journalExt }
