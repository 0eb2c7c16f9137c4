"""Loads the gopy-built extension (the Go core); one Go runtime per process."""

from __future__ import annotations

import os
import sys
from typing import Any

# go-nvml resolves NVML's symbols when it loads libnvidia-ml at run time, so
# the extension must be bound lazily: CPython loads extensions with
# RTLD_NOW, which would demand those symbols at import, also where there is
# no driver. (LD_BIND_NOW=1 in the environment defeats this.)
_flags = sys.getdlopenflags()
sys.setdlopenflags((_flags & ~os.RTLD_NOW) | os.RTLD_LAZY)
try:
    from ._native import pybind as _pybind
except ImportError as e:  # pragma: no cover - only on a broken install
    raise ImportError(
        "gotensor's native core (gotensor/_native) is missing or failed to load: "
        f"{e}. Reinstall with `pip install .` from a source checkout (needs the Go toolchain)."
    ) from e
finally:
    sys.setdlopenflags(_flags)

# gopy's generated module carries no annotations: its functions take and
# return ints, strs and bools, and raise RuntimeError("Kind: text"), whose
# fields errors.last_error takes from the core (take_error).
native: Any = _pybind
# The extension module itself: its pybind_<Name> functions are what
# native's wrappers call, one Python call fewer for the hot paths.
raw: Any = _pybind._gtnative

__all__ = ["native", "raw"]
