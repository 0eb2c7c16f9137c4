"""Page-locked views for mem://?pinned=true: where CUDA is available, each
mapping a view of such a store uses is registered with cudaHostRegister (of
the CUDA runtime torch loaded, found by its symbols), so that ``.to("cuda")``
copies straight from it. Without CUDA the views are ordinary ones."""

from __future__ import annotations

import ctypes
import threading
from typing import Any, Optional, Tuple

from ._native_lib import native

# cudaHostRegisterPortable: page-locked for every CUDA context
REGISTER_FLAGS = 1

_lock = threading.Lock()
_installed: Optional[Tuple[int, int]] = None


def _loaded_cudart() -> list[str]:
    """Paths of the CUDA runtime libraries this process has loaded."""
    paths: list[str] = []
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                path = line.rsplit(" ", 1)[-1].strip()
                if "libcudart" in path and path not in paths:
                    paths.append(path)
    except OSError:
        pass
    return paths


def find_cudart() -> Optional[Tuple[int, int]]:
    """The addresses of cudaHostRegister and cudaHostUnregister in the CUDA
    runtime torch uses, or None where CUDA is not available."""
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    torch.cuda.init()
    for lib in _loaded_cudart() + [None]:  # None: the symbols loaded globally
        try:
            so = ctypes.CDLL(lib)
            reg, unreg = so.cudaHostRegister, so.cudaHostUnregister
        except (OSError, AttributeError):
            continue
        return ctypes.cast(reg, ctypes.c_void_p).value or 0, ctypes.cast(unreg, ctypes.c_void_p).value or 0
    return None


def install(funcs: Any = None) -> bool:
    """Make Go pin the views of pinned stores through funcs ((register,
    unregister) addresses; by default the CUDA runtime's, where there is
    one). Returns whether pinning is on. Idempotent."""
    global _installed
    with _lock:
        if _installed is not None and funcs is None:
            return True
        found = funcs if funcs is not None else find_cudart()
        if not found or not all(found):
            return False
        native.set_pin_funcs(found[0], found[1], REGISTER_FLAGS)
        _installed = (found[0], found[1])
        return True


def uninstall() -> None:
    """Stop pinning new mappings (tests)."""
    global _installed
    with _lock:
        native.set_pin_funcs(0, 0, 0)
        _installed = None


def wants_pinning(url: str) -> bool:
    """Whether a store URL asks for pinned views (mem://...?pinned=true)."""
    if not url.startswith("mem://") or "?" not in url:
        return False
    from urllib.parse import parse_qs
    return parse_qs(url.split("?", 1)[1]).get("pinned", [""])[-1] in ("1", "true")
