package store

import "context"

// FrameVersion is the version of key's frame (see Editor).
func (s *Mem) FrameVersion(_ context.Context, key string) (uint64, error) {
	var ver uint64
	_, err := s.lookup(key, func(f *memFrame) { ver = f.ver })
	return ver, err
}

// EditChecked applies e to key's frame if it is still version ver (see
// Editor). A frame no lease holds (and nothing got unleased) is edited in
// place, its tail moved within its buffer when the length changes and
// the buffer has room; otherwise the edit goes into a new frame, with
// room to grow, and the old one lives on for its readers.
func (s *Mem) EditChecked(_ context.Context, key string, ver uint64, e Edit) (uint64, bool, error) {
	if err := ValidateKey(key); err != nil {
		return 0, false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, false, errClosed(s.url)
	}
	f, ok := s.m[key]
	if !ok {
		return 0, false, notFound(key, s.url)
	}
	if f.ver != ver || !e.valid(int64(len(f.b))) {
		return 0, false, nil
	}
	if err := s.edit(key, f, e, true); err != nil {
		return 0, false, err
	}
	return s.m[key].ver, true, nil
}

// edit applies e to f, key's frame, under the store's lock, and gives the
// frame a new version; checked says whether e's bytes are this process's
// frame code's (else the frame is unchecked from now on).
func (s *Mem) edit(key string, f *memFrame, e Edit, checked bool) error {
	old := int64(len(f.b))
	size := SplicedLen(old, e.N, e.Data)
	if s.capacity > 0 && size > old && s.bytes.Load()+size-old > s.capacity {
		return full(size, s.bytes.Load(), s.capacity, s.url)
	}
	if f.refs.Load() == 1 && !f.escaped.Load() && size <= int64(cap(f.b)) {
		b := f.b[:max(old, size)]
		copy(b[e.Off+int64(len(e.Data)):], b[e.Off+e.N:old]) // the tail, when the length changes
		f.b = b[:size]
		copy(f.b[e.Off:], e.Data)
		if !checked {
			f.checked.Store(false)
		}
	} else {
		room := size
		if size > old {
			room += size / 16
		}
		var b []byte
		if f.fb != nil { // where views map it, its payload on a page as before (the header keeps its length)
			b, _ = s.views.lend(f.fb.off, int(room))
		}
		if b == nil {
			b = s.pool.Get(int(room))
		}
		b = b[:size]
		SpliceInto(b, f.b, nil, e.Off, e.N, e.Data)
		nf := s.newFrame(b, checked && f.checked.Load())
		s.m[key] = nf
		f.unref()
		f = nf
	}
	for _, p := range e.Pieces {
		copy(f.b[p.Off:], p.B)
	}
	s.bytes.Add(size - old)
	f.ver = nextVersion()
	return nil
}
