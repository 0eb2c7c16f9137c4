package store

import (
	"context"
	"errors"
	"hash/maphash"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/internal/pool"
)

func init() {
	RegisterScheme("file", func(u *url.URL) (Store, error) {
		if u.Host != "" && u.Host != "localhost" {
			return nil, errs.New(errs.InvalidArgument, "file store URL %q names host %q; use file:///absolute/path", RedactURL(u), u.Host)
		}
		if u.Path == "" {
			return nil, errs.New(errs.InvalidArgument, "file store URL %q has no path", RedactURL(u))
		}
		if err := CheckOptions(u, "capacity", "fsync", "readonly"); err != nil {
			return nil, err
		}
		c, err := capacityParam(u)
		if err != nil {
			return nil, err
		}
		open := OpenDir
		switch v := u.Query().Get("readonly"); v {
		case "", "0", "false":
		case "1", "true":
			open = func(dir string, _ int64) (*Dir, error) { return OpenDirReadOnly(dir) }
		default:
			return nil, errs.New(errs.InvalidArgument, "bad readonly=%q in %q (want true or false)", v, RedactURL(u))
		}
		s, err := open(u.Path, c)
		if err != nil {
			return nil, err
		}
		switch v := u.Query().Get("fsync"); v {
		case "", "1", "true":
		case "0", "false":
			s.NoSync = true
		default:
			s.Close()
			return nil, errs.New(errs.InvalidArgument, "bad fsync=%q in %q (want true or false)", v, RedactURL(u))
		}
		return s, nil
	})
}

// openDirs are the directories this process has open.
var openDirs = pathSet{m: map[string]bool{}}

type pathSet struct {
	mu sync.Mutex
	m  map[string]bool
}

// claim adds path; false if it is there already.
func (p *pathSet) claim(path string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m[path] {
		return false
	}
	p.m[path] = true
	return true
}

func (p *pathSet) release(path string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.m, path)
}

const (
	frameExt   = ".gtf"
	tmpPrefix  = ".tmp-"
	lockName   = ".gotensor.lock"
	maxNameLen = 200 // bytes of escaped key per path element
	segmentEnd = "~" // ends a directory that continues a long key
)

// Dir stores one file per key in a directory. Writes are atomic (temp
// file, fsync, rename, fsync of the directory): a crash leaves the old
// value or the new one, never a torn frame. One process owns a directory
// at a time (an flock on .gotensor.lock).
type Dir struct {
	// NoSync skips fsync (file:///dir?fsync=false): writes stay atomic
	// against a killed process, but not against power loss.
	NoSync bool

	readOnly bool // OpenDirReadOnly: no lock, nothing written, the directory read afresh

	dir      string
	abs      string // dir's absolute path, its entry in openDirs
	capacity int64
	lock     *os.File

	keyLocks [64]sync.Mutex
	editing  [64]sync.RWMutex // held by an in-place edit, and (shared) by readers of the file
	seed     maphash.Seed

	slotMu   sync.Mutex
	slots    [64]*os.File // the journal slot of each edit stripe, open once used
	slotUsed [64]int      // bytes at the start of each slot that may hold a record; under the stripe's key lock
	stale    [64]string   // the file a slot's uncleared record edits after a failed edit ("": none); under the stripe's key lock

	views dirViews // mappings for views (file_views.go)

	hmu     sync.Mutex
	handles map[string]*handle // files open for reuse (handles.go)
	hgen    uint64             // counts forgets: an open older than one is not cached
	hclosed bool

	mu       sync.RWMutex
	sizes    map[string]int64
	vers     map[string]uint64 // frame versions (see Editor), given out on first ask
	bytes    int64             // counted against the capacity: frames' bytes plus every key's charge
	keyBytes int64             // of which the keys' charges
	closed   bool
}

// OpenDir opens (creating if needed) a directory store and indexes the
// frames already in it.
// A directory is open once per process: a second OpenDir of it fails
// (Unavailable) until the first is closed, as one in another process does.
func OpenDir(dir string, capacity int64) (_ *Dir, err error) {
	dir = filepath.Clean(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		if errors.Is(err, unix.ENOTDIR) || errors.Is(err, fs.ErrExist) {
			return nil, errs.New(errs.InvalidArgument, "store directory %s: a file is in the way (want a directory)", dir)
		}
		return nil, errs.Wrap(ioKind(err), err, "cannot create store directory %s", dir)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, errs.Wrap(errs.InvalidArgument, err, "store directory %s", dir)
	}
	if !openDirs.claim(abs) {
		return nil, errs.New(errs.Unavailable, "store directory %s is already open in this process (close that store first, or use it)", dir)
	}
	defer func() {
		if err != nil {
			openDirs.release(abs)
		}
	}()
	lock, err := os.OpenFile(filepath.Join(dir, lockName), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, errs.Wrap(ioKind(err), err, "cannot open lock file in %s", dir)
	}
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		lock.Close()
		return nil, errs.Wrap(errs.Unavailable, err, "store directory %s is in use by another process", dir)
	}
	s := &Dir{dir: dir, abs: abs, capacity: capacity, lock: lock, seed: maphash.MakeSeed(), sizes: map[string]int64{}, vers: map[string]uint64{}, handles: map[string]*handle{}}
	journals, err := s.index(true)
	for _, j := range journals {
		if err == nil {
			err = s.replayJournal(j)
		}
	}
	if err == nil {
		var found bool
		if found, err = s.replaySlots(); err == nil && (found || len(journals) > 0) {
			_, err = s.index(false) // a replayed edit may have lengthened its file
		}
	}
	if err != nil {
		s.closeSlots()
		lock.Close()
		return nil, errs.Wrap(ioKind(err), err, "cannot index store directory %s", dir)
	}
	return s, nil
}

// index lists the frames in the directory into s.sizes; tidy removes the
// temp files a crash left mid-write. It returns the <file>.splice
// journals found, for the caller to replay.
func (s *Dir) index(tidy bool) (journals []string, err error) {
	s.sizes, s.bytes, s.keyBytes = map[string]int64{}, 0, 0
	err = filepath.WalkDir(s.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() || name == lockName || isSlot(name) {
			return nil
		}
		if strings.HasPrefix(name, tmpPrefix) { // left by a crash mid-write, or a writer's in flight
			if tidy {
				return os.Remove(path)
			}
			return nil
		}
		if isJournal(name) { // left by a crash mid-edit
			journals = append(journals, path)
			return nil
		}
		rel, _ := filepath.Rel(s.dir, path)
		key, ok := keyFromPath(rel)
		if !ok {
			return nil
		}
		info, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) { // deleted by another process since the listing
			return nil
		}
		if err != nil {
			return err
		}
		s.sizes[key] = info.Size()
		s.bytes += info.Size() + keyCharge(key)
		s.keyBytes += keyCharge(key)
		return nil
	})
	return journals, err
}

func (s *Dir) URL() string { return "file://" + s.dir }

// pathFor maps a key to a relative file path: bytes outside [A-Za-z0-9._-]
// are %XX-escaped, and names longer than maxNameLen continue in nested
// directories whose names end in "~" (which escaping never produces).
func pathFor(key string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(key); i++ {
		c := key[i]
		keep := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || (c == '.' && i > 0)
		if keep {
			b.WriteByte(c)
		} else {
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		}
	}
	name := b.String()
	var parts []string
	for len(name) > maxNameLen {
		parts = append(parts, name[:maxNameLen]+segmentEnd)
		name = name[maxNameLen:]
	}
	return filepath.Join(append(parts, name+frameExt)...)
}

func keyFromPath(rel string) (string, bool) {
	if !strings.HasSuffix(rel, frameExt) {
		return "", false
	}
	name := strings.ReplaceAll(strings.TrimSuffix(rel, frameExt), segmentEnd+string(filepath.Separator), "")
	key, err := url.PathUnescape(name)
	if err != nil || ValidateKey(key) != nil {
		return "", false
	}
	return key, true
}

func (s *Dir) keyLock(key string) *sync.Mutex {
	return &s.keyLocks[maphash.String(s.seed, key)%uint64(len(s.keyLocks))]
}

// editLock is held by an in-place edit of key's file, and shared by its readers.
func (s *Dir) editLock(key string) *sync.RWMutex { return &s.editing[s.editStripe(key)] }

// editStripe is the index of key's edit lock and journal slot.
func (s *Dir) editStripe(key string) int {
	return int(maphash.String(s.seed, key) % uint64(len(s.editing)))
}

// Put writes frame as key's file, atomically; a frame put WithRowEdits is
// written in pieces of EditGrain (see grain.go).
func (s *Dir) Put(ctx context.Context, key string, frame []byte) error {
	if err := ValidateKey(key); err != nil {
		return err
	}
	grain := 0
	if RowEdits(ctx) {
		grain = EditGrain
	}
	kl := s.keyLock(key)
	kl.Lock()
	defer kl.Unlock()
	return s.replace(key, int64(len(frame)), func(tmp *os.File) error {
		return writeIn(putWriter(tmp), frame, grain)
	})
}

// putWriter is what Put writes a frame's file through (tests watch it).
var putWriter = func(f *os.File) io.Writer { return f }

// replace makes key's file one of size bytes that fill writes, atomically,
// under key's lock.
func (s *Dir) replace(key string, size int64, fill func(tmp *os.File) error) error {
	if s.readOnly {
		return errReadOnly(key, s.URL())
	}
	// Reserve the space first so concurrent writers cannot overshoot.
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return errClosed(s.URL())
	}
	old, had := s.sizes[key]
	delta := size - old
	if !had {
		delta += keyCharge(key) // a new key: its file and its entry here cost beyond the frame
	}
	if s.capacity > 0 && s.bytes+delta > s.capacity {
		used := s.bytes
		s.mu.Unlock()
		return full(size, used, s.capacity, s.URL())
	}
	s.bytes += delta
	s.mu.Unlock()

	err := s.voidStale(key)
	if err == nil {
		err = s.writeAtomic(key, size, fill)
	}
	if err != nil {
		s.mu.Lock()
		s.bytes -= delta
		s.mu.Unlock()
		if isNoSpace(err) {
			return errs.WrapKey(errs.StoreFull, key, err, "no space left for key %q in %s", key, s.URL())
		}
		return errs.WrapKey(ioKind(err), key, err, "writing key %q to %s", key, s.URL())
	}
	s.forget(key)
	s.mu.Lock()
	if !had {
		s.keyBytes += keyCharge(key)
	}
	s.sizes[key] = size
	delete(s.vers, key) // a new frame: a new version
	s.mu.Unlock()
	return nil
}

func (s *Dir) writeAtomic(key string, size int64, fill func(tmp *os.File) error) error {
	final := filepath.Join(s.dir, pathFor(key))
	parent := filepath.Dir(final)
	if parent != s.dir {
		if err := os.MkdirAll(parent, 0o755); err != nil {
			return err
		}
	}
	tmp, err := os.CreateTemp(s.dir, tmpPrefix)
	if err != nil {
		return err
	}
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := preallocate(tmp, size); err != nil {
		return err
	}
	if err := fill(tmp); err != nil {
		return err
	}
	if !s.NoSync {
		if err := tmp.Sync(); err != nil {
			return err
		}
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), final); err != nil {
		return err
	}
	ok = true
	if s.NoSync {
		return nil
	}
	return syncDir(parent)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

func (s *Dir) check(key string) error {
	if err := ValidateKey(key); err != nil {
		return err
	}
	if s.readOnly {
		return s.checkFile(key)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return errClosed(s.URL())
	}
	if _, ok := s.sizes[key]; !ok {
		return notFound(key, s.URL())
	}
	return nil
}

func (s *Dir) openErr(key string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return notFound(key, s.URL())
	}
	return errs.WrapKey(ioKind(err), key, err, "reading key %q from %s", key, s.URL())
}

func (s *Dir) Get(_ context.Context, key string) ([]byte, error) {
	if err := s.check(key); err != nil {
		return nil, err
	}
	el := s.editLock(key)
	el.RLock()
	defer el.RUnlock()
	b, err := os.ReadFile(filepath.Join(s.dir, pathFor(key)))
	if err != nil {
		return nil, s.openErr(key, err)
	}
	return b, nil
}

// openBlocking opens a file as os.OpenFile does, minus the poller
// registration os.OpenFile attempts on every open (two fcntl calls each
// side of an epoll_ctl that fails for a regular file): a row read or write
// opens a file several times, and those calls were most of its system calls.
func openBlocking(path string, flag int, perm uint32) (*os.File, error) {
	for {
		fd, err := unix.Open(path, flag|unix.O_CLOEXEC, perm)
		if err == nil {
			return os.NewFile(uintptr(fd), path), nil
		}
		if err != unix.EINTR {
			return nil, &fs.PathError{Op: "open", Path: path, Err: err}
		}
	}
}

func (s *Dir) Head(_ context.Context, key string, n int) ([]byte, int64, error) {
	el := s.editLock(key)
	el.RLock()
	defer el.RUnlock()
	h, err := s.acquire(key)
	if err != nil {
		return nil, 0, err
	}
	defer s.release(h)
	size := h.size
	buf := make([]byte, min(int64(n), size))
	if _, err := h.f.ReadAt(buf, 0); err != nil {
		return nil, 0, s.openErr(key, err)
	}
	return buf, size, nil
}

// GetRange reads bytes [off, off+n) of the frame, so a large tensor is
// decoded piece by piece while the rest is read.
func (s *Dir) GetRange(_ context.Context, key string, off, n int64) ([]byte, int64, error) {
	el := s.editLock(key)
	el.RLock()
	defer el.RUnlock()
	h, err := s.acquire(key)
	if err != nil {
		return nil, 0, err
	}
	defer s.release(h)
	size := h.size
	if off < 0 || n < 0 || off > size {
		return nil, 0, errs.New(errs.InvalidArgument, "range at %d of a %d-byte frame", off, size)
	}
	buf := rangeBuffer(int(min(n, size-off)))
	if _, err := h.f.ReadAt(buf, off); err != nil {
		s.RecycleRange(buf)
		return nil, 0, s.openErr(key, err)
	}
	return buf, size, nil
}

// dirRanges is the memory GetRange reads ranges into, given back by the
// reader once decoded (RecycleRange): a coded KV cache read every decode
// step would otherwise fault in, zero and collect a new buffer of its
// rows each time. Shared by the process's directories.
var dirRanges = pool.NewBytes(64<<20, 16)

// minRecycledRange is the least range worth recycling.
const minRecycledRange = 64 << 10

func rangeBuffer(n int) []byte {
	if n < minRecycledRange {
		return make([]byte, n)
	}
	return dirRanges.GetRounded(n)
}

// RecycleRange takes back a range GetRange returned, or a frame Get did
// (see RangeRecycler).
func (s *Dir) RecycleRange(b []byte) {
	if cap(b) >= minRecycledRange {
		dirRanges.Put(b)
	}
}

// OpenFrame opens key's file for ranged reads of one consistent frame:
// edits in place wait until release (called once), and a frame replaced
// meanwhile is a new file, so what r reads is the frame as it was at the
// open. size is the file's size; r's errors are the store's.
func (s *Dir) OpenFrame(_ context.Context, key string) (r io.ReaderAt, size int64, release func(), err error) {
	el := s.editLock(key)
	el.RLock()
	h, err := s.acquire(key)
	if err != nil {
		el.RUnlock()
		return nil, 0, nil, err
	}
	return dirFrame{f: h.f, s: s, key: key}, h.size, func() { s.release(h); el.RUnlock() }, nil
}

// dirFrame reads an open frame file, with the store's errors.
type dirFrame struct {
	f   *os.File
	s   *Dir
	key string
}

func (d dirFrame) ReadAt(b []byte, off int64) (int, error) {
	n, err := d.f.ReadAt(b, off)
	if err != nil {
		return n, d.s.openErr(d.key, err)
	}
	return n, nil
}

func (s *Dir) Delete(_ context.Context, key string) error {
	if err := ValidateKey(key); err != nil {
		return err
	}
	if s.readOnly {
		return errReadOnly(key, s.URL())
	}
	kl := s.keyLock(key)
	kl.Lock()
	defer kl.Unlock()
	if err := s.check(key); err != nil {
		return err
	}
	if err := s.voidStale(key); err != nil {
		return errs.WrapKey(ioKind(err), key, err, "deleting key %q from %s: clearing a failed edit's journal", key, s.URL())
	}
	path := filepath.Join(s.dir, pathFor(key))
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return errs.WrapKey(ioKind(err), key, err, "deleting key %q from %s", key, s.URL())
	}
	s.forget(key)
	s.mu.Lock()
	if _, ok := s.sizes[key]; ok {
		s.bytes -= s.sizes[key] + keyCharge(key)
		s.keyBytes -= keyCharge(key)
	}
	delete(s.sizes, key)
	delete(s.vers, key)
	s.mu.Unlock()
	if s.NoSync {
		return nil
	}
	return syncDir(filepath.Dir(path))
}

func (s *Dir) Has(_ context.Context, key string) (bool, error) {
	err := s.check(key)
	if errs.Is(err, errs.KeyNotFound) {
		return false, nil
	}
	return err == nil, err
}

func (s *Dir) List(_ context.Context, prefix string) ([]string, error) {
	if s.readOnly {
		if err := s.reindex(); err != nil {
			return nil, err
		}
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, errClosed(s.URL())
	}
	return keysWithPrefix(s.sizes, prefix), nil
}

func (s *Dir) Usage() Usage {
	if s.readOnly {
		s.reindex()
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return Usage{Keys: int64(len(s.sizes)), Bytes: s.bytes - s.keyBytes, Capacity: s.capacity}
}

// Used is what counts against the capacity: Usage().Bytes plus, per key,
// len(key)+KeyOverhead.
func (s *Dir) Used() int64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.bytes
}

func (s *Dir) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	s.closeSlots()
	s.forgetAll()
	s.views.close()
	if s.readOnly {
		return nil
	}
	err := s.lock.Close() // releases the flock
	openDirs.release(s.abs)
	return err
}

func (s *Dir) closeSlots() {
	s.slotMu.Lock()
	defer s.slotMu.Unlock()
	for i, f := range s.slots {
		if f != nil {
			f.Close()
			s.slots[i] = nil
		}
	}
}
