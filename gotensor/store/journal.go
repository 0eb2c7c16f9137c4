package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/gotensor/gotensor/gotensor/errs"
	castagnoli "github.com/gotensor/gotensor/gotensor/internal/crc32c"
)

// A row write that keeps a file's length, or lengthens it with a short
// tail after it (see Dir.edit), edits it in place, crash-safely:
// the edit goes first to a journal slot (synced), then into the file,
// which is synced, then the slot is cleared (synced). A record found when
// the directory is opened is applied again (the edit is idempotent) if it
// still applies to the file it was computed from, or dropped.
//
// The slots are one file per edit-lock stripe (.gotensor.journal-NN, mode
// 0600), opened once and kept open, so an edit costs a pwrite to its slot
// and one to clear it. An edit holds its key's stripe exclusively, so a
// slot has one edit at a time. A record names the file it edits, binds to
// it (device and inode, and the bytes each header piece replaces) and
// holds the bytes the edit writes: a row write's chunks, the table entries
// they change and the header checksum.
//
// An edit that fails is void: its record is cleared at once, and where even
// that fails the slot is remembered as stale, so that a later replace or
// delete of the key clears it before it is acknowledged. Replay checks the
// binding, so a record never lands on a frame written after it.

const slotPrefix = ".gotensor.journal-"

var slotMagic = [4]byte{'G', 'T', 'J', '4'}

// bigSlot is the size past which a cleared slot is truncated rather than
// zeroed.
const bigSlot = 1 << 20

// The edit path's writes and syncs, through variables so that a test can
// fail each in turn.
var (
	writeAt  = (*os.File).WriteAt
	dataSync = func(f *os.File) error { return unix.Fdatasync(int(f.Fd())) }
	truncate = (*os.File).Truncate
)

// record is an edit in a slot: the file it edits (relative to the store),
// that file's device and inode (0, 0 in older layouts: not bound), the
// pieces it writes in order, and for each piece but the first (the data)
// the bytes it replaces.
type record struct {
	rel      string
	dev, ino uint64
	pieces   []Piece
	old      [][]byte // old[i] for pieces[i]; nil: not checked at replay
}

// bindRecord is the record of writing pieces into f, key's open file.
func bindRecord(f *os.File, rel string, pieces []Piece) (record, error) {
	rec := record{rel: rel, pieces: pieces, old: make([][]byte, len(pieces))}
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return record{}, err
	}
	rec.dev, rec.ino = uint64(st.Dev), st.Ino
	for i, p := range pieces[1:] {
		old := make([]byte, len(p.B))
		if _, err := f.ReadAt(old, p.Off); err != nil {
			return record{}, err
		}
		rec.old[i+1] = old
	}
	return rec, nil
}

// encode lays a record out: magic, path length (4 bytes), path, device
// (8), inode (8), piece count (4), each piece's offset (8), length (4),
// whether old bytes follow (1), its bytes and its old bytes, and a CRC32C
// of everything before.
func (r record) encode() []byte {
	n := 32 + len(r.rel)
	for i, p := range r.pieces {
		n += 13 + len(p.B) + len(r.old[i])
	}
	b := make([]byte, 0, n)
	le := binary.LittleEndian
	b = append(b, slotMagic[:]...)
	b = le.AppendUint32(b, uint32(len(r.rel)))
	b = append(b, r.rel...)
	b = le.AppendUint64(b, r.dev)
	b = le.AppendUint64(b, r.ino)
	b = le.AppendUint32(b, uint32(len(r.pieces)))
	for i, p := range r.pieces {
		b = le.AppendUint64(b, uint64(p.Off))
		b = le.AppendUint32(b, uint32(len(p.B)))
		if r.old[i] != nil {
			b = append(b, 1)
		} else {
			b = append(b, 0)
		}
		b = append(b, p.B...)
		b = append(b, r.old[i]...)
	}
	return le.AppendUint32(b, castagnoli.Checksum(b))
}

// parseSlot reads the record at the start of a slot's bytes b (which may
// run on past it), of any layout; ok is false for a cleared or torn one.
func parseSlot(b []byte) (rec record, ok bool) {
	if len(b) < 4 {
		return record{}, false
	}
	switch [4]byte(b[:4]) {
	case slotMagicV2:
		return parseSlotV2(b)
	case slotMagicV3:
		return parseSlotV3(b)
	case slotMagic:
	default:
		return record{}, false
	}
	r := reader{b: b, at: 4}
	rec.rel = string(r.bytes(uint64(r.u32())))
	rec.dev, rec.ino = r.u64(), r.u64()
	count := uint64(r.u32())
	if count > uint64(len(b))/13 {
		return record{}, false
	}
	for range count {
		off, n, guarded := r.u64(), uint64(r.u32()), r.u8()
		rec.pieces = append(rec.pieces, Piece{Off: int64(off), B: r.bytes(n)})
		var old []byte
		if guarded != 0 {
			old = r.bytes(n)
		}
		rec.old = append(rec.old, old)
	}
	return rec, r.checksummed() && filepath.IsLocal(rec.rel)
}

// reader reads a record's fields in order; past the end of b it returns
// zeros and remembers that it ran out.
type reader struct {
	b   []byte
	at  uint64
	bad bool
}

func (r *reader) bytes(n uint64) []byte {
	if r.bad || n > uint64(len(r.b))-r.at {
		r.bad = true
		return nil
	}
	r.at += n
	return r.b[r.at-n : r.at]
}

func (r *reader) u8() byte {
	if b := r.bytes(1); b != nil {
		return b[0]
	}
	return 0
}

func (r *reader) u32() uint32 {
	if b := r.bytes(4); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}

func (r *reader) u64() uint64 {
	if b := r.bytes(8); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

// checksummed reads the CRC32C that ends a record and checks it against
// everything read so far.
func (r *reader) checksummed() bool {
	end := r.at
	sum := r.u32()
	return !r.bad && castagnoli.Checksum(r.b[:end]) == sum
}

// editInPlace writes pieces, in order, into f, key's file, through stripe
// i's journal slot; the caller holds key's lock and stripe i's edit lock.
// pieces[0] is the data; the rest are header bytes, checked at replay.
func (s *Dir) editInPlace(f *os.File, key string, i int, pieces []Piece) error {
	slot, err := s.slot(i)
	if err != nil {
		return err
	}
	rec, err := bindRecord(f, pathFor(key), pieces)
	if err != nil {
		return err
	}
	b := rec.encode()
	s.slotUsed[i] = max(s.slotUsed[i], len(b))
	if err := s.journal(slot, b); err != nil {
		s.void(i, rec.rel)
		return err
	}
	s.stale[i] = "" // overwritten: any earlier record in the slot is gone
	if err := s.applyEdit(f, pieces); err != nil {
		s.void(i, rec.rel)
		return err
	}
	if err := s.clearSlot(i); err != nil {
		s.stale[i] = rec.rel // applied and synced: the record replays as a no-op, unless the key changes first
	}
	return nil
}

// journal writes record b at the start of slot and syncs it.
func (s *Dir) journal(slot *os.File, b []byte) error {
	if _, err := writeAt(slot, b, 0); err != nil {
		return err
	}
	if s.NoSync {
		return nil
	}
	return dataSync(slot)
}

// applyEdit writes pieces, in order, into f, open for writing, and syncs it.
func (s *Dir) applyEdit(f *os.File, pieces []Piece) error {
	for _, p := range pieces {
		if _, err := writeAt(f, p.B, p.Off); err != nil {
			return err
		}
	}
	if s.NoSync {
		return nil
	}
	return dataSync(f) // and a lengthening edit's new size with it
}

// void clears stripe i's slot after a failed edit of rel; where that fails
// too, the slot is left stale for a replace or delete of the key to clear.
func (s *Dir) void(i int, rel string) {
	if err := s.clearSlot(i); err != nil {
		s.stale[i] = rel
	}
}

// voidStale clears stripe i's slot if it still holds a record of key's
// file, before key is replaced or deleted; the caller holds key's lock.
func (s *Dir) voidStale(key string) error {
	i := s.editStripe(key)
	if s.stale[i] == "" || s.stale[i] != pathFor(key) {
		return nil
	}
	return s.clearSlot(i)
}

// replayEdit applies an edit found in a journal to the file at path, if
// that file is still the one the edit was computed from.
func (s *Dir) replayEdit(path string, rec record) error {
	f, err := openBlocking(path, os.O_RDWR, 0)
	if err != nil {
		return nil // deleted since
	}
	defer f.Close()
	if ok, err := rec.appliesTo(f); !ok || err != nil {
		return err
	}
	return s.applyEdit(f, rec.pieces)
}

// appliesTo says whether rec was computed from f's frame: the same inode
// (where rec is bound), every piece inside the file (the data of a bound
// record starting inside it: a lengthening edit's may end past the end of
// the file as it was), and every checked piece holding the bytes it
// replaces or the bytes it writes.
func (r record) appliesTo(f *os.File) (bool, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return false, err
	}
	if r.ino != 0 && (uint64(st.Dev) != r.dev || st.Ino != r.ino) {
		return false, nil
	}
	for i, p := range r.pieces {
		end := p.Off + int64(len(p.B))
		if i == 0 && r.ino != 0 {
			end = p.Off // a lengthening edit's data runs past the old end
		}
		if p.Off < 0 || end > st.Size {
			return false, nil
		}
		if i >= len(r.old) || r.old[i] == nil {
			continue
		}
		cur := make([]byte, len(p.B))
		if _, err := f.ReadAt(cur, p.Off); err != nil {
			return false, err
		}
		if !bytes.Equal(cur, p.B) && !bytes.Equal(cur, r.old[i]) {
			return false, nil
		}
	}
	return true, nil
}

// slot is the open journal slot of stripe i, opened on first use; the
// caller holds stripe i's edit lock.
func (s *Dir) slot(i int) (*os.File, error) {
	s.slotMu.Lock()
	defer s.slotMu.Unlock()
	if s.slots[i] != nil {
		return s.slots[i], nil
	}
	f, err := openBlocking(s.slotPath(i), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := f.Chmod(0o600); err != nil { // a slot an older version made 0644
		f.Close()
		return nil, err
	}
	s.slots[i] = f
	return f, nil
}

func (s *Dir) slotPath(i int) string {
	return filepath.Join(s.dir, fmt.Sprintf("%s%02d", slotPrefix, i))
}

// clearSlot erases stripe i's record, every byte of it (zeroed, or the
// slot truncated when large), and syncs that unless NoSync, so that a
// crash later cannot replay the edit and the slot keeps no stored bytes.
func (s *Dir) clearSlot(i int) error {
	f, err := s.slot(i)
	if err != nil {
		return err
	}
	used := s.slotUsed[i]
	if used > bigSlot {
		err = truncate(f, 0)
	} else {
		_, err = writeAt(f, make([]byte, used), 0)
	}
	if err == nil && !s.NoSync {
		err = dataSync(f)
	}
	if err != nil {
		return err
	}
	s.slotUsed[i], s.stale[i] = 0, ""
	return nil
}

// replaySlots finishes the edits a crash left in the slots and clears them;
// found says whether any slot held a record.
func (s *Dir) replaySlots() (found bool, err error) {
	for i := range s.slots {
		b, err := os.ReadFile(s.slotPath(i))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return found, err
		}
		if rec, ok := parseSlot(b); ok {
			found = true
			if err := s.replayEdit(filepath.Join(s.dir, rec.rel), rec); err != nil {
				return found, err
			}
		}
		s.slotUsed[i] = len(b)
		if err := s.clearSlot(i); err != nil {
			return found, err
		}
	}
	return found, nil
}

// isSlot says whether a directory entry is a journal slot.
func isSlot(name string) bool { return strings.HasPrefix(name, slotPrefix) }

// isNoSpace says whether err is the file system running out of room.
func isNoSpace(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

// ioKind is the kind of a file system error: StoreFull for no room,
// Unauthorized for a permission the process lacks (Python's
// PermissionError), else Unavailable.
func ioKind(err error) errs.Kind {
	switch {
	case isNoSpace(err):
		return errs.StoreFull
	case errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EPERM):
		return errs.Unauthorized
	}
	return errs.Unavailable
}
