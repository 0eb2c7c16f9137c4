"""Futures for asynchronous calls.

Go runs each operation on a goroutine with the GIL released and queues its
result; one Python thread waits in Go for results and completes futures.
Go never calls into Python (that crashes under gopy)."""

from __future__ import annotations

import threading
from concurrent.futures import Future

from . import errors
from ._native_lib import native

_FS, _RS = "\x1f", "\x1e"


class _Completer:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pending: dict[int, tuple[Future, object, object]] = {}
        self._thread: threading.Thread | None = None

    def submit(self, start, keep, on_done, future: Future | None = None) -> Future:
        """Start an operation: start() returns its id; keep is held until it
        finishes; on_done(payload, future) completes the future (or chains
        another operation onto it)."""
        fut = future or Future()
        if future is None:
            fut.set_running_or_notify_cancel()
        with self._lock:  # held so the result cannot be seen before it is registered
            op = errors.call(start)
            self._pending[op] = (fut, keep, on_done)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="gotensor-completer", daemon=True)
                self._thread.start()
        return fut

    def _run(self) -> None:
        while True:
            recs = native.completions(200)
            if not recs:
                continue
            for rec in recs.split(_RS):
                op, kind, payload = rec.split(_FS, 2)
                with self._lock:
                    fut, keep, on_done = self._pending.pop(int(op))
                try:
                    if kind:
                        fut.set_exception(errors.from_kind(kind, payload))
                    else:
                        on_done(payload, fut)
                except BaseException as e:  # never let the thread die
                    if not fut.done():
                        fut.set_exception(e)
                del keep


completer = _Completer()
