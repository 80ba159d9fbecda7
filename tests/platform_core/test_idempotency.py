"""`Idempotency-Key` on creating POSTs (0-conventions.md section 6)."""

from __future__ import annotations

from datetime import timedelta

import time_machine
from django.test import override_settings
from django.utils import timezone

from platform_core.api.models import IdempotencyRecord
from platform_core.identity.models import APIKey

BODY = {"name": "ci key", "scopes": ["contacts:read"]}


def _create(client, key="idem-123", body=BODY):
    return client.post("/api/v1/api-keys", body, format="json", HTTP_IDEMPOTENCY_KEY=key)


def _count(tenant) -> int:
    return APIKey.objects.for_organization(tenant.org).count()


def test_same_key_same_body_replays_first_answer(tenant):
    client = tenant.client()
    before = _count(tenant)
    first = _create(client)
    second = _create(client)
    assert first.status_code == second.status_code == 201
    assert second.content == first.content  # byte for byte, same id and same one-time key
    assert second["Idempotent-Replayed"] == "true"
    assert not first.has_header("Idempotent-Replayed")
    assert _count(tenant) == before + 1


def test_same_key_different_body_is_409(tenant):
    client = tenant.client()
    _create(client)
    response = _create(client, body={**BODY, "name": "another"})
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "IDEMPOTENCY_CONFLICT"


def test_keys_are_scoped_per_organization(tenant, other_tenant):
    first = _create(tenant.client())
    other = _create(other_tenant.client())
    assert other.status_code == 201
    assert other.json()["data"]["id"] != first.json()["data"]["id"]


def test_without_header_each_post_creates(tenant):
    client = tenant.client()
    before = _count(tenant)
    client.post("/api/v1/api-keys", BODY, format="json")
    client.post("/api/v1/api-keys", BODY, format="json")
    assert _count(tenant) == before + 2


def test_window_is_24_hours(tenant):
    client = tenant.client()
    first = _create(client)
    with time_machine.travel(timezone.now() + timedelta(hours=25)):
        again = _create(client)
    assert again.status_code == 201
    assert again.json()["data"]["id"] != first.json()["data"]["id"]


def test_stored_answer_is_encrypted_at_rest(tenant):
    raw_key = _create(tenant.client()).json()["data"]["key"]
    record = IdempotencyRecord.objects.for_organization(tenant.org).get(key="idem-123")
    assert raw_key.encode() not in bytes(record.body)


def test_validation_errors_replay_too(tenant):
    client = tenant.client()
    first = _create(client, key="bad-1", body={"name": "x"})
    assert first.status_code == 422
    assert _create(client, key="bad-1", body={"name": "x"}).content == first.content


@override_settings(ROOT_URLCONF="tests.platform_core.crash_urls")
def test_server_errors_are_not_kept(tenant):
    client = tenant.client()
    response = client.post("/test/failing-create", {}, format="json", HTTP_IDEMPOTENCY_KEY="k5")
    assert response.status_code == 500
    assert not IdempotencyRecord.objects.for_organization(tenant.org).filter(key="k5").exists()


def test_overlong_key_is_refused(tenant):
    response = _create(tenant.client(), key="k" * 300)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "VALIDATION_ERROR"
