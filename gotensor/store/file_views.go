package store

import (
	"context"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/gotensor/gotensor/gotensor/internal/cowmap"
)

// A Dir maps a key's file privately for a view, as safetensors' safe_open
// maps its file: the page cache's pages, shared until a view writes one. A
// replace of the key is a new file renamed over the old one and a delete
// unlinks it, so neither changes the file a view maps; a row edit that
// would write the file in place writes a new file instead while a view of
// the key is out (see edit), and nothing else writes a file in place. The
// mappings views release are kept per key, for the next view of the same
// file version.

// dirViews are a Dir's mappings for views.
type dirViews struct {
	mu     sync.Mutex
	m      map[string]*keyMaps // the key's current file's mappings
	live   map[string]int      // views out, by key (of any of its files)
	closed bool
}

// keyMaps are the mappings of one file version of a key.
type keyMaps struct {
	id      fileID
	maps    mapPool
	checked bool // a view checked this version's checksums
}

// fileID tells file versions apart: the store's frame version (an edit in
// place changes it) and, for a read-only store, which file is there now.
type fileID struct {
	ver, dev, ino uint64
	size, mtime   int64
}

// MapFrame maps key's file for a view (see Mapper).
func (s *Dir) MapFrame(ctx context.Context, key string) (*Mapped, error) {
	if !cowmap.Supported {
		return nil, nil
	}
	el := s.editLock(key) // no edit in place while the file is mapped and the view counted
	el.RLock()
	defer el.RUnlock()
	h, err := s.acquire(key)
	if err != nil {
		return nil, err
	}
	defer s.release(h)
	var st unix.Stat_t
	if err := unix.Fstat(int(h.f.Fd()), &st); err != nil {
		return nil, s.openErr(key, err)
	}
	if st.Size == 0 {
		return nil, nil
	}
	id := fileID{dev: uint64(st.Dev), ino: st.Ino, size: st.Size, mtime: st.Mtim.Nano()}
	if id.ver, err = s.FrameVersion(ctx, key); err != nil {
		return nil, err
	}
	km, err := s.views.take(key, id)
	if err != nil {
		return nil, err
	}
	m := km.maps.get()
	if m == nil {
		if m, err = cowmap.Map(int(h.f.Fd()), 0, int(st.Size), km.checked); err != nil {
			s.views.done(key)
			return nil, s.openErr(key, err)
		}
		Views.Maps.Add(1)
	} else {
		Views.Reused.Add(1)
	}
	Views.Live.Add(1)
	return &Mapped{
		Frame:   m.Bytes()[:st.Size:st.Size],
		Checked: km.checked,
		checked: func() { s.views.mu.Lock(); km.checked = true; s.views.mu.Unlock() },
		release: func() {
			Views.Live.Add(-1)
			s.views.done(key)
			recycle(&km.maps, m)
		},
	}, nil
}

// take counts a view of key's file id and returns its mappings.
func (v *dirViews) take(key string, id fileID) (*keyMaps, error) {
	v.mu.Lock()
	if v.closed {
		v.mu.Unlock()
		return nil, errClosed("the store")
	}
	if v.m == nil {
		v.m, v.live = map[string]*keyMaps{}, map[string]int{}
	}
	km, old := v.m[key], (*keyMaps)(nil)
	if km == nil || km.id != id {
		old, km = km, &keyMaps{id: id}
		v.m[key] = km
	}
	v.live[key]++
	v.mu.Unlock()
	if old != nil { // an older version's: unmapped outside the lock
		old.maps.close()
	}
	return km, nil
}

// done uncounts a view of key.
func (v *dirViews) done(key string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.live[key]--; v.live[key] <= 0 {
		delete(v.live, key)
	}
}

// viewed says whether a view of key is out.
func (v *dirViews) viewed(key string) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.live[key] > 0
}

// drop forgets key's mappings (its file was replaced or removed): the idle
// ones are unmapped, those out are unmapped as they are released.
func (v *dirViews) drop(key string) {
	v.mu.Lock()
	km := v.m[key]
	delete(v.m, key)
	v.mu.Unlock()
	if km != nil {
		km.maps.close()
	}
}

// close drops every key's mappings (the store is closing); views out keep
// theirs until they are released.
func (v *dirViews) close() {
	v.mu.Lock()
	m := v.m
	v.m, v.closed = nil, true
	v.mu.Unlock()
	for _, km := range m {
		km.maps.close()
	}
}
