"""FlexGen's index forms (None, a tensor of positions, a tuple of slices)
mapped onto gotensor's reads and writes: the rows of the leading dimension
a copy spans, where it spans whole rows."""

from __future__ import annotations

import torch
from flexgen import pytorch_backend as pb


def row_split(indices):
    """(slice of rows, the indices within those rows) for slice indices,
    whose first picks rows of the leading dimension; (None, None) otherwise."""
    if indices is None or torch.is_tensor(indices):
        return None, None
    idx = tuple(indices)
    if not idx or not all(isinstance(s, slice) for s in idx) or idx[0].step not in (None, 1):
        return None, None
    rows = slice(idx[0].start, idx[0].stop)
    return rows, (slice(None),) + idx[1:]


def covers(s: slice, d: int) -> bool:
    """Whether slice s takes all of a dimension of d."""
    return s.indices(d) == (0, d, 1)


def is_whole(indices) -> bool:
    """Whether indices take the whole tensor (None, or an empty tuple)."""
    return indices is None or (not torch.is_tensor(indices) and not indices)


def index(data: torch.Tensor, indices):
    """data[indices] for FlexGen's index forms."""
    if is_whole(indices):
        return data
    if torch.is_tensor(indices):
        return pb.vector_gather(data, indices)
    return data[tuple(indices)]


def row_span(shape: tuple, dtype: torch.dtype, indices, t: torch.Tensor) -> tuple[int, int] | None:
    """(start, stop) where indices pick rows [start, stop) of a tensor of
    shape and dtype with every trailing dimension whole, and t is those rows
    in that dtype (a KV cache's append or its [0:pos]); None otherwise. The
    hot path of FlexGen's cache copies: nothing but tuple and slice checks."""
    if type(indices) is not tuple or not indices:
        return None
    rows = indices[0]
    if type(rows) is not slice or rows.step not in (None, 1) or t.dtype is not dtype or len(indices) > len(shape):
        return None
    for s, d in zip(indices[1:], shape[1:]):
        if type(s) is not slice or s.indices(d) != (0, d, 1):
            return None
    start, stop, _ = rows.indices(shape[0])
    if stop <= start or t.shape != (stop - start,) + shape[1:]:
        return None
    return start, stop


def rows_read(shape: tuple, indices, out: torch.Tensor) -> tuple[int, int] | None:
    """(start, stop) when indices take whole rows [start, stop) of a tensor
    of shape (all of it: every row) and out has their shape; None otherwise."""
    if type(indices) is tuple and indices and len(indices) <= len(shape):  # a cache's [0:pos]: slices only
        for s, d in zip(indices[1:], shape[1:]):
            if type(s) is not slice or s.indices(d) != (0, d, 1):
                break
        else:
            rows = indices[0]
            if type(rows) is slice and rows.step in (None, 1):
                start, stop, _ = rows.indices(shape[0])
                if stop >= start and out.shape == (stop - start,) + shape[1:]:
                    return start, stop
                return None
    if is_whole(indices):
        if tuple(out.shape) != shape or not shape:
            return None
        return 0, shape[0]
    rows, rest = row_split(indices)
    if rows is None or not shape or len(rest) > len(shape) or not all(covers(r, d) for r, d in zip(rest[1:], shape[1:])):
        return None
    start, stop, _ = rows.indices(shape[0])
    if stop < start or tuple(out.shape) != (stop - start,) + shape[1:]:
        return None
    return start, stop
