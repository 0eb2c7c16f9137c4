"""gotensor's exception hierarchy.

The Go core classifies every error; its kind arrives as the message prefix
("KeyNotFound: key 'x' not found in mem://") and selects the class here.
"""

from __future__ import annotations

import re
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


def from_kind(kind: str, message: str) -> GotensorError:
    """The exception for an error of the given kind. The class names the
    kind, so a "Kind: " prefix of the Go message is dropped (a traceback
    would otherwise read "InvalidArgument: InvalidArgument: ...")."""
    prefix = kind + ": "
    if message.startswith(prefix):
        message = message[len(prefix):]
    exc = _BY_KIND.get(kind, InternalError)(message)
    exc.key = key_in(message)
    return exc


# how Go messages name a key: key "..." in Go's %q quoting
_KEY = re.compile(r'\bkey "((?:[^"\\]|\\.)*)"')


def key_in(message: str) -> str | None:
    """The key a Go error message names (``key "..."``), unquoted; None if none."""
    m = _KEY.search(message)
    if m is None:
        return None
    quoted = m.group(1)
    if "\\" not in quoted:
        return quoted
    try:  # Go's escapes (\n, \x1e, \u2028, \") are Python's; other characters pass as they are
        return quoted.encode("latin-1", "backslashreplace").decode("unicode_escape")
    except UnicodeDecodeError:
        return quoted


def from_message(message: str) -> GotensorError:
    """The exception for a Go error message "Kind: text"."""
    kind, sep, _ = message.partition(": ")
    return from_kind(kind if sep else "Internal", message)


def call(fn: Callable[..., _T], *args: Any) -> _T:
    """Call a native function, turning its errors (RuntimeError "Kind: text")
    into the typed exception of their kind."""
    try:
        return fn(*args)
    except RuntimeError as e:
        raise from_message(str(e)) from None
