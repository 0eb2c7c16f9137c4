"""A store's tensors into a .safetensors file, through the safetensors
library: Store.save_safetensors and `gotensor export URL --to FILE`."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Iterable

from .errors import InvalidArgument, Unsupported

if TYPE_CHECKING:
    from .store import Store


def _save(store: Store, path: str | os.PathLike[str], names: dict[str, str], progress: bool = False) -> dict[str, Any]:
    """Write {name in the file: key in the store} to path (replaced only once
    the whole file is written), with a progress bar on a terminal if asked.
    Returns tensors and raw_bytes."""
    import sys

    from tqdm import tqdm
    out = {}
    # disable=None: no bar when stderr is not a terminal
    with tqdm(total=len(names), unit="tensor", disable=None if progress else True, file=sys.stderr,
              dynamic_ncols=True) as bar:
        for name, key in names.items():
            out[name] = store.read_tensor(key)
            bar.update()
    return save_tensors(out, path)


def save_tensors(tensors: dict[str, Any], path: str | os.PathLike[str]) -> dict[str, Any]:
    """tensors ({name: tensor}) into the .safetensors file at path, which is
    replaced only once the whole file is written. Returns tensors and
    raw_bytes."""
    try:
        from safetensors import SafetensorError
        from safetensors.torch import save_file
    except ImportError:  # pragma: no cover - torch is optional for gotensor, not for export
        raise Unsupported("writing .safetensors needs torch and safetensors installed") from None
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise InvalidArgument(f"{path}: no such directory {folder}")
    tmp = path + ".tmp"
    try:
        save_file(tensors, tmp, metadata={"format": "pt"})
        os.replace(tmp, path)
    except (ValueError, TypeError, KeyError) as e:  # a dtype safetensors has no name for
        raise Unsupported(f"{path}: safetensors cannot hold these tensors ({e})") from None
    except SafetensorError as e:  # its I/O errors
        raise InvalidArgument(f"{path}: cannot write it ({e})") from None
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return {"tensors": len(tensors), "raw_bytes": sum(t.numel() * t.element_size() for t in tensors.values())}


def save_safetensors(store: Store, path: str | os.PathLike[str], keys: Iterable[str] | None = None) -> dict[str, Any]:
    """The tensors under keys (all of the store's when None), named by
    their keys, into the .safetensors file at path."""
    keys = store.keys() if keys is None else list(keys)
    return _save(store, path, {k: k for k in keys})


def export(store: Store, path: str | os.PathLike[str], prefix: str = "", progress: bool = False) -> dict[str, Any]:
    """The keys starting with prefix into path, named without the prefix
    (`gotensor load FILE --prefix P` puts them back under the same keys),
    with a progress bar on a terminal if asked."""
    keys = store.keys(prefix)
    if not keys:
        raise InvalidArgument(f"{store.url} has no keys starting with {prefix!r}: nothing to export")
    names = {k[len(prefix):]: k for k in keys}
    if "" in names:
        raise InvalidArgument(f"key {prefix!r} equals the prefix: it would have no name in the file")
    return _save(store, path, names, progress)
