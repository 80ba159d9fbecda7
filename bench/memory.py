"""Resident memory of a process from /proc (Linux): children, VmRSS/VmHWM, a sampler.

`RssSampler` reads /proc/<pid>/status every `interval` seconds in a thread while the
harness does a request, and keeps the highest VmRSS it saw. VmHWM (the kernel's own
high-water mark) is read before and after as a cross-check: it catches a peak between two
samples, but only when the peak exceeds everything the process held before.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path


def children(pid: int) -> list[int]:
    """The direct children of `pid`."""
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found.update(int(c) for c in (task / "children").read_text().split())
        except (OSError, ValueError):
            continue
    if found:
        return sorted(found)
    # Kernels without CONFIG_PROC_CHILDREN: scan every process's parent.
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields and int(fields[1]) == pid:
            found.add(int(stat.parent.name))
    return sorted(found)


def status_kib(pid: int) -> tuple[int, int]:
    """(VmRSS, VmHWM) of `pid` in KiB."""
    rss = hwm = 0
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1])
            elif line.startswith("VmHWM:"):
                hwm = int(line.split()[1])
    return rss, hwm


class RssSampler:
    """Samples one process's VmRSS until stopped; a context manager."""

    def __init__(self, pid: int, *, interval: float = 0.02):
        self.pid = pid
        self.interval = interval
        self.peak_kib = 0
        self.samples = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="rss-sampler", daemon=True)

    def _run(self) -> None:
        while True:
            try:
                rss, _ = status_kib(self.pid)
            except OSError:  # the process is gone
                return
            self.peak_kib = max(self.peak_kib, rss)
            self.samples += 1
            if self._stop.wait(self.interval):
                return

    def __enter__(self) -> RssSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


def settled_rss_kib(pid: int, *, seconds: float = 0.3, interval: float = 0.02) -> int:
    """The median VmRSS over a short quiet period (the baseline before a request)."""
    values = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        values.append(status_kib(pid)[0])
        time.sleep(interval)
    values.sort()
    return values[len(values) // 2]
