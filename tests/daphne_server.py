"""A real daphne server for the tests of what Channels serves (SSE stream, WebSockets).

daphne runs as a subprocess on a free port sharing this test run's database, Redis key
prefix and so its channel layers; tests using it are transactional so daphne sees
committed data.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings
from django.db import connection

ROOT = Path(__file__).resolve().parents[1]
# Startup imports the whole project; on a loaded CI machine that can take tens of seconds.
START_SECONDS = 120


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def running_daphne(logs: Path, *, settings_module: str = "config.settings.test",
                   extra_env: dict[str, str] | None = None,
                   extra_args: tuple[str, ...] = (),
                   self_base_url: bool = False) -> Iterator[int]:
    """Start daphne on a free port, wait until it accepts connections, yield the port.
    `self_base_url`: its PUBLIC_BASE_URL is its own address (links and SAML endpoints it
    builds point back at it, as a deployment's do)."""
    port = free_port()
    db = connection.settings_dict
    _, run, worker = settings.CACHE_KEY_PREFIX.split(":", 2)
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": settings_module,
        "DATABASE_URL": (f"postgres://{db['USER'] or 'postgres'}@{db['HOST'] or '127.0.0.1'}:"
                         f"{db['PORT'] or 5432}/{db['NAME']}"),
        "TEST_RUN_ID": run,
        "PYTEST_XDIST_WORKER": worker,
        **({"PUBLIC_BASE_URL": f"http://127.0.0.1:{port}"} if self_base_url else {}),
        **(extra_env or {}),
    }
    output = (logs / "daphne.out").open("w")
    process = subprocess.Popen(  # noqa: S603
        [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port), *extra_args,
         "config.asgi:application"],
        cwd=ROOT, env=env, stdout=output, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + START_SECONDS
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                output.close()
                raise RuntimeError((logs / "daphne.out").read_text()) from None
            time.sleep(0.1)
    try:
        yield port
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        output.close()
