// Package store keeps encoded frames under string keys. A store never
// decodes: it sees frames as opaque bytes, so the same frame can move
// between memory, disk and a remote node unchanged.
package store

import (
	"context"
	"net/url"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/gotensor/gotensor/gotensor/errs"
	"github.com/gotensor/gotensor/gotensor/internal/size"
)

// MaxKeyLen bounds keys, in bytes.
const MaxKeyLen = 1024

// Store is a flat key -> frame map. Implementations are safe for
// concurrent use.
type Store interface {
	// Put stores frame under key, replacing any previous value atomically.
	// The store takes ownership of frame. A frame that does not fit fails
	// with StoreFull and leaves the store unchanged.
	Put(ctx context.Context, key string, frame []byte) error
	// Get returns the frame stored under key. Callers must not modify it.
	Get(ctx context.Context, key string) ([]byte, error)
	// Head returns at least the first n bytes of the frame (all of it if
	// shorter) and the frame's total size.
	Head(ctx context.Context, key string, n int) ([]byte, int64, error)
	Delete(ctx context.Context, key string) error
	Has(ctx context.Context, key string) (bool, error)
	// List returns the keys starting with prefix, sorted.
	List(ctx context.Context, prefix string) ([]string, error)
	Usage() Usage
	URL() string
	Close() error
	// Caps says what else the store can do (see Caps).
	Caps() Caps
}

// Usage reports how full a store is; Capacity 0 means unbounded.
type Usage struct {
	Keys     int64
	Bytes    int64
	Capacity int64
	// Unanswered names the nodes (of a sharded store, or a cluster's
	// masters) that did not answer: their keys and bytes are missing from
	// the figures, which are then a part, not the whole. Empty when all did.
	Unanswered []string `json:",omitempty"`
}

// ValidateKey rejects keys no store can hold.
func ValidateKey(key string) error {
	switch {
	case key == "":
		return errs.New(errs.InvalidArgument, "empty key")
	case len(key) > MaxKeyLen:
		return errs.New(errs.InvalidArgument, "key of %d bytes exceeds %d", len(key), MaxKeyLen)
	case !utf8.ValidString(key):
		return errs.ForKey(errs.InvalidArgument, key, "key %q is not valid UTF-8", key)
	case strings.ContainsAny(key, "\x00\n"):
		return errs.ForKey(errs.InvalidArgument, key, "key %q contains NUL or newline", key)
	}
	return nil
}

// Opener makes a store from a parsed URL.
type Opener func(u *url.URL) (Store, error)

// RawOpener makes a store from its URL as given: for a scheme whose URL
// names several hosts of one service (redis://a:1,b:2), which is not
// split into shards and which url.Parse would refuse.
type RawOpener func(rawURL string) (Store, error)

var (
	openersMu  sync.RWMutex
	openers    = map[string]Opener{}
	rawOpeners = map[string]RawOpener{}
)

// RegisterRawScheme makes Open hand scheme:// URLs, unparsed and unsplit,
// to o.
func RegisterRawScheme(scheme string, o RawOpener) {
	openersMu.Lock()
	defer openersMu.Unlock()
	rawOpeners[scheme] = o
}

// RegisterScheme makes Open understand scheme://.
func RegisterScheme(scheme string, o Opener) {
	openersMu.Lock()
	defer openersMu.Unlock()
	openers[scheme] = o
}

// Schemes lists the registered URL schemes.
func Schemes() []string {
	openersMu.RLock()
	defer openersMu.RUnlock()
	out := make([]string, 0, len(openers))
	for s := range openers {
		out = append(out, s)
	}
	for s := range rawOpeners {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// Open opens the store a URL names: mem://[name][?capacity=1GiB],
// file:///dir[?capacity=...].
func Open(rawURL string) (Store, error) {
	if scheme, _, ok := strings.Cut(rawURL, "://"); ok {
		openersMu.RLock()
		ro := rawOpeners[scheme]
		openersMu.RUnlock()
		if ro != nil {
			return ro(rawURL)
		}
	}
	if urls, names := splitShards(rawURL); urls != nil { // scheme://a,b,c: keys sharded over the nodes
		return openSharded(rawURL, urls, names)
	}
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme == "" {
		return nil, errs.New(errs.InvalidArgument, "bad store URL %q (want mem://, file:///path, ...)", Redact(rawURL))
	}
	openersMu.RLock()
	o := openers[u.Scheme]
	openersMu.RUnlock()
	if o == nil {
		return nil, errs.New(errs.InvalidArgument, "unknown store scheme %q in %q (known: %v)", u.Scheme, Redact(rawURL), Schemes())
	}
	return o(u)
}

// ParseSize reads sizes like "8GiB", "512MB", "4096".
func ParseSize(s string) (int64, error) { return size.Parse(s) }

func capacityParam(u *url.URL) (int64, error) {
	c := u.Query().Get("capacity")
	if c == "" {
		return 0, nil
	}
	return ParseSize(c)
}

func notFound(key, where string) error { return NotFound(key, where) }

// NotFound is the KeyNotFound error for key in the store named where.
func NotFound(key, where string) error {
	return errs.ForKey(errs.KeyNotFound, key, "key %q not found in %s", key, where)
}

func full(need, used, capacity int64, where string) error {
	return errs.New(errs.StoreFull, "%s is full: %d bytes needed, %d of %d used", where, need, used, capacity)
}

// keysWithPrefix lists m's keys that start with prefix, sorted (List).
func keysWithPrefix[V any](m map[string]V, prefix string) []string {
	var out []string
	for k := range m {
		if strings.HasPrefix(k, prefix) {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}
