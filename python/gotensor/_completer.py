"""Futures for asynchronous calls.

Go runs each operation on a goroutine with the GIL released and queues its
result; one Python thread waits in Go for results and completes futures.
Go never calls into Python (that crashes under gopy). Results arrive as
JSON records ({"op", "value"}, and for a failed operation its error's
"kind", "key" and "message"), which no key or error text can break."""

from __future__ import annotations

import array
import json
import threading
from concurrent.futures import Future
from concurrent.futures._base import CANCELLED, CANCELLED_AND_NOTIFIED, RUNNING
from concurrent.futures import wait as futures_wait
from typing import Any, Callable, Iterable

from . import errors
from ._native_lib import native


class OpFuture(Future[Any]):
    """A future for a Go operation. cancel() stops a running operation too,
    as long as it has not changed the store yet: then it returns True, the
    future is cancelled (``cancelled()``; ``result()`` raises
    CancelledError) and the operation changes nothing. Once a write or
    delete has reached the store, or any operation has finished, it returns
    False and the result stands."""

    _op = 0

    def cancel(self) -> bool:
        """Cancel the future, or the Go operation behind it while it runs.
        Returns whether it was cancelled (see the class)."""
        if super().cancel():
            return True
        op = self._op
        if not op or self.done() or not native.cancel(op):
            return False
        with self._condition:  # running, and Go agreed: as concurrent.futures cancels a pending future
            if self._state != RUNNING:
                return self._state in (CANCELLED, CANCELLED_AND_NOTIFIED)
            self._state = CANCELLED_AND_NOTIFIED
            self._condition.notify_all()
        self._invoke_callbacks()
        return True


class _Completer:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pending: dict[int, tuple[Future[Any], object, Callable[[Any, Future[Any]], None]]] = {}
        self._thread: threading.Thread | None = None

    def submit(self, start: Callable[[], int], keep: object, on_done: Callable[[Any, Future[Any]], None],
               future: Future[Any] | None = None) -> Future[Any]:
        """Start an operation: start() returns its id; keep is held until it
        finishes; on_done(value, future) completes the future (or chains
        another operation onto it)."""
        fut = future or OpFuture()
        if future is None:
            fut.set_running_or_notify_cancel()
        with self._lock:  # held so the result cannot be seen before it is registered
            op = errors.call(start)
            self._pending[op] = (fut, keep, on_done)
            fut._op = op  # type: ignore[attr-defined]
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="gotensor-completer", daemon=True)
                self._thread.start()
        return fut

    def hold(self, fut: Future[Any]) -> bool:
        """Keep the completion of fut's operation (of submit()) for wait()
        (Go's Hold): the completer thread is not woken for it, and wait()
        takes it whenever it finished. Only for a future that wait() will be
        given: nothing else completes it. False where the operation had
        finished already (the completer thread completes it, as without)."""
        op = getattr(fut, "_op", 0)
        return bool(op) and not fut.done() and native.hold(op)

    def wait(self, futures: Iterable[OpFuture]) -> None:
        """Wait until futures (of submit()) are done. This thread waits in Go
        for their operations and completes them itself (Go's Claim), so Go
        wakes it directly rather than through the completer thread; only
        those the completer thread has taken already are left to it."""
        pending = [f for f in futures if not f.done()]
        while pending:
            ops = array.array("q", (f._op for f in pending))
            recs = native.claim_ops(ops.buffer_info()[0], len(ops))
            if recs:
                for rec in json.loads(recs):
                    self._complete(rec)
            chained = []
            for f, op in zip(pending, ops):
                if f.done():
                    continue
                if f._op != op:  # on_done started the next operation of the chain
                    chained.append(f)
                else:  # the completer thread took it and is completing it
                    futures_wait([f])
            pending = chained

    def _drain(self, timeout_ms: int) -> None:
        recs = native.completions(timeout_ms)
        if recs:
            for rec in json.loads(recs):
                self._complete(rec)

    def _run(self) -> None:
        while True:
            try:
                self._drain(200)
            except BaseException:  # noqa: BLE001 - never let the thread die; each record is guarded below
                pass

    def _complete(self, rec: dict[str, Any]) -> None:
        with self._lock:
            entry = self._pending.pop(rec.get("op", 0), None)
        if entry is None:
            return
        fut, keep, on_done = entry
        try:
            if fut.done():  # cancelled while Go still held its memory
                return
            kind = rec.get("kind")
            if kind:
                fut.set_exception(errors.from_fields(kind, rec.get("message", ""), rec.get("key")))
            else:
                on_done(rec.get("value", 0), fut)
        except BaseException as e:  # noqa: BLE001 - reported through the future
            if not fut.done():
                fut.set_exception(e)
        finally:
            del keep


completer = _Completer()
