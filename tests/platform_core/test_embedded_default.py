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


def _wait_healthy(base: str, seconds: float, why) -> None:
    deadline = time.time() + seconds
    while True:
        try:
            if httpx.get(f"{base}/health", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        assert time.time() < deadline, why()
        time.sleep(0.2)


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
        _wait_healthy(base, 120, lambda: "embedded server did not start")  # a loaded CI machine
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
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


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


class _Receiver:
    """A webhook receiver on loopback: what a newcomer points a webhook at."""

    def __init__(self) -> None:
        import http.server
        import threading

        self.types: list[str] = []
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - the http.server API
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                receiver.types.append(json.loads(body)["type"])
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args):
                return

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()


def test_make_run_delivers_to_a_local_receiver_promptly_and_quietly(tmp_path):
    """`make run`'s Procfile.dev: a webhook to a loopback receiver is accepted (a
    development run), 20 sandbox messages deliver their 60 events within seconds on the
    filesystem broker (it was polled once a second per hop: about a minute), and the worker
    and beat print no line per periodic task."""
    env = _embedded_env(tmp_path)
    assert _manage(env, "migrate", "--noinput").returncode == 0
    created = _manage(env, "demo_setup", "--development-run")
    assert created.returncode == 0, created.stderr
    assert "loopback" in created.stdout
    key = next(w for w in created.stdout.split() if w.startswith("svc_test_sk_"))
    port = _free_port()
    env["PORT"] = str(port)
    log_path = tmp_path / "honcho.log"
    with log_path.open("w") as log:
        honcho = subprocess.Popen(
            [str(Path(sys.executable).with_name("honcho")), "-f", "Procfile.dev", "start"],
            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    receiver = _Receiver()
    try:
        base, headers = f"http://127.0.0.1:{port}", {"X-API-Key": key}
        _wait_healthy(base, 180, lambda: log_path.read_text()[-3000:])
        hook = httpx.post(f"{base}/api/v1/webhooks", headers=headers, timeout=5,
                          json={"url": receiver.url, "events": ["*"]})
        assert hook.status_code == 201, hook.text
        for i in range(20):
            try:
                sent = httpx.post(f"{base}/api/v1/messages", headers=headers, timeout=10, json={
                    "channel": "sms", "to": f"+1415555{1000 + i}", "from": "+14155550100",
                    "body": "hi"})
            except httpx.HTTPError as exc:  # honcho stops every process when one exits
                raise AssertionError(f"{exc}\n{log_path.read_text()[-5000:]}") from exc
            assert sent.status_code == 202, sent.text
        deadline = time.time() + 180  # ~4 s quiet; the margin is for a loaded CI machine
        while sum(t.startswith("message.") for t in receiver.types) < 60:
            assert time.time() < deadline, (receiver.types, log_path.read_text()[-3000:])
            time.sleep(0.1)
        kinds = sorted(t for t in receiver.types if t.startswith("message."))
        assert kinds == sorted(["message.queued", "message.sent", "message.delivered"] * 20)
        time.sleep(6)  # a few periods of the 5 s and 10 s beat jobs
    finally:
        receiver.close()
        os.killpg(honcho.pid, 15)
        try:
            honcho.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(honcho.pid, 9)
            honcho.wait()
    output = log_path.read_text()
    for noise in ("Sending due task", "] received", "succeeded in", "superuser privileges",
                  "No hostname was supplied"):
        assert noise not in output, noise
    assert '"POST /api/v1/messages" 202' in output  # one line per request stays
