"""Recordings over HTTP: register, read, legal hold and the retention sweep, shares."""

from __future__ import annotations

import threading
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import time_machine
from django.core.files.storage import default_storage
from django.utils import timezone

from platform_core.audit.models import AuditLogEntry
from recordings.models import Recording
from recordings.services import retention_sweep
from tests.platform_core.identity.conftest import add_member, make_key, session_for

from .conftest import MEDIA, sha, upload

pytestmark = pytest.mark.django_db


def test_upload_is_hashed_and_stored_encrypted(tenant, media_root):
    response = upload(tenant.client(), kind="call", session_id="room-1")
    assert response.status_code == 201, response.content
    data = response.json()["data"]
    assert data["id"].startswith("rec_")
    assert data["status"] == "completed"
    assert data["content_sha256"] == sha()
    assert data["size"] == len(MEDIA)
    assert data["encryption"]["kms_provider"] == "local"
    assert "key_ref" not in data
    assert "wrapped_key" not in data
    stored = Recording.objects.dangerously_unscoped().get(pk=data["id"])
    with default_storage.open(stored.storage_name, "rb") as handle:
        ciphertext = handle.read()
    assert MEDIA[:64] not in ciphertext
    assert len(ciphertext) > len(MEDIA)
    # The signed download URL streams the plaintext back.
    content = tenant.client().get(data["download_url"].split("8000", 1)[-1])
    assert content.status_code == 200
    assert b"".join(content.streaming_content) == MEDIA


def test_list_read_and_id_rules(tenant):
    client = tenant.client()
    first = upload(client).json()["data"]["id"]
    upload(client, kind="call")
    listed = client.get("/api/v1/recordings?kind=video").json()["data"]
    assert [r["id"] for r in listed] == [first]
    assert client.get(f"/api/v1/recordings/{first}").json()["data"]["id"] == first
    assert client.get("/api/v1/recordings/rec_unknown").status_code == 404
    too_long = client.get("/api/v1/recordings/" + "x" * 129)
    assert too_long.status_code == 400
    assert too_long.json()["error"]["code"] == "VALIDATION_ERROR"
    assert client.get("/api/v1/recordings?kind=audio").status_code == 400


def test_list_query_count_is_constant(tenant, django_assert_max_num_queries):
    client = tenant.client()
    for _ in range(3):
        upload(client, data=b"x")
    client.get("/api/v1/recordings")
    with django_assert_max_num_queries(8):
        assert len(client.get("/api/v1/recordings").json()["data"]) == 3


def test_json_registration_validates(tenant):
    client = tenant.client()
    bad = client.post("/api/v1/recordings", {"media_url": "not a url", "kind": "call"},
                      format="json")
    assert bad.status_code == 422
    bad_hash = client.post("/api/v1/recordings", {"media_url": "https://example.com/a.wav",
                                                  "kind": "call", "content_sha256": "zz"},
                           format="json")
    assert bad_hash.status_code == 422


def test_json_registration_fetches_and_checks_the_hash(tenant, settings,
                                                      django_capture_on_commit_callbacks):
    settings.ALLOW_PRIVATE_WEBHOOK_TARGETS = True

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - the http.server API
            self.send_response(200)
            self.send_header("Content-Type", "audio/wav")
            self.send_header("Content-Length", str(len(MEDIA)))
            self.end_headers()
            self.wfile.write(MEDIA)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/a.wav"
    client = tenant.client()
    try:
        with django_capture_on_commit_callbacks(execute=True):
            ok = client.post("/api/v1/recordings", {"media_url": url, "kind": "video",
                                                    "content_sha256": sha()}, format="json")
        assert ok.status_code == 201
        assert ok.json()["data"]["status"] == "processing"
        detail = client.get(f"/api/v1/recordings/{ok.json()['data']['id']}").json()["data"]
        assert detail["status"] == "completed"
        assert detail["content_sha256"] == sha()
        with django_capture_on_commit_callbacks(execute=True):
            wrong = client.post("/api/v1/recordings", {"media_url": url, "kind": "call",
                                                       "content_sha256": "a" * 64},
                                format="json")
        detail = client.get(f"/api/v1/recordings/{wrong.json()['data']['id']}").json()["data"]
        assert detail["status"] == "failed"
        assert "content_sha256" in detail["failure_reason"]
    finally:
        server.shutdown()


class TestLegalHold:
    def test_set_read_and_audited(self, tenant):
        client = tenant.client()
        rec = upload(client).json()["data"]["id"]
        initial = client.get(f"/api/v1/recordings/{rec}/legal-hold").json()["data"]
        assert initial["legal_hold"] is False
        put = client.put(f"/api/v1/recordings/{rec}/legal-hold",
                         {"hold": True, "reason": "litigation 42"}, format="json")
        assert put.status_code == 200, put.content
        assert put.json()["data"]["legal_hold"] is True
        assert put.json()["data"]["reason"] == "litigation 42"
        assert AuditLogEntry.objects.filter(action="recording.legal_hold_set",
                                            target_id=rec).exists()

    def test_validation(self, tenant):
        client = tenant.client()
        rec = upload(client).json()["data"]["id"]
        missing = client.put(f"/api/v1/recordings/{rec}/legal-hold", {}, format="json")
        assert missing.status_code == 400
        long = client.put(f"/api/v1/recordings/{rec}/legal-hold",
                          {"hold": True, "reason": "x" * 513}, format="json")
        assert long.status_code == 400

    def test_needs_owner_or_admin(self, tenant):
        rec = upload(tenant.client()).json()["data"]["id"]
        developer = session_for(tenant, add_member(tenant, "developer"))
        response = developer.put(f"/api/v1/recordings/{rec}/legal-hold", {"hold": True},
                                 format="json")
        assert response.status_code == 403
        reader = tenant.client(make_key(tenant, ["voice:read"]))
        assert reader.get(f"/api/v1/recordings/{rec}/legal-hold").status_code == 200
        assert reader.put(f"/api/v1/recordings/{rec}/legal-hold", {"hold": True},
                          format="json").status_code == 403

    def test_sweep_keeps_held_and_their_session(self, tenant, settings,
                                                django_capture_on_commit_callbacks):
        settings.RECORDINGS_RETENTION_DAYS = 30
        client = tenant.client()
        with time_machine.travel(timezone.now() - timedelta(days=40)):
            held = upload(client, session_id="room-9").json()["data"]["id"]
            sibling = upload(client, session_id="room-9").json()["data"]["id"]
            old = upload(client, session_id="room-1").json()["data"]["id"]
        young = upload(client).json()["data"]["id"]
        client.put(f"/api/v1/recordings/{held}/legal-hold", {"hold": True, "reason": "case"},
                   format="json")
        name = Recording.objects.dangerously_unscoped().get(pk=old).storage_name
        with django_capture_on_commit_callbacks(execute=True):
            assert retention_sweep(batch=1) == 1
        remaining = {r["id"] for r in client.get("/api/v1/recordings").json()["data"]}
        assert remaining == {held, sibling, young}
        assert not default_storage.exists(name)
        # Released: the next sweep takes them.
        client.put(f"/api/v1/recordings/{held}/legal-hold", {"hold": False}, format="json")
        assert retention_sweep() == 2


class TestShare:
    def test_share_streams_and_revoke_stops_every_link(self, tenant):
        client = tenant.client()
        rec = upload(client).json()["data"]["id"]
        first = client.post(f"/api/v1/recordings/{rec}/share", {}, format="json")
        assert first.status_code == 201, first.content
        data = first.json()["data"]
        assert data["revocable"] is True
        assert data["token"]
        lifetime = timezone.datetime.fromisoformat(data["expires_at"]) - timezone.now()
        assert timedelta(days=6, hours=23) < lifetime <= timedelta(days=7, seconds=2)
        second = client.post(f"/api/v1/recordings/{rec}/share", {"expires_in_seconds": 10},
                             format="json").json()["data"]
        short = timezone.datetime.fromisoformat(second["expires_at"]) - timezone.now()
        assert timedelta(minutes=4) < short <= timedelta(minutes=5, seconds=2)
        guest = type(client)()
        path = data["share_url"].split("8000", 1)[-1]
        assert b"".join(guest.get(path).streaming_content) == MEDIA
        revoked = client.delete(f"/api/v1/recordings/{rec}/share")
        assert revoked.json()["data"] == {"recording_id": rec, "revoked": True}
        for url in (data["share_url"], second["share_url"]):
            refused = guest.get(url.split("8000", 1)[-1])
            assert refused.status_code == 403
            assert refused.json()["error"]["code"] == "RECORDING_SHARE_LINK_INVALID"

    def test_expired_link_refused(self, tenant):
        client = tenant.client()
        rec = upload(client).json()["data"]["id"]
        data = client.post(f"/api/v1/recordings/{rec}/share", {"expires_in_seconds": 300},
                           format="json").json()["data"]
        with time_machine.travel(timezone.now() + timedelta(minutes=6)):
            assert type(client)().get(data["share_url"].split("8000", 1)[-1]).status_code == 403

    def test_call_recording_not_shareable(self, tenant):
        client = tenant.client()
        rec = upload(client, kind="call").json()["data"]["id"]
        response = client.post(f"/api/v1/recordings/{rec}/share", {}, format="json")
        assert response.status_code == 400
        assert response.json()["error"]["code"] == "RECORDING_SHARE_NOT_SHAREABLE"

    def test_needs_video_write(self, tenant):
        rec = upload(tenant.client()).json()["data"]["id"]
        voice_only = tenant.client(make_key(tenant, ["voice:write"]))
        assert voice_only.post(f"/api/v1/recordings/{rec}/share", {},
                               format="json").status_code == 403
