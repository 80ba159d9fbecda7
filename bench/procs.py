"""The subprocesses of the event scenarios: a Celery worker, daphne, the receiver, the SSE load.

Each is a context manager around `ManagedProcess`: started in a session of its own (so it
and anything it forks are stopped as one process group), asked to die with the harness
(PR_SET_PDEATHSIG, so even a SIGKILLed harness leaves nothing behind), and stopped on exit
— normal, error or Ctrl-C — with SIGTERM, then SIGKILL if it lingers. Only these groups are
ever signalled.

The Celery broker is a Redis database of the benchmark's own (env.DEFAULT_BROKER_URL);
`clean_broker` deletes the Celery/kombu keys in it (never FLUSHDB), and
`clean_channel_groups` the channel layer's keys under this benchmark's prefix, so a stream
group left over by an interrupted run does not make every fan-out write to dead channels.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlparse

from config.queues import ALL as QUEUES

from .env import ROOT, WORK_DIR
from .server import ServerError, free_port

_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:  # runs in the child between fork and exec
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    except OSError:  # not glibc Linux: the harness's `finally` still stops it
        pass


def _venv_bin(name: str) -> str:
    path = Path(sys.executable).with_name(name)
    return str(path) if path.exists() else name


class ManagedProcess:
    """One subprocess in its own process group, stopped as a group."""

    label = "process"

    def __init__(self, command: list[str], *, env: dict[str, str], log_name: str,
                 stdin=subprocess.DEVNULL, stdout=None):
        self.command = command
        self.env = env
        self.log_path = WORK_DIR / log_name
        self.process: subprocess.Popen | None = None
        self._stdin = stdin
        self._stdout = stdout

    def start(self) -> None:
        WORK_DIR.mkdir(parents=True, exist_ok=True)
        log = open(self.log_path, "wb")  # noqa: SIM115 - handed to the child
        try:
            self.process = subprocess.Popen(  # noqa: S603 - fixed argv
                self.command,
                cwd=ROOT,
                env=self.env,
                stdin=self._stdin,
                stdout=self._stdout if self._stdout is not None else log,
                stderr=log,
                start_new_session=True,
                bufsize=0,  # unbuffered pipes: select() on stdout sees every line
                preexec_fn=_die_with_parent,  # noqa: PLW1509 - no threads started yet matter
            )
        finally:
            log.close()

    def __enter__(self):
        self.start()
        try:
            self.wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc_info) -> None:
        self.stop()

    def wait_ready(self) -> None:
        """Block until the process can serve; raise ServerError otherwise."""

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def check_alive(self) -> None:
        if self.process is not None and self.process.poll() is not None:
            raise ServerError(f"{self.label} exited with {self.process.returncode};"
                              f" its log:\n{self.log_tail()}")

    def log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is None:
            return
        for stream in (process.stdin, process.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        if process.poll() is not None:
            return
        try:
            pgid = os.getpgid(process.pid)
        except ProcessLookupError:
            return
        for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, 5)):
            try:
                os.killpg(pgid, sig)
            except ProcessLookupError:
                return
            try:
                process.wait(timeout=wait)
                return
            except subprocess.TimeoutExpired:
                continue


def wait_until(predicate: Callable[[], bool], *, timeout: float, what: str,
               watch: list[ManagedProcess] = (), interval: float = 0.05) -> None:
    """Poll `predicate` until true; ServerError after `timeout` or when a watched process dies."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for proc in watch:
            proc.check_alive()
        if predicate():
            return
        time.sleep(interval)
    raise ServerError(f"timed out after {timeout:.0f}s waiting for {what}")


# --- Celery ------------------------------------------------------------------------------


class CeleryWorker(ManagedProcess):
    """`celery -A config worker`: by default one execution slot (solo pool: one process);
    `pool="prefork", concurrency=2` for two child processes."""

    label = "the Celery worker"

    def __init__(self, *, env: dict[str, str], pool: str = "solo", concurrency: int = 1,
                 queues: tuple[str, ...] = ()):
        name = "-".join(queues) or "default"
        command = [
            _venv_bin("celery"), "-A", "config", "worker",
            f"--pool={pool}", f"--concurrency={concurrency}",
            "--loglevel=WARNING", "--without-heartbeat", "--without-gossip",
            "--without-mingle", "-n", f"bench-{name}-{os.getpid()}@%h",
        ]
        if queues:  # one worker per queue family (config/queues.py), as in production
            command += ["-Q", ",".join(queues)]
        super().__init__(command, env=env, log_name=f"celery-worker-{name}.log")


def _redis_client(url: str):
    import redis

    return redis.Redis.from_url(url, socket_timeout=5, socket_connect_timeout=2)


def check_broker(url: str) -> None:
    if urlparse(url).scheme not in ("redis", "rediss"):
        raise ServerError(f"the event scenarios need a Redis broker, got {url!r}")
    try:
        _redis_client(url).ping()
    except Exception as exc:  # any client error: unusable
        raise ServerError(f"the Celery broker is unreachable at {url}: {exc}") from None


# What Celery's Redis transport creates: the family queues (config/queues.py), their
# bindings, the unacked set, pidbox and event queues (gossip/mingle/events are off, but be
# thorough).
_BROKER_PATTERNS = ("celery*", *QUEUES, "_kombu.*", "unacked*", "*.reply.celery.pidbox")


def clean_broker(url: str) -> int:
    """Delete the Celery keys of the benchmark's broker database (never FLUSHDB)."""
    client = _redis_client(url)
    deleted = 0
    for pattern in _BROKER_PATTERNS:
        keys = list(client.scan_iter(match=pattern, count=500))
        if keys:
            deleted += client.delete(*keys)
    return deleted


def clean_channel_groups() -> int:
    """Delete the channel layer's keys under this benchmark's prefix (its Redis only)."""
    from django.conf import settings

    layer = settings.CHANNEL_LAYERS.get("default", {})
    if "redis" not in layer.get("BACKEND", "").lower():
        return 0
    config = layer.get("CONFIG", {})
    prefix = config.get("prefix", "asgi")
    client = _redis_client(settings.REDIS_URL)
    keys = list(client.scan_iter(match=f"{prefix}:group:*", count=500))
    return client.delete(*keys) if keys else 0


# --- daphne ------------------------------------------------------------------------------


class Daphne(ManagedProcess):
    """daphne serving config.asgi:application on a free loopback port."""

    label = "daphne"

    def __init__(self, *, env: dict[str, str], startup_timeout: float = 60.0):
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.startup_timeout = startup_timeout
        command = [_venv_bin("daphne"), "-b", "127.0.0.1", "-p", str(self.port),
                   "-v", "1", "config.asgi:application"]
        super().__init__(command, env=env, log_name="daphne.log")

    def wait_ready(self) -> None:
        import urllib.error
        import urllib.request

        def healthy() -> bool:
            try:
                with urllib.request.urlopen(f"{self.base_url}/health", timeout=2) as r:  # noqa: S310
                    return r.status == 200
            except (urllib.error.URLError, OSError):
                return False

        wait_until(healthy, timeout=self.startup_timeout, what="daphne to answer /health",
                   watch=[self], interval=0.2)


# --- Child processes of this package (python -m bench.<module>) -----------------------


class LineProcess(ManagedProcess):
    """A `python -m bench.<module>` child that talks in lines on stdin/stdout."""

    def __init__(self, module: str, args: list[str], *, env: dict[str, str], log_name: str):
        super().__init__([sys.executable, "-m", module, *args], env=env, log_name=log_name,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def read_line(self, *, timeout: float, required: bool = True) -> str | None:
        """The next stdout line; on timeout ServerError, or None when not `required`.

        ServerError too when the child exits."""
        import select

        if self.process is None or self.process.stdout is None:
            raise ServerError(f"{self.label} is not running")
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                if not required:
                    return None
                raise ServerError(f"{self.label} said nothing for {timeout:.0f}s;"
                                  f" its log:\n{self.log_tail()}")
            ready, _, _ = select.select([self.process.stdout], [], [], min(left, 0.5))
            if ready:
                line = self.process.stdout.readline()
                if not line:
                    self.process.wait(timeout=5)
                    raise ServerError(f"{self.label} exited ({self.process.returncode});"
                                      f" its log:\n{self.log_tail()}")
                return line.decode().strip()

    def send_line(self, text: str) -> None:
        if self.process is None or self.process.stdin is None:
            raise ServerError(f"{self.label} is not running")
        self.process.stdin.write(text.encode() + b"\n")
        self.process.stdin.flush()


class Receiver(LineProcess):
    """The fast webhook receiver (bench/receiver.py) on a free loopback port."""

    label = "the webhook receiver"

    def __init__(self, *, env: dict[str, str], delay: float = 0.0, name: str = "receiver"):
        args = ["--delay", str(delay)] if delay else []
        super().__init__("bench.receiver", args, env=env, log_name=f"{name}.log")
        self.port = 0

    def wait_ready(self) -> None:
        line = self.read_line(timeout=20)
        if not line.startswith("PORT "):
            raise ServerError(f"the receiver said {line!r}, expected its port")
        self.port = int(line.split()[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

    def _get(self, path: str):
        import json
        import urllib.request

        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=30) as r:  # noqa: S310
            return json.loads(r.read())

    def count(self) -> int:
        return int(self._get("/count")["count"])

    def records(self) -> list[dict]:
        """[{"t": arrival (CLOCK_MONOTONIC), "id": event id, "run", "sent"}], in arrival order."""
        return self._get("/records")["records"]
