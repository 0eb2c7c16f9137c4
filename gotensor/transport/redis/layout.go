package redis

import (
	"context"
	"encoding/binary"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/gotensor/gotensor/gotensor/errs"
)

// Layout. A key's value lives under valuePrefix+key and is either
//
//	inline:   "GTRI" ver(8) frame                      (a frame of up to a piece)
//	manifest: "GTRM" ver(8) size(8) n(4) n x segment   (a larger frame)
//
// where a segment is kind(1) len(8) then, for a piece (kind 0), keylen(2)
// and the piece's key, or, for inline bytes (kind 1), the bytes (a
// streamed frame's header). The frame is its segments' bytes in order.
// Pieces live under piecePrefix+"{tag}"+id: the tag places the piece on a
// chosen master (a cluster spreads a frame's pieces over them all), the
// id is random, so a piece is never rewritten: a row edit writes new
// pieces and a new manifest. ver changes with every change of the value
// (store.Editor's version). Integers are little-endian.
const (
	valuePrefix = "gt:k:"
	piecePrefix = "gt:p:"
	inlineMagic = "GTRI"
	manMagic    = "GTRM"
	envelope    = 12 // magic and ver
	segPiece    = 0
	segInline   = 1
	// maxManifest bounds a manifest a reader accepts.
	maxManifest = 64 << 20
)

func valueKey(key string) string { return valuePrefix + key }

// newVer is a fresh version: random, never 0.
func newVer() uint64 {
	for {
		if v := rand.Uint64(); v != 0 {
			return v
		}
	}
}

func verBytes(v uint64) string {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	return string(b[:])
}

// inlineValue is frame as an inline value: the envelope, then the frame.
func inlineValue(ver uint64, frame []byte) []byte {
	out := make([]byte, envelope+len(frame))
	copy(out, inlineMagic)
	binary.LittleEndian.PutUint64(out[4:], ver)
	copy(out[envelope:], frame)
	return out
}

// segment is a run of a frame's bytes: a piece's, or bytes held in the manifest.
type segment struct {
	n     int64
	piece string // the piece's key; "" for inline bytes
	data  []byte // inline bytes
}

type manifest struct {
	ver  uint64
	size int64
	segs []segment
}

func (m *manifest) encode() []byte {
	n := envelope + 12
	for _, s := range m.segs {
		n += 9
		if s.piece != "" {
			n += 2 + len(s.piece)
		} else {
			n += len(s.data)
		}
	}
	out := make([]byte, 0, n)
	out = append(out, manMagic...)
	out = binary.LittleEndian.AppendUint64(out, m.ver)
	out = binary.LittleEndian.AppendUint64(out, uint64(m.size))
	out = binary.LittleEndian.AppendUint32(out, uint32(len(m.segs)))
	for _, s := range m.segs {
		if s.piece != "" {
			out = append(out, segPiece)
			out = binary.LittleEndian.AppendUint64(out, uint64(s.n))
			out = binary.LittleEndian.AppendUint16(out, uint16(len(s.piece)))
			out = append(out, s.piece...)
		} else {
			out = append(out, segInline)
			out = binary.LittleEndian.AppendUint64(out, uint64(len(s.data)))
			out = append(out, s.data...)
		}
	}
	return out
}

// decodeManifest parses a manifest value; a value that is not one whole
// is CorruptData.
func decodeManifest(key string, b []byte) (*manifest, error) {
	bad := func(why string) error {
		return errs.ForKey(errs.CorruptData, key, "key %q: its manifest is corrupt (%s)", key, why)
	}
	if len(b) < envelope+12 || string(b[:4]) != manMagic {
		return nil, bad("too short")
	}
	m := &manifest{ver: binary.LittleEndian.Uint64(b[4:]), size: int64(binary.LittleEndian.Uint64(b[12:]))}
	n := binary.LittleEndian.Uint32(b[20:])
	b = b[24:]
	if int64(n) > int64(len(b)) {
		return nil, bad("more segments than bytes")
	}
	m.segs = make([]segment, 0, n)
	var total int64
	for range n {
		if len(b) < 9 {
			return nil, bad("truncated")
		}
		kind, l := b[0], int64(binary.LittleEndian.Uint64(b[1:]))
		b = b[9:]
		if l < 0 || l > 1<<50 {
			return nil, bad("a segment's length")
		}
		switch kind {
		case segPiece:
			if len(b) < 2 {
				return nil, bad("truncated")
			}
			kl := int(binary.LittleEndian.Uint16(b))
			if len(b) < 2+kl || kl <= len(piecePrefix) || !strings.HasPrefix(string(b[2:2+kl]), piecePrefix) {
				return nil, bad("a piece's key")
			}
			m.segs = append(m.segs, segment{n: l, piece: string(b[2 : 2+kl])})
			b = b[2+kl:]
		case segInline:
			if int64(len(b)) < l {
				return nil, bad("truncated")
			}
			m.segs = append(m.segs, segment{n: l, data: b[:l:l]})
			b = b[l:]
		default:
			return nil, bad("a segment's kind")
		}
		total += l
	}
	if len(b) != 0 || total != m.size {
		return nil, bad("its segments do not add up to its size")
	}
	return m, nil
}

// pieces are the manifest's piece keys.
func (m *manifest) pieces() []string {
	var out []string
	for _, s := range m.segs {
		if s.piece != "" {
			out = append(out, s.piece)
		}
	}
	return out
}

// tagOf is a piece key's hash tag ("" for none).
func tagOf(piece string) string {
	rest := strings.TrimPrefix(piece, piecePrefix)
	if strings.HasPrefix(rest, "{") {
		if end := strings.IndexByte(rest, '}'); end > 0 {
			return rest[1:end]
		}
	}
	return ""
}

// pieceKey is a new piece's key with tag.
func pieceKey(tag string) string {
	id := strconv.FormatUint(rand.Uint64(), 36) + strconv.FormatUint(rand.Uint64(), 36)
	if tag == "" {
		return piecePrefix + id
	}
	return piecePrefix + "{" + tag + "}" + id
}

// topology is how a cluster's slots fall on its masters: tags[i] are
// hash tags whose slots master i serves (shards, not addresses: a
// failover moves a shard to another address, not its slots).
type topology struct {
	masters []string // addresses, by shard
	tags    [][]string
}

const tagsPerShard = 64

// refreshTopology learns the masters from CLUSTER SLOTS (one shard for a
// single server) and keeps it.
func (s *Store) refreshTopology(ctx context.Context) (*topology, error) {
	s.topoMu.Lock()
	defer s.topoMu.Unlock()
	if !s.cluster {
		t := &topology{masters: []string{s.opts.Hosts[0]}, tags: [][]string{{""}}}
		if err := s.c.Do(ctx, s.c.B().Ping().Build()).Error(); err != nil {
			return nil, s.wrap(ctx, err, "", "reaching")
		}
		s.topo.Store(t)
		return t, nil
	}
	resp, err := s.c.Do(ctx, s.c.B().ClusterSlots().Build()).ToArray()
	if err != nil {
		return nil, s.wrap(ctx, err, "", "reading the cluster's slots from")
	}
	var slotShard [16384]int16
	for i := range slotShard {
		slotShard[i] = -1
	}
	byID := map[string]int{}
	t := &topology{}
	for _, r := range resp {
		f, err := r.ToArray()
		if err != nil || len(f) < 3 {
			continue
		}
		lo, _ := f[0].AsInt64()
		hi, _ := f[1].AsInt64()
		node, err := f[2].ToArray()
		if err != nil || len(node) < 2 {
			continue
		}
		ip, _ := node[0].ToString()
		port, _ := node[1].AsInt64()
		id := ip + ":" + strconv.FormatInt(port, 10)
		if len(node) >= 3 {
			if nid, err := node[2].ToString(); err == nil {
				id = nid
			}
		}
		shard, ok := byID[id]
		if !ok {
			shard = len(t.masters)
			byID[id] = shard
			t.masters = append(t.masters, ip+":"+strconv.FormatInt(port, 10))
		}
		for sl := lo; sl <= hi && sl < 16384 && sl >= 0; sl++ {
			slotShard[sl] = int16(shard)
		}
	}
	if len(t.masters) == 0 {
		return nil, errs.New(errs.Unavailable, "cluster %s serves no slots", s.url)
	}
	t.tags = make([][]string, len(t.masters))
	for i, filled := 0, 0; filled < len(t.masters) && i < 1<<20; i++ {
		tag := strconv.FormatInt(int64(i), 36)
		sh := slotShard[slot(tag)]
		if sh < 0 || len(t.tags[sh]) >= tagsPerShard {
			continue
		}
		if t.tags[sh] = append(t.tags[sh], tag); len(t.tags[sh]) == tagsPerShard {
			filled++
		}
	}
	for i := range t.tags {
		if len(t.tags[i]) == 0 {
			t.tags[i] = []string{""}
		}
	}
	s.topo.Store(t)
	return t, nil
}

// placement gives n pieces their keys, spread over the shards in turn
// from a random one.
func (t *topology) placement(n int) []string {
	out := make([]string, n)
	first := rand.IntN(len(t.tags))
	for i := range out {
		tags := t.tags[(first+i)%len(t.tags)]
		out[i] = pieceKey(tags[rand.IntN(len(tags))])
	}
	return out
}

// slot is Redis Cluster's hash slot of key (CRC16/XMODEM of the key, or
// of its {tag}, mod 16384).
func slot(key string) uint16 {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	var crc uint16
	for i := 0; i < len(key); i++ {
		crc ^= uint16(key[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc % 16384
}
