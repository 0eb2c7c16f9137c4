"""A shaped link for benchmarks: a network namespace whose loopback is rate-limited (and delayed).

Needs root (`ip netns`, `tc`). Traffic stays on 127.0.0.1 inside the namespace; the namespace is removed on
exit, on an exception and on SIGTERM/SIGINT.

    with ShapedLink("gtlink", rate="1gbit", delay_us=0) as link:
        subprocess.run(link.exec(["python3", "client.py"]))
"""

from __future__ import annotations

import atexit
import os
import re
import signal
import subprocess

_live: set[str] = set()


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", *args], check=check, capture_output=True, text=True)


def _cleanup() -> None:
    for ns in list(_live):
        _ip("netns", "del", ns, check=False)
        _live.discard(ns)


atexit.register(_cleanup)


def _on_signal(signum, _frame):
    _cleanup()
    raise SystemExit(128 + signum)


def rate_bits(rate: str) -> float:
    """'25gbit' -> 25e9 bits/s (tc's units)."""
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([kmg]?)bit", rate.lower())
    if not m:
        raise ValueError(f"bad rate {rate!r} (want e.g. 1gbit, 500mbit)")
    return float(m.group(1)) * {"": 1, "k": 1e3, "m": 1e6, "g": 1e9}[m.group(2)]


class Unshapeable(RuntimeError):
    """The kernel cannot shape the link as asked (e.g. no netem)."""


class ShapedLink:
    """A namespace with lo up; rate None leaves it unshaped."""

    def __init__(self, name: str, rate: str | None = None, delay_us: int = 0) -> None:
        if os.geteuid() != 0:
            raise PermissionError("a shaped link needs root (ip netns, tc)")
        self.ns = f"{name}{os.getpid()}"
        self.rate, self.delay_us = rate, delay_us

    def __enter__(self) -> "ShapedLink":
        for s in (signal.SIGTERM, signal.SIGINT):
            signal.signal(s, _on_signal)
        _ip("netns", "del", self.ns, check=False)
        _ip("netns", "add", self.ns)
        _live.add(self.ns)
        try:
            self._run("ip", "link", "set", "lo", "up")
            parent = ["root"]
            if self.delay_us:
                try:
                    self._run("tc", "qdisc", "add", "dev", "lo", "root", "handle", "1:", "netem", "delay", f"{self.delay_us}us")
                except subprocess.CalledProcessError as e:
                    raise Unshapeable(f"netem delay is not available here ({e.stderr.strip()})") from None
                parent = ["parent", "1:", "handle", "2:"]
            if self.rate:
                # burst: ~2 ms at the rate, at least 1 MB (smaller bursts starve high rates on lo)
                burst = max(1 << 20, int(rate_bits(self.rate) / 8 * 0.002))
                self._run("tc", "qdisc", "add", "dev", "lo", *parent, "tbf", "rate", self.rate,
                          "burst", str(burst), "latency", "100ms")
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc) -> None:
        _ip("netns", "del", self.ns, check=False)
        _live.discard(self.ns)

    def _run(self, *cmd: str) -> None:
        subprocess.run(["ip", "netns", "exec", self.ns, *cmd], check=True, capture_output=True, text=True)

    def exec(self, cmd: list[str]) -> list[str]:
        """cmd run inside the namespace."""
        return ["ip", "netns", "exec", self.ns, *cmd]

    def label(self) -> str:
        parts = [self.rate or "unshaped"]
        if self.delay_us:
            parts.append(f"+{self.delay_us}us")
        return " ".join(parts)
