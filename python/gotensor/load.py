"""`gotensor load SRC --to URL`: put a model's weights into a store.

SRC is a .safetensors file (read with the safetensors library) or a FlexGen
weight directory (`<name>-np/`, one np.save file per tensor). Keys are the
tensor names, under --prefix. FlexGen then reads them from the store
(gotensor.flexgen.execution_env(weights=URL_and_prefix)) instead of from the
-np directory.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any, Callable

import torch

from .errors import CorruptData, InvalidArgument

_NPY_MAGIC = b"\x93NUMPY"


def _npy_files(src: str) -> list[str]:
    """The np.save files of a directory, by name."""
    out = []
    for name in sorted(os.listdir(src)):
        path = os.path.join(src, name)
        if os.path.isfile(path):
            with open(path, "rb") as f:
                if f.read(len(_NPY_MAGIC)) == _NPY_MAGIC:
                    out.append(name)
    return out


def _read_npy(path: str) -> torch.Tensor:
    import numpy as np
    try:
        return torch.from_numpy(np.load(path, allow_pickle=False))
    except (ValueError, OSError, EOFError) as e:
        raise CorruptData(f"{path}: not a readable np.save file ({e})") from None


def open_source(src: str) -> tuple[list[str], Callable[[str], torch.Tensor], Callable[[], None]]:
    """The tensor names of src, a function reading one, and one closing src.
    An empty or non-model directory is InvalidArgument; a damaged file
    CorruptData."""
    if not os.path.exists(src):
        raise InvalidArgument(f"{src}: no such file or directory")
    if os.path.isdir(src):
        names = _npy_files(src)
        if not names:
            raise InvalidArgument(f"{src}: no np.save (.npy) files here: not a FlexGen <model>-np directory")
        return names, lambda n: _read_npy(os.path.join(src, n)), lambda: None
    from safetensors import SafetensorError, safe_open
    try:
        f = safe_open(src, framework="pt")
        names = list(f.keys())
    except SafetensorError as e:
        raise CorruptData(f"{src}: not a valid .safetensors file ({e})") from None

    def read(name: str) -> torch.Tensor:
        try:
            return f.get_tensor(name)
        except SafetensorError as e:
            raise CorruptData(f"{src}: tensor {name!r}: {e}") from None
    return names, read, lambda: f.__exit__(None, None, None)


def _codec_refused(e: InvalidArgument) -> bool:
    """Whether the core refused a codec for the tensor's dtype (frame's
    "codec X does not support dtype Y"), not for a bad name or parameter."""
    return "does not support dtype" in str(e)


def _write(store, key: str, t: torch.Tensor, codec: str) -> str | None:
    """Write t with codec; where codec cannot code t's dtype, with auto.
    Returns why it fell back, or None."""
    try:
        store.write_tensor(key, t, codec=codec)
        return None
    except InvalidArgument as e:
        if codec == "auto" or not _codec_refused(e):
            raise
        store.write_tensor(key, t, codec="auto")
        return str(e)


def load(src: str, url: str, prefix: str = "", codec: str = "auto", dtype: str | None = None,
         progress: bool = True, token: str | None = None) -> dict[str, Any]:
    """Write every tensor of src into the store at url (floating-point ones
    converted to dtype if given); returns a summary: tensors, raw_bytes,
    stored_bytes, seconds, fallbacks (keys stored with auto instead of
    codec) and url (without its secret)."""
    import gotensor
    from tqdm import tqdm
    to = getattr(torch, dtype, None) if dtype else None
    if dtype and not (isinstance(to, torch.dtype) and to.is_floating_point):
        raise InvalidArgument(f"dtype {dtype!r} is not a torch floating-point dtype (e.g. bfloat16, float16)")
    names, read, close = open_source(src)
    raw = stored = 0
    fallbacks: list[str] = []
    t0 = time.perf_counter()
    # disable=None: no bar when stderr is not a terminal (a log gets no redraws)
    bar = tqdm(total=len(names), unit="tensor", disable=None if progress else True, file=sys.stderr,
               dynamic_ncols=True)
    try:
        with gotensor.open(url, token=token) as store:
            for name in names:
                t = read(name)
                if to is not None and t.is_floating_point() and t.dtype != to:
                    t = t.to(to)
                key = prefix + name
                why = _write(store, key, t, codec)
                if why is not None:
                    fallbacks.append(key)
                    bar.write(f"gotensor load: {key}: {why}; stored it with codec auto", file=sys.stderr)
                raw += t.numel() * t.element_size()
                stored += store.stat(key)["stored_bytes"]
                bar.set_postfix_str(f"{raw / 1e6:.1f} MB {name[-40:]}", refresh=False)
                bar.update()
            where = store.url
    finally:
        bar.close()
        close()
    return {"tensors": len(names), "raw_bytes": raw, "stored_bytes": stored,
            "seconds": time.perf_counter() - t0, "fallbacks": fallbacks, "url": where}
