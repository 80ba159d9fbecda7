"""The process-local copy of credential snapshots and leased rate counting.

A steady stream of requests on one key reads neither PostgreSQL nor Redis for its
credential, yet a revocation made by another process refuses the key on the next request
here, and the standard bucket still refuses exactly at its limit.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis.connection
import time_machine
from django.conf import settings
from django.db import connection
from django.test import override_settings

from platform_core.identity import local_snapshots

ROOT = Path(__file__).resolve().parents[3]


class _RedisCommands:
    """Counts the command batches this process sends to Redis (any client, any pool)."""

    def __init__(self, monkeypatch) -> None:
        self.count = 0
        original = redis.connection.AbstractConnection.send_packed_command

        def counted(conn, command, check_health=True):
            self.count += 1
            return original(conn, command, check_health)

        monkeypatch.setattr(redis.connection.AbstractConnection, "send_packed_command", counted)


def _wait_for_listener() -> None:
    deadline = time.monotonic() + 5
    while not local_snapshots._subscribed:
        assert time.monotonic() < deadline, "the invalidation listener never subscribed"
        time.sleep(0.01)


def test_steady_state_requests_read_neither_database_nor_redis(
    tenant, monkeypatch, django_assert_num_queries
):
    client = tenant.client()
    assert client.get("/api/v1/organization").status_code == 200
    _wait_for_listener()
    client.get("/api/v1/organization")  # now copied into the process
    commands = _RedisCommands(monkeypatch)
    with django_assert_num_queries(30) as captured:  # the endpoint's own read, nothing else
        for _ in range(30):
            assert client.get("/api/v1/organization").status_code == 200
    assert not [q for q in captured.captured_queries if "apikey" in q["sql"]]
    # Leases double while requests keep coming: 1, 2, 4, 8, 16 ... tokens per round trip.
    assert commands.count <= 6, commands.count


@override_settings(RATE_LIMIT_READ_PER_MINUTE=6400)
def test_leased_counting_keeps_remaining_exact_in_one_process(tenant, monkeypatch):
    client = tenant.client()
    client.get("/api/v1/organization")
    _wait_for_listener()
    commands = _RedisCommands(monkeypatch)
    remaining = [int(client.get("/api/v1/organization")["X-RateLimit-Remaining"])
                 for _ in range(150)]
    assert remaining == list(range(6398, 6398 - 150, -1))
    assert commands.count < 20, commands.count  # not one round trip per request


@override_settings(RATE_LIMIT_READ_PER_MINUTE=640)
def test_a_leased_bucket_still_refuses_exactly_at_its_limit(tenant):
    client = tenant.client()
    with time_machine.travel(time.time(), tick=False):  # all 660 in one window
        statuses = [client.get("/api/v1/organization").status_code for _ in range(660)]
    assert statuses.count(200) == 640
    assert statuses[640:] == [429] * 20


@pytest.mark.django_db(transaction=True)
def test_a_revocation_in_another_process_refuses_the_key_here(tenant):
    client = tenant.client()
    key_id = tenant.key.pk
    _wait_for_listener()
    for _ in range(3):
        assert client.get("/api/v1/organization").status_code == 200
    before = local_snapshots.generation()
    db = connection.settings_dict
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "DATABASE_URL": (f"postgres://{db['USER'] or 'postgres'}@{db['HOST'] or '127.0.0.1'}:"
                         f"{db['PORT'] or 5432}/{db['NAME']}"),
        "TEST_RUN_ID": settings.CACHE_KEY_PREFIX.split(":", 2)[1],
        "PYTEST_XDIST_WORKER": settings.CACHE_KEY_PREFIX.split(":", 2)[2],
    }
    script = (
        "import django; django.setup()\n"
        "from platform_core.identity.models import APIKey\n"
        "from platform_core.identity import services\n"
        f"key = APIKey.objects.dangerously_unscoped().get(pk={key_id!r})\n"
        "services.api_key_revoke(key=key, principal=None)\n"
    )
    result = subprocess.run(  # noqa: S603 - our own interpreter and script
        [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True,
        timeout=60, check=False,
    )
    assert result.returncode == 0, result.stderr
    deadline = time.monotonic() + 5
    while local_snapshots.generation() == before:  # the message crossing processes
        assert time.monotonic() < deadline, "no invalidation reached this process"
        time.sleep(0.005)
    response = client.get("/api/v1/organization")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "INVALID_API_KEY"
