"""With no variable set the platform boots on its embedded default and answers requests."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _embedded_env(var_dir: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(
            (
                "DATABASE_URL",
                "REDIS_URL",
                "CELERY_",
                "CACHE_KEY_PREFIX",
                "PYTEST_",
                "SECRET_KEY",
                "FIELD_ENCRYPTION_KEY",
            )
        )
    }
    env.update(DJANGO_SETTINGS_MODULE="config.settings.base", VAR_DIR=str(var_dir))
    return env


def _manage(env, *args) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def test_boots_on_sqlite_and_answers_an_authenticated_request(tmp_path):
    env = _embedded_env(tmp_path)
    migrate = _manage(env, "migrate", "--noinput")
    assert migrate.returncode == 0, migrate.stderr
    assert (tmp_path / "platform.sqlite3").exists()
    created = _manage(
        env,
        "create_org",
        "--name",
        "Embedded",
        "--slug",
        "embedded",
        "--owner-email",
        "e@example.com",
        "--sandbox",
        "--json",
    )
    assert created.returncode == 0, created.stderr
    org = json.loads(created.stdout)
    assert org["api_key"].startswith("svc_test_sk_")
    assert (tmp_path / ".secret_key").exists()  # generated once into var/

    port = _free_port()
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "daphne",
            "-b",
            "127.0.0.1",
            "-p",
            str(port),
            "config.asgi:application",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.time() + 30
        while True:
            try:
                if httpx.get(f"{base}/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.time() < deadline, "embedded server did not start"
            time.sleep(0.2)
        response = httpx.get(
            f"{base}/api/v1/organization", headers={"X-API-Key": org["api_key"]}, timeout=5
        )
        assert response.status_code == 200
        assert response.json()["data"]["slug"] == "embedded"
        ready = httpx.get(f"{base}/ready", timeout=5).json()["data"]
        assert ready["checks"] == {"database": "ok", "cache": "ok", "broker": "ok"}
        _send_link_and_opt_out_on_sqlite(base, {"X-API-Key": org["api_key"]})
    finally:
        server.terminate()
        server.wait(timeout=10)


def _send_link_and_opt_out_on_sqlite(base: str, headers: dict[str, str]) -> None:
    """The accepting INSERT (messaging/acceptance.py: opt-out check and contact lookup in
    one statement) runs on SQLite too."""
    user, business = "+14155550142", "+14155550100"
    contact = httpx.post(f"{base}/api/v1/contacts", json={"phone": user}, headers=headers,
                         timeout=5)
    assert contact.status_code == 201, contact.text
    sent = httpx.post(f"{base}/api/v1/messages", headers=headers, timeout=5,
                      json={"channel": "sms", "to": user, "from": business, "body": "hi"})
    assert sent.status_code == 202, sent.text
    assert sent.json()["data"]["contact_id"] == contact.json()["data"]["id"]
    stop = httpx.post(f"{base}/api/v1/sandbox/inbound", headers=headers, timeout=5,
                      json={"channel": "sms", "from": user, "to": business, "body": "STOP"})
    assert stop.status_code == 201, stop.text
    refused = httpx.post(f"{base}/api/v1/messages", headers=headers, timeout=5,
                         json={"channel": "sms", "to": user, "from": business, "body": "sale"})
    assert refused.status_code == 422, refused.text
    assert refused.json()["error"]["code"] == "RECIPIENT_OPTED_OUT"
    listed = httpx.get(f"{base}/api/v1/messages?direction=outbound", headers=headers, timeout=5)
    assert [m["body"] for m in listed.json()["data"]] == ["hi"]  # the refused send: no row
