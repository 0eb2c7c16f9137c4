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

from .errors import CorruptData, GotensorError, InvalidArgument

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


def _stopped(e: GotensorError, store, key: str, i: int, n: int, written: list[str], prefix: str,
             atomic: bool) -> GotensorError:
    """e, said again with where the load stopped and what it left stored."""
    if atomic:
        for k in written:
            try:
                store.delete(k)
            except GotensorError:
                pass
        left = f"--atomic: the {len(written)} tensors stored before it were deleted, nothing of this run is left"
    else:
        left = (f"{len(written)} of {n} tensors were stored before it and are kept "
                f"(`gotensor rm URL --prefix {prefix or '<none>'}` removes them; --atomic leaves nothing behind)")
    err = type(e)(f"load stopped at {key!r} (tensor {i + 1} of {n}): {e}; {left}")
    err.key = key
    return err


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


def read_file(path: str) -> dict[str, torch.Tensor]:
    """The tensors of a file for `gotensor put`, by name: a .npy array or a
    .pt file holding one tensor as {"": t}; a .safetensors file's tensors,
    or a .pt file's dict of tensors, by their names (a file of one tensor as
    {"": t} too)."""
    if not os.path.isfile(path):
        raise InvalidArgument(f"{path}: no such file")
    if path.endswith(".npy"):
        return {"": _read_npy(path)}
    if path.endswith(".safetensors"):
        names, read, close = open_source(path)
        try:
            out = {n: read(n) for n in names}
        finally:
            close()
    elif path.endswith((".pt", ".pth")):
        try:
            obj = torch.load(path, map_location="cpu", weights_only=True)
        except Exception as e:  # noqa: BLE001 - torch raises many kinds for a bad file
            raise CorruptData(f"{path}: not a readable torch file of tensors ({e})") from None
        if isinstance(obj, torch.Tensor):
            return {"": obj}
        if not (isinstance(obj, dict) and obj and all(isinstance(v, torch.Tensor) for v in obj.values())):
            raise InvalidArgument(f"{path}: holds a {type(obj).__name__}, not a tensor or a dict of tensors")
        out = {str(k): v for k, v in obj.items()}
    else:
        raise InvalidArgument(f"{path}: put reads .npy, .safetensors and .pt files")
    if not out:
        raise InvalidArgument(f"{path}: no tensors in it")
    return {"": next(iter(out.values()))} if len(out) == 1 else out


def load(src: str, url: str, prefix: str = "", codec: str = "auto", dtype: str | None = None,
         progress: bool = True, token: str | None = None, atomic: bool = False) -> dict[str, Any]:
    """Write every tensor of src into the store at url (floating-point ones
    converted to dtype if given); returns a summary: tensors, raw_bytes,
    stored_bytes, seconds, fallbacks (keys stored with auto instead of
    codec) and url (without its secret).

    A failure names the tensor it stopped at and what was stored before it;
    atomic deletes those keys first, so that nothing of the run is left."""
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
    written: list[str] = []
    try:
        with gotensor.open(url, token=token) as store:
            for i, name in enumerate(names):
                key = prefix + name
                try:
                    t = read(name)
                    if to is not None and t.is_floating_point() and t.dtype != to:
                        t = t.to(to)
                    why = _write(store, key, t, codec)
                except GotensorError as e:
                    raise _stopped(e, store, key, i, len(names), written, prefix, atomic) from None
                written.append(key)
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
