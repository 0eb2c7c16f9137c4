"""Where a device's keys live, and clearing those of runs that are over.

Every GoTensorDevice keeps its keys under RUNS + <host>-<pid>-<start>.<n>/,
so the keys a crashed run left behind (it never reached close()) can be
told from a live run's.
"""

from __future__ import annotations

import itertools
import os
import socket
import time

import gotensor

RUNS = "flexgen/"
_devices = itertools.count()  # n: devices made in the same millisecond on one store get prefixes of their own


def run_prefix() -> str:
    """A new device's key prefix: this host, this process, now, and a count."""
    return f"{RUNS}{socket.gethostname()}-{os.getpid()}-{time.time_ns() // 1_000_000:x}.{next(_devices)}/"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def clear_runs(url_or_store, *, all_runs: bool = False) -> int:
    """Delete the keys that GoTensorDevices of finished runs left in a store
    (a run that crashed never reached close()). A run is finished when it was
    on this host and its process is gone; all_runs=True clears every run,
    live ones and other hosts' too. Returns how many keys were deleted."""
    store = url_or_store if isinstance(url_or_store, gotensor.Store) else gotensor.open(url_or_store)
    host, n = socket.gethostname(), 0
    try:
        for key in store.keys(RUNS):
            run = key[len(RUNS):].split("/", 1)[0]
            h, _, pid = run.rpartition("-")[0].rpartition("-")
            if not all_runs and (h != host or not pid.isdigit() or _alive(int(pid))):
                continue
            try:
                store.delete(key)
                n += 1
            except gotensor.KeyNotFound:
                pass
    finally:
        if store is not url_or_store:
            store.close()
    return n
