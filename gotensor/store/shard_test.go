package store

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gotensor/gotensor/gotensor/errs"
)

func TestShardedSpreadsAndAgrees(t *testing.T) {
	ctx := context.Background()
	s, err := Open("mem://a,b,c,d?capacity=1GiB")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sh := s.(*Sharded)
	if len(sh.Nodes()) != 4 {
		t.Fatalf("url %s", s.URL())
	}
	const n = 4000
	for i := range n {
		if err := s.Put(ctx, fmt.Sprintf("expert.%d", i), []byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
	}
	for i, node := range sh.Nodes() { // even spread: each node within 15% of n/4
		if k := node.Usage().Keys; math.Abs(float64(k)-n/4) > 0.15*n/4 {
			t.Fatalf("node %d holds %d of %d keys", i, k, n)
		}
	}
	ks, _ := s.List(ctx, "expert.1")
	if len(ks) != 1111 || s.Usage().Keys != n {
		t.Fatalf("list %d usage %+v", len(ks), s.Usage())
	}
	// the same node list in another order routes every key the same way
	nd, nm := sh.Nodes(), sh.Names()
	other := NewSharded("x", []string{nm[2], nm[0], nm[3], nm[1]}, []Store{nd[2], nd[0], nd[3], nd[1]})
	for i := range 200 {
		k := fmt.Sprintf("expert.%d", i)
		if b, err := other.Get(ctx, k); err != nil || b[0] != byte(i) {
			t.Fatalf("%s routed differently: %v", k, err)
		}
	}
	// dropping one node moves only that node's keys
	three := NewSharded("y", nm[:3], nd[:3])
	moved := 0
	for i := range n {
		k := fmt.Sprintf("expert.%d", i)
		if a, b := sh.Node(k), three.Node(k); a != b {
			if a != 3 {
				t.Fatalf("%s moved from node %d though node 3 left", k, a)
			}
			moved++
		}
	}
	if moved == 0 {
		t.Fatal("no key lived on the removed node")
	}
}

func TestShardURLs(t *testing.T) {
	for in, want := range map[string]string{
		"tcp://a:1,b:2":               "[tcp://a:1 tcp://b:2]",
		"tcp://a:1, b:2?token=x":      "[tcp://a:1?token=x tcp://b:2?token=x]",
		"ucx://[::1]:1,[::2]:2/p?q=1": "[ucx://[::1]:1/p?q=1 ucx://[::2]:2/p?q=1]",
		"tcp://a:1":                   "[]",
		"file:///x,y":                 "[]",
	} {
		if urls, _ := splitShards(in); fmt.Sprint(urls) != want {
			t.Errorf("%s: %s, want %s", in, urls, want)
		}
	}
	for _, bad := range []string{"mem://a,a", "mem://a,", "mem://,b"} {
		if _, err := Open(bad); err == nil {
			t.Fatalf("%s was accepted", bad)
		}
	}
}

// A bad node list says what is wrong with it.
func TestBadNodeListSaysWhy(t *testing.T) {
	for u, why := range map[string]string{
		"mem://a,a":         "node mem://a is named twice",
		"mem://a,,b":        "a node is empty",
		"mem://a,?token=xy": "a node is empty",
	} {
		_, err := Open(u)
		if !errs.Is(err, errs.InvalidArgument) || !strings.Contains(err.Error(), why) {
			t.Errorf("Open(%q) = %v, want InvalidArgument saying %q", u, err, why)
		}
	}
}

// usageStore answers Usage with u.
type usageStore struct {
	*Mem
	u Usage
}

func (s usageStore) Usage() Usage { return s.u }

// A node that does not answer is named, its figures left out: a degraded
// shard's usage is never reported as the whole.
func TestShardedUsageNamesUnansweredNodes(t *testing.T) {
	up := usageStore{NewMem("mem://a", 0), Usage{Keys: 9, Bytes: 900, Capacity: 1000}}
	down := usageStore{NewMem("mem://b", 0), Usage{Unanswered: []string{"tcp://b:1"}}}
	s := NewSharded("tcp://a:1,b:1", []string{"a:1", "b:1"}, []Store{up, down})
	u := s.Usage()
	if u.Keys != 9 || len(u.Unanswered) != 1 || u.Unanswered[0] != "b:1" {
		t.Fatalf("usage with a node down: %+v", u)
	}
	late := &lateNode{url: "tcp://127.0.0.1:1?timeout=1s"}
	if lu := late.Usage(); len(lu.Unanswered) != 1 {
		t.Fatalf("a node never reached: %+v", lu)
	}
	s2 := NewSharded("tcp://a:1,b:1", []string{"a:1", "b:1"}, []Store{up, up})
	if u := s2.Usage(); u.Keys != 18 || len(u.Unanswered) != 0 {
		t.Fatalf("usage with every node up: %+v", u)
	}
}

// rangeNode is a node as a remote client is: it streams, reads ranges into
// memory of its own and, where recycles is set, takes that memory back.
type rangeNode struct {
	*Mem
	recycles bool
	recycled *atomic.Int64
}

func (n rangeNode) Caps() Caps {
	c := Caps{Ranges: n, Stream: n}
	if n.recycles {
		c.Recycler = n
	}
	return c
}

func (n rangeNode) GetRange(ctx context.Context, key string, off, size int64) ([]byte, int64, error) {
	return ReadRange(ctx, n.Mem, key, off, size)
}

func (n rangeNode) PutStream(ctx context.Context, key string) (PartSink, error) {
	return BufferedStream(ctx, n.Mem, key), nil
}

func (n rangeNode) RecycleRange([]byte) { n.recycled.Add(1) }

// A sharded store recycles the ranges it returns where every node reached
// at open does; where one of them does not, it offers no recycler, so no
// node's memory is ever pooled by mistake.
func TestShardedRecyclesRangesWhereEveryNodeDoes(t *testing.T) {
	ctx := context.Background()
	var recycled atomic.Int64
	node := func(name string, recycles bool) rangeNode {
		return rangeNode{NewMem("mem://"+name, 0), recycles, &recycled}
	}
	names := []string{"a:1", "b:1"}
	s := NewSharded("tcp://a:1,b:1", names, []Store{node("a", true), node("b", true)})
	rc := s.Caps().Recycler
	if rc == nil {
		t.Fatal("nodes that recycle ranges, and a sharded store over them that does not")
	}
	for _, key := range []string{"k1", "k2", "k3", "k4"} { // both nodes hold some
		if err := s.Put(ctx, key, []byte("frame of "+key)); err != nil {
			t.Fatal(err)
		}
		r, _, err := s.Caps().Ranges.GetRange(ctx, key, 0, 5)
		if err != nil || string(r) != "frame" {
			t.Fatalf("%s: %q %v", key, r, err)
		}
		rc.RecycleRange(r)
	}
	if recycled.Load() != 4 {
		t.Fatalf("%d of 4 ranges recycled", recycled.Load())
	}
	late := &lateNode{url: "tcp://127.0.0.1:1?timeout=1s"} // not reached: its scheme is the others'
	if NewSharded("tcp://a:1,b:1", names, []Store{node("a", true), late}).Caps().Recycler == nil {
		t.Fatal("a node not yet reached turned recycling off")
	}
	if NewSharded("tcp://a:1,b:1", names, []Store{node("a", true), node("b", false)}).Caps().Recycler != nil {
		t.Fatal("a sharded store recycles ranges a node of it does not")
	}
}
