"""What the Go core needs of a tensor: its host memory as (pointer, bytes),
its dtype as the core's integer code and its shape as an int64 array."""

from __future__ import annotations

import array
import json
from typing import Any, NamedTuple, Sequence

from ._native_lib import native

# dtype name -> the code binding calls take (tensor.DType), and back
CODES: dict[str, int] = json.loads(native.info(False))["dtype_codes"]
NAMES: dict[int, str] = {c: n for n, c in CODES.items()}
# Read's meta buffer: dtype code, rank, byte size, then the dimensions
META_WORDS: int = native.meta_words()


class HostView(NamedTuple):
    ptr: int          # address of the first byte, in host memory
    nbytes: int
    dtype: int        # the core's dtype code (CODES)
    shape: array.array  # int64 dimensions; shape_ptr() passes them
    keep: Any         # object that owns the memory; hold it while Go uses ptr
    gpu: int = -1     # the CUDA device the tensor comes from or goes to, else -1


def dims(shape: Sequence[int]) -> array.array:
    """A shape as the int64 array binding calls read."""
    return array.array("q", shape)


def shape_ptr(a: array.array) -> int:
    """The address of an int64 array (0 when empty: Go reads no element)."""
    return a.buffer_info()[0] if a else 0


def name_of(code: int) -> str:
    return NAMES.get(code, f"dtype#{code}")


def new_meta() -> array.array:
    return array.array("q", bytes(8 * META_WORDS))


def read_meta(meta: array.array) -> tuple[int, tuple[int, ...], int]:
    """(dtype code, shape, byte size) from a filled meta buffer."""
    return meta[0], tuple(meta[3:3 + meta[1]]), meta[2]
