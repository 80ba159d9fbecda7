"""The measured server: gunicorn production-style, one sync worker per core.

`GunicornServer` is a context manager: it picks a free loopback port, starts
`gunicorn config.wsgi:application`, waits for `/health`, and on exit (normal, error or
Ctrl-C) stops the master and its workers, escalating to SIGKILL if they linger.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from .env import ROOT, WORK_DIR


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class ServerError(RuntimeError):
    pass


class GunicornServer:
    def __init__(self, *, env: dict[str, str], workers: int, startup_timeout: float = 60.0):
        self.env = env
        self.workers = workers
        self.startup_timeout = startup_timeout
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.log_path: Path = WORK_DIR / "gunicorn.log"
        self.process: subprocess.Popen | None = None

    @property
    def command(self) -> list[str]:
        gunicorn = Path(sys.executable).with_name("gunicorn")
        return [
            str(gunicorn) if gunicorn.exists() else "gunicorn",
            "config.wsgi:application",
            "-w", str(self.workers),
            "--bind", f"127.0.0.1:{self.port}",
            "--error-logfile", str(self.log_path),
            "--log-level", "warning",
            # No --access-logfile: gunicorn writes no access log unless asked.
        ]

    def __enter__(self) -> GunicornServer:
        WORK_DIR.mkdir(parents=True, exist_ok=True)
        self.log_path.write_text("")
        self.process = subprocess.Popen(  # noqa: S603 - fixed argv
            self.command,
            cwd=ROOT,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # its own process group: stopped as one
        )
        try:
            self._wait_healthy()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc_info) -> None:
        self.stop()

    def _wait_healthy(self) -> None:
        deadline = time.monotonic() + self.startup_timeout
        last_error = ""
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise ServerError(
                    f"gunicorn exited with {self.process.returncode} before answering /health;"
                    f" its log:\n{self.log_tail()}"
                )
            try:
                with urllib.request.urlopen(f"{self.base_url}/health", timeout=2) as response:  # noqa: S310
                    if response.status == 200:
                        return
            except (urllib.error.URLError, OSError) as exc:
                last_error = str(exc)
            time.sleep(0.2)
        raise ServerError(
            f"gunicorn did not answer /health within {self.startup_timeout:.0f}s ({last_error});"
            f" its log:\n{self.log_tail()}"
        )

    def log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log_path.read_text().splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        try:
            pgid = os.getpgid(process.pid)
        except ProcessLookupError:
            return
        # Only this server's own process group (it was started in a new session).
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
