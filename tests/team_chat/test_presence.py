"""Presence over HTTP: heartbeat, snapshot, expiry, and degrading open when Redis stops.

The store is a real redis-server started for the test on a free port, so stopping it is
a real outage of the connection."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from datetime import UTC, datetime, timedelta

import pytest
import time_machine

pytestmark = pytest.mark.django_db

BASE = "/api/v1/team-chat/presence"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def own_redis(settings, tmp_path):
    """A redis-server of this test only; the presence store points at it."""
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed")
    port = _free_port()
    process = subprocess.Popen(  # noqa: S603
        ["redis-server", "--port", str(port), "--save", "", "--appendonly", "no",
         "--dir", str(tmp_path)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            if time.monotonic() > deadline:
                process.kill()
                raise
            time.sleep(0.05)
    settings.TEAM_CHAT_PRESENCE_REDIS_URL = f"redis://127.0.0.1:{port}/0"
    try:
        yield process
    finally:
        if process.poll() is None:
            process.terminate()
            process.wait(timeout=10)


def entries(person) -> dict[str, dict]:
    response = person.client.get(BASE)
    assert response.status_code == 200
    return {e["user_id"]: e for e in response.json()["data"]}


def test_heartbeat_and_snapshot(own_redis, alice, bob):
    before = entries(alice)
    assert before[bob.id] == {"user_id": bob.id, "status": "offline", "online": False,
                              "last_seen_at": None}
    beat = bob.client.post(f"{BASE}/heartbeat", {"status": "away"}, format="json")
    assert beat.status_code == 200
    assert (beat.json()["data"]["status"], beat.json()["data"]["online"]) == ("away", True)
    alice.client.post(f"{BASE}/heartbeat", {"status": "online"}, format="json")
    now = entries(alice)
    assert (now[bob.id]["status"], now[bob.id]["online"]) == ("away", True)
    assert now[bob.id]["last_seen_at"] is not None
    assert now[alice.id]["status"] == "online"
    only = alice.client.get(BASE, {"user_ids": bob.id}).json()["data"]
    assert [e["user_id"] for e in only] == [bob.id]


def test_status_must_be_online_or_away(own_redis, alice):
    for body in ({}, {"status": "offline"}, {"status": "busy"}, {"status": None}):
        response = alice.client.post(f"{BASE}/heartbeat", body, format="json")
        assert response.status_code == 422, body
        assert response.json()["error"]["code"] == "VALIDATION_ERROR"


def test_presence_expires_after_a_minute_without_heartbeat(own_redis, alice, bob):
    start = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=1)
    with time_machine.travel(start, tick=False) as traveller:
        bob.client.post(f"{BASE}/heartbeat", {"status": "online"}, format="json")
        traveller.shift(timedelta(seconds=59))
        assert entries(alice)[bob.id]["online"] is True
        traveller.shift(timedelta(seconds=2))
        gone = entries(alice)[bob.id]
    assert (gone["status"], gone["online"]) == ("offline", False)
    assert gone["last_seen_at"] == start.isoformat().replace("+00:00", "Z")


def test_degrades_open_when_redis_stops(own_redis, alice, bob):
    bob.client.post(f"{BASE}/heartbeat", {"status": "online"}, format="json")
    assert entries(alice)[bob.id]["online"] is True
    own_redis.terminate()
    own_redis.wait(timeout=10)
    beat = bob.client.post(f"{BASE}/heartbeat", {"status": "online"}, format="json")
    assert beat.status_code == 200
    assert beat.json()["data"]["degraded"] is True
    snapshot = alice.client.get(BASE)
    assert snapshot.status_code == 200
    assert snapshot.json()["data"] == []
