"""Codecs through the Python API: every codec on every dtype it takes, DEFLATE
streams that zlib reads and writes, and q4 byte-identical to FlexGen."""

import struct
import zlib

import numpy as np
import pytest
import torch

import gotensor
from gotensor.checkpoints import find_testdata, load_llama2c
from gotensor.torch import DTYPES

import _frames

LOSSLESS = ["none", "planes", "deflate", "shuffle-deflate", "lz4", "zstd", "shuffle-zstd", "auto"]
FLOATS = {"bfloat16", "float16", "float32", "float64", "complex64", "complex128",
          "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu"}


def raw_bytes(t):
    return t.contiguous().reshape(-1).view(torch.uint8).numpy().tobytes()


@pytest.fixture(scope="module")
def weights():
    w = load_llama2c(find_testdata("stories260K.bin"))
    return torch.from_numpy(np.concatenate([v.reshape(-1) for v in w.values()]).copy())


@pytest.mark.parametrize("codec", LOSSLESS)
@pytest.mark.parametrize("name", sorted(DTYPES))
def test_lossless_codecs_every_dtype(store, codec, name, weights):
    dt = DTYPES[name]
    if codec in ("planes", "shuffle-deflate", "shuffle-zstd") and name not in FLOATS:
        with pytest.raises(gotensor.InvalidArgument, match="does not support"):
            store.write_tensor("t", torch.zeros(4, dtype=dt), codec=codec)
        return
    if name in FLOATS and not name.startswith("complex"):
        t = weights[:50000].to(dt)
    else:
        t = torch.randint(0, 100, (50000,), dtype=torch.int64).to(dt)
    t = t.reshape(100, 500)
    store.write_tensor("t", t, codec=codec)
    r = store.read_tensor("t")
    assert r.dtype == t.dtype and r.shape == t.shape and raw_bytes(r) == raw_bytes(t)
    st = store.stat("t")
    assert st["codec"] in ({"auto": st["codec"]}.get(codec, codec),)
    # never more than the raw tensor plus its header
    assert st["stored_bytes"] <= st["raw_bytes"] + 32 + 8 * 2 + 12 * st["chunks"] + 4


def test_planes_compresses_real_bf16_weights(store, weights):
    t = weights.to(torch.bfloat16)
    store.write_tensor("w", t, codec="planes")
    st = store.stat("w")
    ratio = st["raw_bytes"] / st["stored_bytes"]
    assert ratio > 1.25, ratio
    assert torch.equal(store.read_tensor("w").view(torch.int16), t.view(torch.int16))


def test_auto_picks_by_cost(store, weights):
    """auto weighs the store's link against this machine's codec speeds (README, How auto chooses): into
    mem:// coding costs more than the bytes it saves, so bfloat16 goes raw; it never picks a lossy codec,
    integers never get planes, and noise is never coded."""
    store.write_tensor("f", weights.to(torch.bfloat16), codec="auto")
    f = store.stat("f")["codec"]
    assert f == "none" if store.url.startswith("mem://") else f in ("none", "planes"), f
    store.write_tensor("i", torch.arange(1 << 16), codec="auto")
    assert store.stat("i")["codec"] in ("none", "lz4")
    noise = torch.randint(0, 256, (1 << 16,), dtype=torch.uint8)
    store.write_tensor("n", noise, codec="auto")
    assert store.stat("n")["codec"] == "none"
    picked = [store.stat(k)["codec"] for k in ("f", "i", "n")]
    assert store.stats()["codecs"] == {c: picked.count(c) for c in set(picked)}
    assert torch.equal(store.read_tensor("f"), weights.to(torch.bfloat16))


def test_codec_errors(store):
    with pytest.raises(gotensor.InvalidArgument, match="unknown codec"):
        store.write_tensor("k", torch.zeros(3), codec="brotli")
    with pytest.raises(gotensor.InvalidArgument):
        store.write_tensor("k", torch.zeros(3, dtype=torch.int32), codec="q4")
    with pytest.raises(gotensor.InvalidArgument):
        store.write_tensor("k", torch.zeros(3, 3), codec="q4:group=3")
    with pytest.raises(gotensor.InvalidArgument):
        store.write_tensor("k", torch.zeros(3, 3), codec="zstd:level=9")
    assert store.keys() == []


# -- DEFLATE interoperability with zlib (wbits=-15, what DOCA emits) -----------

def frame_bytes(tmp_path, key="t"):
    return (tmp_path / "s" / f"{key}.gtf").read_bytes()


def unshuffle(shuffled: bytes, k: int) -> bytes:
    """Inverse of the byte-plane split with the sign rotation (docs/FORMAT.md)."""
    n = len(shuffled) // k
    planes = np.frombuffer(shuffled, dtype=np.uint8).reshape(k, n).astype(np.uint64)
    v = np.zeros(n, dtype=np.uint64)
    for j in range(k):
        v |= planes[j] << np.uint64(8 * (k - 1 - j))
    bits = np.uint64(8 * k)
    mask = np.uint64((1 << (8 * k)) - 1) if k < 8 else np.uint64(0xFFFFFFFFFFFFFFFF)
    v = ((v >> np.uint64(1)) | (v << (bits - np.uint64(1)))) & mask
    return v.astype(f"<u{k}").tobytes()


def shuffle(raw: bytes, k: int) -> bytes:
    n = len(raw) // k
    v = np.frombuffer(raw, dtype=f"<u{k}").astype(np.uint64)
    bits = np.uint64(8 * k)
    mask = np.uint64((1 << (8 * k)) - 1) if k < 8 else np.uint64(0xFFFFFFFFFFFFFFFF)
    v = ((v << np.uint64(1)) | (v >> (bits - np.uint64(1)))) & mask
    return b"".join(((v >> np.uint64(8 * (k - 1 - j))) & np.uint64(0xFF)).astype(np.uint8).tobytes() for j in range(k))


@pytest.mark.parametrize("codec", ["deflate", "shuffle-deflate"])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float32])
def test_zlib_decodes_what_gotensor_writes(tmp_path, weights, codec, dtype):
    t = weights.to(torch.bfloat16).to(dtype)  # zero low mantissa bytes: even plain DEFLATE finds matches
    raw = raw_bytes(t)
    with gotensor.open(f"file://{tmp_path}/s") as s:
        s.write_tensor("t", t, codec=codec)
    f = _frames.parse(frame_bytes(tmp_path))
    assert f.codec == _frames.CODECS[codec]
    k = t.element_size()
    out, coded = b"", 0
    for c in f.chunks:
        if c.stored_raw:
            out += c.enc
            continue
        if codec == "shuffle-deflate":
            assert f.param == 2  # two streams: the chunk's first and second half of elements
            (la,) = struct.unpack_from("<I", c.enc)
            halves = [inflate_whole(c.enc[4:4 + la]), inflate_whole(c.enc[4 + la:])]
            assert zlib.adler32(b"".join(halves)) == c.aux  # DOCA's checksums of the two, joined
            out += b"".join(unshuffle(h, k) for h in halves)
        else:
            inflated = inflate_whole(c.enc)
            assert zlib.adler32(inflated) == c.aux  # the checksum DOCA reports
            out += inflated
        coded += 1
    assert coded > 0 and out == raw


def inflate_whole(stream: bytes) -> bytes:
    """Inflates one raw DEFLATE stream that must end where the bytes end."""
    d = zlib.decompressobj(wbits=-15)
    out = d.decompress(stream)
    assert d.eof and not d.unused_data
    return out


@pytest.mark.parametrize("workers", [1, 2, 16])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float32])
def test_deflate_compresses_weights_like_zlib_level_1(store, weights, dtype, workers):
    """With libdeflate, deflate's frame (header counted) is smaller than zlib level 1's stream, however
    many workers cut the tensor into chunks; Go's BestSpeed (pure-Go builds) ties it."""
    t = weights.to(dtype)
    gotensor.set_workers(workers)
    try:
        store.write_tensor("t", t, codec="deflate")
    finally:
        gotensor.set_workers(0)
    st = store.stat("t")
    raw = raw_bytes(t)
    slack = 1.0 if gotensor.info()["libraries"]["libdeflate"] else 0.995
    assert st["raw_bytes"] / st["stored_bytes"] > slack * len(raw) / len(zlib.compress(raw, 1))
    assert raw_bytes(store.read_tensor("t")) == raw


def zlib_raw(b: bytes) -> bytes:
    z = zlib.compressobj(level=6, wbits=-15)
    return z.compress(b) + z.flush()


# shuffle-deflate's layouts (the frame parameter): 0, one stream, as frames
# written before the parameter; 2, two streams of the halves of the elements
@pytest.mark.parametrize("codec,param", [("deflate", 0), ("shuffle-deflate", 0), ("shuffle-deflate", 2)])
def test_gotensor_decodes_what_zlib_writes(tmp_path, weights, codec, param):
    t = weights[:100000].to(torch.bfloat16).reshape(400, 250)
    raw = raw_bytes(t)
    chunk = 64 << 10
    chunks = []
    for off in range(0, len(raw), chunk):
        piece = raw[off:off + chunk]
        if param == 2:
            h = len(piece) // 4 * 2
            a, b = shuffle(piece[:h], 2), shuffle(piece[h:], 2)
            sa = zlib_raw(a)
            chunks.append((struct.pack("<I", len(sa)) + sa + zlib_raw(b), zlib.adler32(a + b)))
            continue
        if codec == "shuffle-deflate":
            piece = shuffle(piece, 2)
        chunks.append((zlib_raw(piece), zlib.adler32(piece)))
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "z.gtf").write_bytes(_frames.build(codec, "bfloat16", (400, 250), chunk, chunks, len(raw), param))
    with gotensor.open(f"file://{tmp_path}/s") as s:
        assert s.keys() == ["z"]
        r = s.read_tensor("z")
        assert raw_bytes(r) == raw
        assert s.stat("z")["codec"] == codec
    # a wrong Adler-32 is caught
    bad = [(enc, aux ^ 1) for enc, aux in chunks]
    (tmp_path / "s" / "z.gtf").write_bytes(_frames.build(codec, "bfloat16", (400, 250), chunk, bad, len(raw), param))
    with gotensor.open(f"file://{tmp_path}/s") as s:
        with pytest.raises(gotensor.CorruptData, match="Adler"):
            s.read_tensor("z")


# -- FlexGen 4-bit quantization -------------------------------------------------

def flexgen_compress(t: torch.Tensor, group_size: int, group_dim: int):
    from flexgen.compression import CompressionConfig, TorchCompressedDevice
    from flexgen.pytorch_backend import TorchDevice, fix_recursive_import
    fix_recursive_import()
    dev = TorchCompressedDevice(TorchDevice("cpu"))
    cfg = CompressionConfig(num_bits=4, group_size=group_size, group_dim=group_dim, symmetric=False)
    data, scale, _ = dev.compress(t, cfg).data
    # FlexGen stores the scales in the float16 tensors TorchCompressedDevice.allocate makes
    return data.data, scale.data.to(torch.float16)


@pytest.mark.parametrize("shape,group_size,group_dim", [
    ((256, 64), 64, 0),            # a weight: group 64 along dim 0
    ((300, 72), 64, 0),            # padded last group
    ((17, 4, 64), 64, 2),          # a KV cache slice: (seq, batch*heads, head_dim), group along dim 2
    ((9, 40, 6), 32, 1),           # another dimension, padding
])
def test_q4_is_byte_identical_to_flexgen(tmp_path, weights, shape, group_size, group_dim):
    pytest.importorskip("flexgen.compression")  # here, not at module level: the other tests run without it
    n = int(np.prod(shape))
    t = (weights[:n] * 3).reshape(shape).to(torch.float16)
    t.view(-1)[:group_size] = 0.25  # a constant group: FlexGen's scale is +inf
    fl_data, fl_scale = flexgen_compress(t, group_size, group_dim)

    spec = f"q4:group={group_size},dim={group_dim}"
    with gotensor.open(f"file://{tmp_path}/s") as s:
        s.write_tensor("t", t, codec=spec)
        r = s.read_tensor("t")
    f = _frames.parse(frame_bytes(tmp_path))
    assert f.codec == _frames.CODECS["q4"] and all(not c.stored_raw for c in f.chunks)
    # each chunk is whole rows before the group dim: data part, then scale part
    outer = int(np.prod(shape[:group_dim]))
    per_row_data = fl_data.numel() // outer
    data, scale = b"", b""
    for c in f.chunks:
        rows = c.raw_len // (int(np.prod(shape[group_dim:])) * 2)
        data += c.enc[:rows * per_row_data]
        scale += c.enc[rows * per_row_data:]
    assert data == fl_data.contiguous().numpy().tobytes()
    assert scale == fl_scale.contiguous().numpy().tobytes()

    # decoding is FlexGen's CPU dequantization: q / scale + min in float32
    ref = flexgen_dequantize(fl_data, fl_scale, shape, group_size, group_dim)
    assert torch.equal(r, ref.to(torch.float16))


def flexgen_dequantize(data, scale, shape, group_size, group_dim):
    ng = (shape[group_dim] + group_size - 1) // group_size
    packed = data.view(shape[:group_dim] + (ng, group_size // 2) + shape[group_dim + 1:])
    q = torch.empty(shape[:group_dim] + (ng, group_size) + shape[group_dim + 1:], dtype=torch.float32)
    idx = (slice(None),) * (group_dim + 1)
    q[idx + (slice(0, None, 2),)] = (packed >> 4).float()
    q[idx + (slice(1, None, 2),)] = (packed & 0xF).float()
    sc, mn = scale.view(shape[:group_dim] + (ng, 2) + shape[group_dim + 1:]).split(1, dim=group_dim + 1)
    x = q / sc.float() + mn.float()
    x = x.reshape(shape[:group_dim] + (ng * group_size,) + shape[group_dim + 1:])
    return x.narrow(group_dim, 0, shape[group_dim])


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32])
@pytest.mark.parametrize("codec,levels", [("q4", 15), ("q8", 255)])
def test_quantized_error_is_bounded(store, weights, dtype, codec, levels):
    t = weights[:64 * 1000].reshape(64, 1000).to(dtype)
    store.write_tensor("q", t, codec=codec)
    r = store.read_tensor("q")
    assert r.dtype == dtype and r.shape == t.shape
    span = (t.float().amax(0) - t.float().amin(0))  # group 64 along dim 0: one group per column
    err = (r.float() - t.float()).abs()
    # half a step, plus the float16 scale's and the output dtype's rounding
    assert bool((err <= span / levels * 0.52 + 8e-3 * t.float().abs() + 1e-6).all())
    assert store.stat("q")["stored_bytes"] < t.numel() * t.element_size() * (0.6 if codec == "q8" else 0.4)
