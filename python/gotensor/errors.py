"""gotensor's exception hierarchy.

The Go core classifies every error. A failed native call's error arrives as
fields (kind, key, message): the kind selects the class here, the message
is the exception's text and the key its ``key``.
"""

from __future__ import annotations

import json
from typing import Any, Callable, TypeVar

_T = TypeVar("_T")


class GotensorError(Exception):
    """Base class of every error gotensor raises. ``key`` is the key the
    error is about (``None`` when it is about none)."""

    kind = "Internal"
    key: str | None = None


class InternalError(GotensorError):
    """A bug in gotensor (including a recovered Go panic). Please report it."""


class InvalidArgument(GotensorError, ValueError):
    """A bad key, dtype, shape, URL, codec name or destination tensor."""

    kind = "InvalidArgument"


class KeyNotFound(GotensorError, KeyError):
    """No tensor is stored under the key."""

    kind = "KeyNotFound"

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0]) if self.args else ""


class CorruptData(GotensorError):
    """Stored bytes fail their checksums or do not parse as a frame."""

    kind = "CorruptData"


class StoreFull(GotensorError):
    """The store has no room for the tensor; nothing was evicted."""

    kind = "StoreFull"


class StoreClosed(GotensorError):
    """The store was closed."""

    kind = "Closed"


class Unavailable(GotensorError, ConnectionError):
    """The store cannot be reached (I/O error, dead server, locked directory)."""

    kind = "Unavailable"


class Unauthorized(GotensorError, PermissionError):
    """The store refused the credentials."""

    kind = "Unauthorized"


class Timeout(GotensorError, TimeoutError):
    """The operation did not finish in time."""

    kind = "Timeout"


class Unsupported(GotensorError):
    """The operation or format is not supported by this build."""

    kind = "Unsupported"


_BY_KIND: dict[str, type[GotensorError]] = {
    cls.kind: cls
    for cls in (InvalidArgument, KeyNotFound, CorruptData, StoreFull, StoreClosed,
                Unavailable, Unauthorized, Timeout, Unsupported)
}
_BY_KIND["Internal"] = InternalError


def from_fields(kind: str, message: str, key: str | None = None) -> GotensorError:
    """The exception for an error of the given kind (Go's errs.Kind name;
    an unknown kind is Internal), message and key ("" or None: none)."""
    exc = _BY_KIND.get(kind, InternalError)(message)
    exc.key = key or None
    return exc


def from_message(message: str) -> GotensorError:
    """The exception for error text "Kind: message" that exists only as text
    (a node's log line, a C program's gt_last_error); "Kind: " is dropped, as
    the class names the kind. Text without a known kind is Internal. Native
    calls never come through here: their errors arrive as fields."""
    kind, sep, rest = message.partition(": ")
    if sep and kind in _BY_KIND:
        return from_fields(kind, rest)
    return from_fields("Internal", message)


def last_error(text: str = "") -> GotensorError:
    """The exception for the native call that just failed on this thread
    (its RuntimeError's text is the fallback where the core kept no fields)."""
    from ._native_lib import native
    rec = native.take_error()
    if not rec:
        return InternalError(text)
    f = json.loads(rec)
    return from_fields(f.get("kind", "Internal"), f.get("message", ""), f.get("key"))


def call(fn: Callable[..., _T], *args: Any) -> _T:
    """Call a native function, turning its failure (gopy's RuntimeError)
    into the typed exception of its kind."""
    try:
        return fn(*args)
    except RuntimeError as e:
        raise last_error(str(e)) from None
