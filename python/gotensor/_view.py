"""What the Go core needs of a tensor: its host memory as (pointer, bytes)."""

from __future__ import annotations

from typing import Any, NamedTuple, Sequence


class HostView(NamedTuple):
    ptr: int          # address of the first byte, in host memory
    nbytes: int
    dtype: str        # torch's spelling: "bfloat16", "float8_e4m3fn", ...
    shape: str        # comma-separated dimensions, "" for 0-d
    keep: Any         # object that owns the memory; hold it while Go uses ptr
    gpu: int = -1     # the CUDA device the tensor comes from or goes to, else -1


def shape_str(shape: Sequence[int]) -> str:
    return ",".join(str(int(d)) for d in shape)


def parse_desc(desc: str):
    """Parse the "handle;dtype;shape" string the core returns for a fetch."""
    fh, dtype, shape = desc.split(";")
    dims = tuple(int(d) for d in shape.split(",")) if shape else ()
    return int(fh), dtype, dims
