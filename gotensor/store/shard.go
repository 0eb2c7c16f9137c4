package store

import (
	"context"
	"fmt"
	"hash/fnv"
	"sort"
	"strings"
	"sync"

	"github.com/gotensor/gotensor/gotensor/errs"
)

// Sharded spreads keys over several stores by rendezvous (highest random
// weight) hashing (tcp://a,b and ucx://a,b: a fan-out over gotensor's own
// nodes, for RDMA). It replicates nothing and notices no node leave: the
// keys of a node that is down fail (Unavailable) until it is back, and
// Usage names it as unanswered. For replication and failover, use a
// Redis or Valkey cluster (redis://, docs/REDIS.md). Keys are spread by
// rendezvous hashing: every client that lists the same nodes, in any order,
// puts a key on the same node, and adding or removing a node moves only
// the keys that node gains or loses.
type Sharded struct {
	url    string
	names  []string
	nodes  []Store
	seeds  []uint64
	rc     RangeRecycler // recyclerOf(nodes), asked once: the nodes' abilities do not change
	closed sync.Once
}

// NewSharded shards keys over nodes, known by names (host:port): routing
// depends on the names only. It owns and closes the nodes.
func NewSharded(url string, names []string, nodes []Store) *Sharded {
	s := &Sharded{url: url, names: names, nodes: nodes, rc: recyclerOf(nodes)}
	for _, n := range names {
		h := fnv.New64a()
		h.Write([]byte(n))
		s.seeds = append(s.seeds, h.Sum64())
	}
	return s
}

// splitmix64 finalizer: a well-mixed 64-bit score from seed and key hash.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// Node returns the index of the node that holds key.
func (s *Sharded) Node(key string) int {
	h := fnv.New64a()
	h.Write([]byte(key))
	k := h.Sum64()
	best, bestScore := 0, uint64(0)
	for i, seed := range s.seeds {
		if sc := mix(k ^ mix(seed)); i == 0 || sc > bestScore {
			best, bestScore = i, sc
		}
	}
	return best
}

// Nodes are the shard stores, in URL order.
func (s *Sharded) Nodes() []Store { return s.nodes }

// Names are the nodes' names, in URL order.
func (s *Sharded) Names() []string { return s.names }

func (s *Sharded) of(key string) (Store, error) {
	if err := ValidateKey(key); err != nil {
		return nil, err
	}
	return s.nodes[s.Node(key)], nil
}

func (s *Sharded) Put(ctx context.Context, key string, frame []byte) error {
	n, err := s.of(key)
	if err != nil {
		return err
	}
	return n.Put(ctx, key, frame)
}

func (s *Sharded) Get(ctx context.Context, key string) ([]byte, error) {
	n, err := s.of(key)
	if err != nil {
		return nil, err
	}
	return n.Get(ctx, key)
}

func (s *Sharded) Head(ctx context.Context, key string, size int) ([]byte, int64, error) {
	n, err := s.of(key)
	if err != nil {
		return nil, 0, err
	}
	return n.Head(ctx, key, size)
}

func (s *Sharded) Delete(ctx context.Context, key string) error {
	n, err := s.of(key)
	if err != nil {
		return err
	}
	return n.Delete(ctx, key)
}

func (s *Sharded) Has(ctx context.Context, key string) (bool, error) {
	n, err := s.of(key)
	if err != nil {
		return false, err
	}
	return n.Has(ctx, key)
}

// List asks every node at once and merges the answers.
func (s *Sharded) List(ctx context.Context, prefix string) ([]string, error) {
	lists := make([][]string, len(s.nodes))
	errl := make([]error, len(s.nodes))
	var wg sync.WaitGroup
	for i, n := range s.nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lists[i], errl[i] = n.List(ctx, prefix)
		}()
	}
	wg.Wait()
	var all []string
	for i := range s.nodes {
		if errl[i] != nil {
			return nil, errl[i]
		}
		all = append(all, lists[i]...)
	}
	sort.Strings(all)
	return all, nil
}

// Usage sums the nodes' usage. A node that does not answer is named in
// Unanswered (by its name in the URL), its keys and bytes missing: the
// figures are then a part, never taken for the whole. Nothing is
// replicated: a node that is down takes its keys with it until it is back.
func (s *Sharded) Usage() Usage {
	var u Usage
	for i, n := range s.nodes {
		nu := n.Usage()
		if len(nu.Unanswered) > 0 {
			u.Unanswered = append(u.Unanswered, Redact(s.names[i]))
			continue
		}
		u.Keys += nu.Keys
		u.Bytes += nu.Bytes
		u.Capacity += nu.Capacity
	}
	return u
}

func (s *Sharded) URL() string { return s.url }

func (s *Sharded) Close() error {
	var err error
	s.closed.Do(func() {
		for _, n := range s.nodes {
			if e := n.Close(); e != nil && err == nil {
				err = e
			}
		}
	})
	return err
}

// splitShards turns scheme://a,b,c/rest into scheme://a/rest, ... and the
// node names a, b, c; nil if the URL names one node.
func splitShards(rawURL string) (urls, names []string) {
	scheme, rest, ok := strings.Cut(rawURL, "://")
	if !ok {
		return nil, nil
	}
	end := strings.IndexAny(rest, "/?")
	if end < 0 {
		end = len(rest)
	}
	hosts, tail := rest[:end], rest[end:]
	if !strings.Contains(hosts, ",") {
		return nil, nil
	}
	for _, h := range strings.Split(hosts, ",") {
		h = strings.TrimSpace(h)
		urls = append(urls, scheme+"://"+h+tail)
		names = append(names, h)
	}
	return urls, names
}

func openSharded(rawURL string, urls, names []string) (Store, error) {
	seen := map[string]bool{}
	nodes := make([]Store, 0, len(urls))
	fail := func(err error) (Store, error) {
		for _, n := range nodes {
			n.Close()
		}
		return nil, err
	}
	for _, u := range urls {
		why := ""
		switch {
		case seen[u]:
			why = fmt.Sprintf("node %s is named twice", Redact(u))
		case strings.Contains(u, ",") || strings.Contains(u, "://?") || strings.HasSuffix(u, "://"):
			why = "a node is empty (two commas, or a comma at an end)"
		}
		if why != "" {
			return fail(errs.New(errs.InvalidArgument, "bad node list in store URL %q: %s", Redact(rawURL), why))
		}
		seen[u] = true
		n, err := Open(u)
		if errs.Is(err, errs.Unavailable) { // a node that is down fails only the keys it holds
			n, err = &lateNode{url: u, err: err}, nil
		}
		if err != nil {
			return fail(err)
		}
		nodes = append(nodes, n)
	}
	up := 0
	for _, n := range nodes {
		if _, late := n.(*lateNode); !late {
			up++
		}
	}
	if up == 0 {
		return fail(nodes[0].(*lateNode).err)
	}
	scheme, _, _ := strings.Cut(rawURL, "://")
	return NewSharded(scheme+"://"+strings.Join(names, ","), names, nodes), nil
}

// lateNode is a shard that could not be reached when the store opened: each
// use tries to open it again.
type lateNode struct {
	url string
	mu  sync.Mutex
	st  Store
	err error
}

func (l *lateNode) get() (Store, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.st == nil {
		st, err := Open(l.url)
		if err != nil {
			return nil, err
		}
		l.st = st
	}
	return l.st, nil
}

func (l *lateNode) Put(ctx context.Context, key string, frame []byte) error {
	st, err := l.get()
	if err != nil {
		return err
	}
	return st.Put(ctx, key, frame)
}

func (l *lateNode) Get(ctx context.Context, key string) ([]byte, error) {
	st, err := l.get()
	if err != nil {
		return nil, err
	}
	return st.Get(ctx, key)
}

func (l *lateNode) Head(ctx context.Context, key string, n int) ([]byte, int64, error) {
	st, err := l.get()
	if err != nil {
		return nil, 0, err
	}
	return st.Head(ctx, key, n)
}

func (l *lateNode) Delete(ctx context.Context, key string) error {
	st, err := l.get()
	if err != nil {
		return err
	}
	return st.Delete(ctx, key)
}

func (l *lateNode) Has(ctx context.Context, key string) (bool, error) {
	st, err := l.get()
	if err != nil {
		return false, err
	}
	return st.Has(ctx, key)
}

func (l *lateNode) List(ctx context.Context, prefix string) ([]string, error) {
	st, err := l.get()
	if err != nil {
		return nil, err
	}
	return st.List(ctx, prefix)
}

func (l *lateNode) Usage() Usage {
	if st, err := l.get(); err == nil {
		return st.Usage()
	}
	return Usage{Unanswered: []string{Redact(l.url)}}
}

// URL is the node's URL as listed (stable, so routing does not change
// when the node comes up).
func (l *lateNode) URL() string { return Redact(l.url) }

func (l *lateNode) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.st != nil {
		return l.st.Close()
	}
	return nil
}
