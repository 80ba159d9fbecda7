"""Seal, verify (with tampering) and the export digest, checked by an independent verifier."""

from __future__ import annotations

import hashlib
import hmac
import json

import pytest
from django.core.files.storage import default_storage

from platform_core.audit.models import AuditLogEntry
from recordings.models import Recording, RecordingSeal
from tests.platform_core.identity.conftest import add_member, session_for

from .conftest import sha, upload

pytestmark = pytest.mark.django_db


def _seal(client, rec, **body):
    return client.post(f"/api/v1/recordings/{rec}/integrity/seal", body, format="json")


def test_unsealed_state_and_digest_refused(tenant):
    client = tenant.client()
    rec = upload(client).json()["data"]["id"]
    state = client.get(f"/api/v1/recordings/{rec}/integrity").json()["data"]
    assert state == {"recording_id": rec, "sealed": False, "seal": None}
    digest = client.get(f"/api/v1/recordings/{rec}/integrity/export-digest")
    assert digest.status_code == 400
    assert digest.json()["error"]["code"] == "RECORDING_INTEGRITY_NOT_SEALED"
    verify = client.get(f"/api/v1/recordings/{rec}/integrity/verify").json()["data"]
    assert verify["sealed"] is False
    assert verify["valid"] is False


def test_seal_chains_and_is_audited(tenant):
    client = tenant.client()
    first, second = (upload(client).json()["data"]["id"] for _ in range(2))
    one = _seal(client, first)
    assert one.status_code == 201, one.content
    one = one.json()["data"]
    assert one["prev_hash"] == "0" * 64
    assert one["content_sha256"] == sha()
    assert one["canonicalization_version"] == "v1"
    two = _seal(client, second).json()["data"]
    assert two["prev_hash"] == one["current_hash"]
    # The documented canonical form, recomputed here.
    canonical = "\n".join([
        "engage-recording-seal/v1", f"organization={tenant.org.pk}", f"recording={second}",
        "sequence=2", f"content_sha256={two['content_sha256']}",
        f"prev_hash={two['prev_hash']}", f"encryption_algorithm={two['encryption_algorithm']}",
        f"kms_provider={two['kms_provider']}",
        f"kms_key_fingerprint={two['kms_key_fingerprint']}",
        "sealed_at=" + two["sealed_at"].replace("Z", "").replace("+00:00", "") + "Z"
        if "." in two["sealed_at"] else "",
    ])
    assert hashlib.sha256(canonical.encode()).hexdigest() == two["current_hash"]
    assert "key_ref" not in json.dumps(two)
    assert AuditLogEntry.objects.filter(action="recording.sealed").count() == 2
    again = _seal(client, first)
    assert again.status_code == 409
    state = client.get(f"/api/v1/recordings/{first}/integrity").json()["data"]
    assert state["sealed"] is True
    assert state["seal"]["current_hash"] == one["current_hash"]


def test_seal_rules(tenant):
    client = tenant.client()
    rec = upload(client).json()["data"]["id"]
    assert _seal(client, rec, content_sha256="abc").status_code == 400
    assert _seal(client, rec, encryption_algorithm="x" * 65).status_code == 400
    developer = session_for(tenant, add_member(tenant, "developer"))
    assert _seal(developer, rec).status_code == 403
    pending = client.post("/api/v1/recordings", {"media_url": "https://10.0.0.1/a.wav",
                                                 "kind": "call"}, format="json")
    missing = _seal(client, pending.json()["data"]["id"])
    assert missing.status_code == 400
    assert missing.json()["error"]["code"] == "RECORDING_INTEGRITY_MISSING_CONTENT_HASH"
    given = _seal(client, pending.json()["data"]["id"], content_sha256="A" * 64)
    assert given.status_code == 201
    assert given.json()["data"]["content_sha256"] == "a" * 64


def test_verify_valid_then_tampered_media(tenant):
    client = tenant.client()
    rec = upload(client).json()["data"]["id"]
    _seal(client, rec)
    result = client.get(f"/api/v1/recordings/{rec}/integrity/verify").json()["data"]
    assert result["valid"] is True
    assert result["reason"] == "ok"
    assert result["current_hash"] == result["expected_hash"]
    name = Recording.objects.dangerously_unscoped().get(pk=rec).storage_name
    with default_storage.open(name, "rb") as handle:
        data = bytearray(handle.read())
    data[5000] ^= 0x01  # one byte
    default_storage.delete(name)
    default_storage.save(name, __import__("io").BytesIO(bytes(data)))
    result = client.get(f"/api/v1/recordings/{rec}/integrity/verify").json()["data"]
    assert result["valid"] is False
    assert result["reason"] == "media_tampered"


def test_verify_detects_an_edited_chain_row(tenant):
    client = tenant.client()
    first, second = (upload(client).json()["data"]["id"] for _ in range(2))
    _seal(client, first)
    _seal(client, second)
    RecordingSeal.objects.dangerously_unscoped().filter(recording_ref=first).update(
        content_sha256="b" * 64)
    result = client.get(f"/api/v1/recordings/{second}/integrity/verify").json()["data"]
    assert result["valid"] is False
    assert result["reason"] == "chain_broken"


def test_export_digest_verifies_independently(tenant, settings):
    settings.RECORDINGS_DIGEST_KEY = "digest-key-for-tests"
    client = tenant.client()
    rec = upload(client).json()["data"]["id"]
    seal = _seal(client, rec).json()["data"]
    digest = client.get(f"/api/v1/recordings/{rec}/integrity/export-digest").json()["data"]
    assert digest["current_hash"] == seal["current_hash"]
    assert digest["jurisdiction"] == "US"
    assert digest["timestamp"]
    # The documented procedure: HMAC-SHA256 over the sorted, compact JSON without signature.
    body = {k: v for k, v in digest.items() if k != "signature"}
    message = json.dumps(body, sort_keys=True, separators=(",", ":"),
                         ensure_ascii=False).encode()
    key = b"digest-key-for-tests"
    assert hmac.compare_digest(hmac.new(key, message, hashlib.sha256).hexdigest(),
                               digest["signature"])
    assert digest["key_id"] == hashlib.sha256(key).hexdigest()[:16]
    body["current_hash"] = "f" * 64
    forged = json.dumps(body, sort_keys=True, separators=(",", ":")).encode()
    assert hmac.new(key, forged, hashlib.sha256).hexdigest() != digest["signature"]
