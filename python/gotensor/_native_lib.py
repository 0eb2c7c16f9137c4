"""Loads the gopy-built extension (the Go core); one Go runtime per process."""

from __future__ import annotations

try:
    from ._native import pybind as native
except ImportError as e:  # pragma: no cover - only on a broken install
    raise ImportError(
        "gotensor's native core (gotensor/_native) is missing or failed to load: "
        f"{e}. Reinstall with `pip install .` from a source checkout (needs the Go toolchain)."
    ) from e

__all__ = ["native"]
