"""wrk: installing it from Debian's packages when missing, running it, reading its result.

Each run gets a generated Lua script that sets the method, headers and body, and whose
`done()` prints one machine-readable line (`BENCH_RESULT {...}`) with exact percentiles,
so nothing depends on the layout of wrk's human summary.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .env import WORK_DIR

RESULT_MARK = "BENCH_RESULT "


class WrkMissing(RuntimeError):
    pass


def ensure_wrk() -> str:
    """The path of wrk, installing Debian's package when it is missing and we are root."""
    found = shutil.which("wrk")
    if found:
        return found
    if shutil.which("apt-get") and hasattr(os, "geteuid") and os.geteuid() == 0:
        print("wrk is missing: installing it from Debian's packages…", flush=True)
        result = subprocess.run(  # noqa: S602 - fixed command line
            "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk",
            shell=True, capture_output=True, text=True, check=False,
        )
        found = shutil.which("wrk")
        if found:
            return found
        raise WrkMissing(
            "could not install wrk with apt-get (exit "
            f"{result.returncode}):\n{result.stderr.strip()[-2000:]}"
        )
    raise WrkMissing(
        "wrk is not installed and cannot be installed here (needs root and apt-get). "
        "Install it with `sudo apt-get install wrk` (Debian/Ubuntu) and run again."
    )


@dataclass(frozen=True)
class WrkResult:
    requests: int
    duration_s: float
    p50_ms: float
    p90_ms: float
    p99_ms: float
    max_ms: float
    socket_errors: int
    status_errors: int
    timeouts: int

    @property
    def requests_per_second(self) -> float:
        return self.requests / self.duration_s if self.duration_s else 0.0


def _lua_string(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def lua_script(*, method: str, headers: dict[str, str], body: str | None,
               extra_lua: str | None = None) -> str:
    """The script of one run; `extra_lua` may define wrk's `setup`/`init`/`request` hooks
    (e.g. a `request` building a different body each time)."""
    lines = [f"wrk.method = {_lua_string(method)}"]
    for name, value in headers.items():
        lines.append(f"wrk.headers[{_lua_string(name)}] = {_lua_string(value)}")
    if body is not None:
        lines.append(f"wrk.body = {_lua_string(body)}")
    if extra_lua:
        lines.append(extra_lua)
    lines.append(
        """
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '%s{"requests": %.0f, "duration_us": %.0f, "p50_us": %.1f, "p90_us": %.1f, '
    .. '"p99_us": %.1f, "max_us": %.1f, "connect": %.0f, "read": %.0f, "write": %.0f, '
    .. '"status": %.0f, "timeout": %.0f}\\n',
    '""" + RESULT_MARK + """', summary.requests, summary.duration,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max,
    e.connect, e.read, e.write, e.status, e.timeout))
end
"""
    )
    return "\n".join(lines)


def parse(stdout: str) -> WrkResult:
    for line in stdout.splitlines():
        if line.startswith(RESULT_MARK):
            raw = json.loads(line[len(RESULT_MARK):])
            return WrkResult(
                requests=int(raw["requests"]),
                duration_s=raw["duration_us"] / 1e6,
                p50_ms=raw["p50_us"] / 1000,
                p90_ms=raw["p90_us"] / 1000,
                p99_ms=raw["p99_us"] / 1000,
                max_ms=raw["max_us"] / 1000,
                socket_errors=int(raw["connect"] + raw["read"] + raw["write"]),
                status_errors=int(raw["status"]),
                timeouts=int(raw["timeout"]),
            )
    raise RuntimeError(f"wrk printed no result line; its output:\n{stdout[-2000:]}")


def run(
    url: str,
    *,
    seconds: int,
    threads: int,
    connections: int,
    method: str = "GET",
    headers: dict[str, str] | None = None,
    body: str | None = None,
    name: str = "scenario",
    extra_lua: str | None = None,
) -> WrkResult:
    WORK_DIR.mkdir(parents=True, exist_ok=True)
    script = Path(WORK_DIR / f"wrk-{name}.lua")
    script.write_text(lua_script(method=method, headers=headers or {}, body=body,
                                 extra_lua=extra_lua))
    script.chmod(0o600)  # it may hold an API key
    command = [
        ensure_wrk(), f"-t{threads}", f"-c{max(connections, threads)}", f"-d{seconds}s",
        "--latency", "--timeout", "10s", "-s", str(script), url,
    ]
    completed = subprocess.run(  # noqa: S603 - fixed argv
        command, capture_output=True, text=True, timeout=seconds + 60, check=False
    )
    if completed.returncode != 0:
        raise RuntimeError(f"wrk failed ({completed.returncode}): {completed.stderr.strip()}")
    return parse(completed.stdout)
