"""A small, independent reader and writer of gotensor frames (docs/FORMAT.md),
used to check interoperability with zlib and FlexGen byte for byte."""

from __future__ import annotations

import struct
from dataclasses import dataclass

MAGIC = b"GTNS"
CODECS = {"none": 0, "planes": 1, "deflate": 2, "shuffle-deflate": 3, "lz4": 4, "zstd": 5, "q4": 6, "q8": 7, "shuffle-zstd": 8}
DTYPES = {"bool": 1, "uint8": 2, "int8": 3, "int16": 4, "int32": 5, "int64": 6, "uint16": 7, "uint32": 8,
          "uint64": 9, "float16": 10, "bfloat16": 11, "float32": 12, "float64": 13}


def _crc32c_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ (0x82F63B78 if c & 1 else 0)
        table.append(c)
    return table


_T = _crc32c_table()


def crc32c(b: bytes) -> int:
    c = 0xFFFFFFFF
    for x in b:
        c = _T[(c ^ x) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


@dataclass
class Chunk:
    raw_len: int
    enc: bytes
    crc: int
    aux: int

    @property
    def stored_raw(self) -> bool:
        return len(self.enc) == self.raw_len


@dataclass
class Frame:
    codec: int
    dtype: int
    shape: tuple
    chunk_size: int
    raw_size: int
    param: int
    chunks: list


def parse(b: bytes) -> Frame:
    assert b[:4] == MAGIC and b[4] == 1
    codec, dtype, ndim = b[5], b[6], b[7]
    chunk_size, nchunks, raw_size, param, flags = struct.unpack_from("<IIQII", b, 8)
    shape = struct.unpack_from(f"<{ndim}Q", b, 32)
    off = 32 + 8 * ndim
    table = [struct.unpack_from("<III", b, off + 12 * i) for i in range(nchunks)]
    off += 12 * nchunks
    assert struct.unpack_from("<I", b, off)[0] == crc32c(b[:off])
    off += 4
    chunks = []
    for i, (enc_len, crc, aux) in enumerate(table):
        enc = b[off:off + enc_len]
        assert crc32c(enc) == crc
        chunks.append(Chunk(min(chunk_size, raw_size - i * chunk_size), enc, crc, aux))
        off += enc_len
    assert off == len(b)
    return Frame(codec, dtype, tuple(shape), chunk_size, raw_size, param, chunks)


def build(codec: str, dtype: str, shape, chunk_size: int, chunks: list[tuple[bytes, int]], raw_size: int, param=0) -> bytes:
    """A frame from already-encoded chunks: (encoded bytes, aux) pairs."""
    head = MAGIC + bytes([1, CODECS[codec], DTYPES[dtype], len(shape)])
    head += struct.pack("<IIQII", chunk_size, len(chunks), raw_size, param, 0)
    head += struct.pack(f"<{len(shape)}Q", *shape)
    for enc, aux in chunks:
        head += struct.pack("<III", len(enc), crc32c(enc), aux)
    head += struct.pack("<I", crc32c(head))
    return head + b"".join(enc for enc, _ in chunks)
