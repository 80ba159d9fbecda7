"""Real `celery -A config worker` processes for the reliability tests (kill -9, takeover).

Each runs in its own process group (so a kill reaches its pool and embedded beat), on the
calling test's PostgreSQL database and a Redis broker database of the tests' own,
consuming one queue named by the test, so its tasks never meet anyone else's. Its output
goes to a log file under the test's tmp_path.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from django.conf import settings
from django.db import connection

ROOT = Path(__file__).resolve().parents[1]


def database_url() -> str:
    """The URL of the test database this process uses (the worker must use the same)."""
    s = connection.settings_dict
    auth = s["USER"] + (f":{s['PASSWORD']}" if s.get("PASSWORD") else "")
    return f"postgres://{auth}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{s['NAME']}"


class WorkerProcess:
    def __init__(self, name: str, queue: str, tmp_path: Path, *, broker: str,
                 settings_module: str, env: dict[str, str | None], beat: bool,
                 pool: tuple[str, ...] = ("--pool=solo",), loglevel: str = "INFO") -> None:
        self.log = tmp_path / f"{name}.log"
        environ = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": settings_module,
            "DATABASE_URL": database_url(),
            "CELERY_BROKER_URL": broker,
            "VAR_DIR": str(tmp_path / "var"),
            # The same keys as this process, so both read the encrypted secrets.
            "FIELD_ENCRYPTION_KEY": ",".join(settings.FIELD_ENCRYPTION_KEYS),
            "SECRET_KEY": settings.SECRET_KEY,
            "PYTHONPATH": str(ROOT),
        }
        for key, value in env.items():  # None: not inherited from this process either
            if value is None:
                environ.pop(key, None)
            else:
                environ[key] = value
        command = [sys.executable, "-m", "celery", "-A", "config", "worker", *pool,
                   "-Q", queue, "-n", f"{name}-{queue}@%h", f"--loglevel={loglevel}",
                   "--without-mingle", "--without-gossip", "--without-heartbeat"]
        if beat:
            command += ["-B", "--schedule", str(tmp_path / f"{name}-beat")]
        self.process = subprocess.Popen(  # noqa: S603 - fixed argv
            command, cwd=ROOT, env=environ, stdout=self.log.open("wb"),
            stderr=subprocess.STDOUT, start_new_session=True,
        )

    def text(self) -> str:
        return self.log.read_text(errors="replace")[-6000:]

    def wait_ready(self, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if b" ready." in self.log.read_bytes():
                return
            assert self.process.poll() is None, self.text()
            time.sleep(0.1)
        raise AssertionError(f"worker not ready:\n{self.text()}")

    def kill(self, sig: int = signal.SIGKILL) -> None:
        """Signal the worker's own process group: the worker, its pool and its beat."""
        try:
            os.killpg(self.process.pid, sig)
        except ProcessLookupError:
            return
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=20)
        deadline = time.monotonic() + 10  # the rest of the group (the beat) gone too
        while time.monotonic() < deadline:
            try:
                os.killpg(self.process.pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.1)
        os.killpg(self.process.pid, signal.SIGKILL)
