package store

import (
	"context"
	"net/url"
	"sort"
	"strings"
	"sync"

	"github.com/gotensor/gotensor/gotensor/errs"
)

func init() {
	RegisterScheme("mem", func(u *url.URL) (Store, error) {
		c, err := capacityParam(u)
		if err != nil {
			return nil, err
		}
		name := "mem://" + u.Host + u.Path
		if u.RawQuery != "" {
			name += "?" + u.RawQuery
		}
		return NewMem(name, c), nil
	})
}

// Mem is the embedded in-process store.
type Mem struct {
	url      string
	capacity int64

	mu     sync.RWMutex
	m      map[string][]byte
	bytes  int64
	closed bool
}

// NewMem returns an empty in-memory store; capacity 0 is unbounded.
func NewMem(url string, capacity int64) *Mem {
	return &Mem{url: url, capacity: capacity, m: map[string][]byte{}}
}

func (s *Mem) URL() string { return s.url }

// Nonblocking: every operation is a map access under a lock, so a server
// may run it on its network thread instead of handing it to a goroutine.
func (s *Mem) Nonblocking() bool { return true }

func (s *Mem) Put(_ context.Context, key string, frame []byte) error {
	if err := ValidateKey(key); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errClosed(s.url)
	}
	old := int64(len(s.m[key]))
	if s.capacity > 0 && s.bytes-old+int64(len(frame)) > s.capacity {
		return full(int64(len(frame)), s.bytes, s.capacity, s.url)
	}
	s.m[key] = frame
	s.bytes += int64(len(frame)) - old
	return nil
}

func (s *Mem) get(key string) ([]byte, error) {
	if err := ValidateKey(key); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, errClosed(s.url)
	}
	f, ok := s.m[key]
	if !ok {
		return nil, notFound(key, s.url)
	}
	return f, nil
}

func (s *Mem) Get(_ context.Context, key string) ([]byte, error) { return s.get(key) }

func (s *Mem) Head(_ context.Context, key string, n int) ([]byte, int64, error) {
	f, err := s.get(key)
	if err != nil {
		return nil, 0, err
	}
	return f[:min(n, len(f))], int64(len(f)), nil
}

func (s *Mem) Delete(_ context.Context, key string) error {
	if err := ValidateKey(key); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errClosed(s.url)
	}
	f, ok := s.m[key]
	if !ok {
		return notFound(key, s.url)
	}
	s.bytes -= int64(len(f))
	delete(s.m, key)
	return nil
}

func (s *Mem) Has(_ context.Context, key string) (bool, error) {
	_, err := s.get(key)
	if errs.Is(err, errs.KeyNotFound) {
		return false, nil
	}
	return err == nil, err
}

func (s *Mem) List(_ context.Context, prefix string) ([]string, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, errClosed(s.url)
	}
	var out []string
	for k := range s.m {
		if strings.HasPrefix(k, prefix) {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out, nil
}

func (s *Mem) Usage() Usage {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return Usage{Keys: int64(len(s.m)), Bytes: s.bytes, Capacity: s.capacity}
}

func (s *Mem) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed, s.m, s.bytes = true, nil, 0
	return nil
}

func errClosed(where string) error { return errs.New(errs.Closed, "store %s is closed", where) }
