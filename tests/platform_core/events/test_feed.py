"""The recent-event feed over HTTP (Document 1, 2.5, 4.5, 6.2 and 8)."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest

from platform_core.events.feed import get_feed
from platform_core.identity import services
from platform_core.identity.models import KeyType

from .conftest import feed_ids


def _key(tenant, scopes):
    _, raw = services.api_key_create(organization=tenant.org, name="k", key_type=KeyType.SECRET,
                                     mode=None, scopes=scopes)
    return tenant.client(raw)


def test_list_newest_first_in_the_envelope(tenant, emit_committed):
    first = emit_committed(tenant.org, "message.sent", {"message_id": "msg_1"})
    second = emit_committed(tenant.org, "message.delivered", {"message_id": "msg_1"})
    response = tenant.client().get("/api/v1/events")
    assert response.status_code == 200
    body = response.json()
    assert [e["id"] for e in body["data"]] == [second.pk, first.pk]
    assert body["data"][0] == second.envelope()
    assert set(body["data"][0]) == {"id", "type", "created_at", "data"}
    assert body["meta"]["pagination"] == {"cursor": None, "has_more": False, "total": 2}
    assert body["meta"]["request_id"]
    # The trailing-slash form of Document 1, 4.5 answers the same.
    again = tenant.client().get("/api/v1/events/")
    assert [e["id"] for e in again.json()["data"]] == [second.pk, first.pk]


def test_cursor_pages_through_the_window(tenant, emit_committed):
    ids = [emit_committed(tenant.org, "contact.updated", {"i": i}).pk for i in range(7)]
    api = tenant.client()
    seen, cursor, pages = [], None, 0
    while True:
        url = "/api/v1/events?limit=3" + (f"&cursor={cursor}" if cursor else "")
        body = api.get(url).json()
        seen += [e["id"] for e in body["data"]]
        pages += 1
        if not body["meta"]["pagination"]["has_more"]:
            assert body["meta"]["pagination"]["cursor"] is None
            break
        cursor = body["meta"]["pagination"]["cursor"]
    assert seen == list(reversed(ids))
    assert pages == 3


def test_cursor_is_opaque_and_tamper_proof(tenant, emit_committed):
    for i in range(3):
        emit_committed(tenant.org, "contact.updated", {"i": i})
    api = tenant.client()
    cursor = api.get("/api/v1/events?limit=1").json()["meta"]["pagination"]["cursor"]
    assert "contact" not in cursor
    tampered = api.get(f"/api/v1/events?limit=1&cursor={cursor[:-2]}xx")
    assert tampered.status_code == 400
    assert tampered.json()["error"]["code"] == "INVALID_CURSOR"
    other_filters = api.get(f"/api/v1/events?limit=1&type=x&cursor={cursor}")
    assert other_filters.status_code == 400
    assert other_filters.json()["error"]["code"] == "INVALID_CURSOR"
    assert api.get("/api/v1/events?limit=0").status_code == 400


def test_type_filter_repeated_or_comma_separated(tenant, emit_committed):
    sent = emit_committed(tenant.org, "message.sent")
    delivered = emit_committed(tenant.org, "message.delivered")
    emit_committed(tenant.org, "contact.updated")
    api = tenant.client()
    for url in ("/api/v1/events?type=message.sent&type=message.delivered",
                "/api/v1/events?type=message.sent,message.delivered",
                "/api/v1/events?type=message.sent, message.delivered"):
        body = api.get(url).json()
        assert [e["id"] for e in body["data"]] == [delivered.pk, sent.pk], url
    only = api.get("/api/v1/events?type=message.sent").json()["data"]
    assert [e["id"] for e in only] == [sent.pk]
    assert api.get("/api/v1/events?type=message").json()["data"] == []  # exact types only


def test_type_filter_pages(tenant, emit_committed):
    wanted = []
    for i in range(12):
        event = emit_committed(tenant.org, "a.b" if i % 3 == 0 else "c.d", {"i": i})
        if i % 3 == 0:
            wanted.append(event.pk)
    api = tenant.client()
    first = api.get("/api/v1/events?type=a.b&limit=2").json()
    assert first["meta"]["pagination"]["has_more"] is True
    cursor = first["meta"]["pagination"]["cursor"]
    second = api.get(f"/api/v1/events?type=a.b&limit=2&cursor={cursor}").json()
    assert [e["id"] for e in first["data"] + second["data"]] == list(reversed(wanted))
    assert second["meta"]["pagination"]["has_more"] is False


def test_lookup_inside_the_window(tenant, emit_committed):
    event = emit_committed(tenant.org, "conversation.created", {"conversation_id": "cnv_1"})
    response = tenant.client().get(f"/api/v1/events/{event.pk}")
    assert response.status_code == 200
    assert response.json()["data"] == event.envelope()
    missing = tenant.client().get("/api/v1/events/evt_01UNKNOWN")
    assert missing.status_code == 404
    assert missing.json()["error"]["code"] == "NOT_FOUND"


def test_window_keeps_the_newest_events_only(tenant, emit_committed, settings):
    settings.EVENTS_FEED_MAX_EVENTS = 3
    ids = [emit_committed(tenant.org, "contact.updated", {"i": i}).pk for i in range(5)]
    api = tenant.client()
    body = api.get("/api/v1/events").json()
    assert [e["id"] for e in body["data"]] == list(reversed(ids[2:]))
    assert body["meta"]["pagination"]["total"] == 3
    for evicted in ids[:2]:
        response = api.get(f"/api/v1/events/{evicted}")
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "NOT_FOUND"
    assert api.get(f"/api/v1/events/{ids[2]}").status_code == 200


def test_window_expires_after_inactivity_and_each_event_refreshes_it(
    tenant, emit_committed, settings
):
    settings.EVENTS_FEED_TTL_SECONDS = 2
    api = tenant.client()
    first = emit_committed(tenant.org, "a.b")
    time.sleep(1.2)
    second = emit_committed(tenant.org, "a.b")  # activity: the whole window lives on
    time.sleep(1.2)
    assert api.get(f"/api/v1/events/{first.pk}").status_code == 200
    assert len(api.get("/api/v1/events").json()["data"]) == 2
    time.sleep(1.5)  # more than the TTL without an event: gone
    assert api.get("/api/v1/events").json()["data"] == []
    assert api.get(f"/api/v1/events/{second.pk}").status_code == 404


def test_default_window_limits(tenant, emit_committed):
    event = emit_committed(tenant.org, "a.b")
    feed = get_feed()
    zkey, hkey, last = feed._keys(tenant.org.pk)
    for key in (zkey, hkey, last):
        assert 880 <= feed.client.ttl(key) <= 900  # about 15 minutes of inactivity
    assert feed.get(tenant.org.pk, event.pk) is not None
    from platform_core.events import conf

    assert conf.feed_max_events() == 5000


def test_degrades_open_when_redis_is_unreachable(tenant, emit_committed, settings, closed_port):
    event = emit_committed(tenant.org, "a.b")
    settings.EVENTS_FEED_REDIS_URL = f"redis://127.0.0.1:{closed_port}/0"
    api = tenant.client()
    listed = api.get("/api/v1/events")
    assert listed.status_code == 200
    body = listed.json()
    assert body["data"] == []
    assert body["meta"]["pagination"]["has_more"] is False
    looked_up = api.get(f"/api/v1/events/{event.pk}")
    assert looked_up.status_code == 404
    assert looked_up.json()["error"]["code"] == "NOT_FOUND"
    assert looked_up.json()["meta"]["request_id"]


def test_event_emitted_while_redis_is_down_reaches_the_feed_later(
    tenant, emit_committed, settings, closed_port
):
    from datetime import timedelta

    import time_machine
    from django.utils import timezone

    from platform_core.events.models import Event
    from platform_core.events.tasks import redispatch_pending

    settings.EVENTS_FEED_REDIS_URL = f"redis://127.0.0.1:{closed_port}/0"
    event = emit_committed(tenant.org, "a.b")  # the emitting request does not fail
    row = Event.objects.dangerously_unscoped().get(pk=event.pk)
    assert row.dispatched_at is None
    assert "feed" in row.failed_handlers
    settings.EVENTS_FEED_REDIS_URL = settings.REDIS_URL  # Redis is back
    with time_machine.travel(timezone.now() + timedelta(seconds=61), tick=False):
        redispatch_pending()
    assert feed_ids(tenant.org) == [event.pk]
    assert tenant.client().get(f"/api/v1/events/{event.pk}").status_code == 200


def test_feed_is_per_tenant(tenant, other_tenant, emit_committed):
    mine = emit_committed(tenant.org, "a.b")
    theirs = emit_committed(other_tenant.org, "a.b")
    body = tenant.client().get("/api/v1/events").json()
    assert [e["id"] for e in body["data"]] == [mine.pk]
    response = tenant.client().get(f"/api/v1/events/{theirs.pk}")
    assert response.status_code == 404


def test_scopes(tenant, emit_committed, anon):
    event = emit_committed(tenant.org, "a.b")
    assert _key(tenant, ["events:read"]).get("/api/v1/events").status_code == 200
    assert _key(tenant, ["events:write"]).get(f"/api/v1/events/{event.pk}").status_code == 200
    refused = _key(tenant, ["contacts:read"]).get("/api/v1/events")
    assert refused.status_code == 403
    assert refused.json()["error"]["code"] == "INSUFFICIENT_PERMISSIONS"
    assert _key(tenant, ["contacts:read"]).get(f"/api/v1/events/{event.pk}").status_code == 403
    unauthenticated = anon.get("/api/v1/events")
    assert unauthenticated.status_code == 401
    assert unauthenticated.json()["error"]["code"] == "UNAUTHORIZED"


def test_dashboard_session_reads_the_feed(tenant, emit_committed):
    event = emit_committed(tenant.org, "a.b")
    body = tenant.session_client().get("/api/v1/events").json()
    assert [e["id"] for e in body["data"]] == [event.pk]


def test_list_costs_no_database_queries_per_event(
    tenant, emit_committed, django_assert_max_num_queries
):
    for i in range(30):
        emit_committed(tenant.org, "a.b", {"i": i})
    api = tenant.client()
    api.get("/api/v1/events")  # warm the authentication cache
    with django_assert_max_num_queries(1):
        response = api.get("/api/v1/events?limit=30")
    assert len(response.json()["data"]) == 30


def test_wsgi_stream_path_explains_itself(tenant):
    response = tenant.client().get("/api/v1/events/stream")
    assert response.status_code == 503
    assert response.json()["error"]["code"] == "SERVICE_UNAVAILABLE"


@pytest.mark.parametrize("method", ["post", "put", "delete"])
def test_feed_is_read_only(tenant, method):
    response = getattr(tenant.client(), method)("/api/v1/events", {}, format="json")
    assert response.status_code == 405


class TestEmbeddedDatabaseFeed:
    """Without Redis (the embedded default) the window is read from the outbox table."""

    @pytest.fixture(autouse=True)
    def _no_redis(self, settings):
        settings.EVENTS_FEED_REDIS_URL = ""

    def test_backend(self):
        from platform_core.events.feed import DatabaseFeed

        assert isinstance(get_feed(), DatabaseFeed)

    def test_list_filter_page_and_lookup(self, tenant, emit_committed):
        ids = [emit_committed(tenant.org, "a.b" if i % 2 else "c.d", {"i": i}).pk
               for i in range(5)]
        api = tenant.client()
        body = api.get("/api/v1/events?limit=2").json()
        assert [e["id"] for e in body["data"]] == [ids[4], ids[3]]
        assert body["meta"]["pagination"]["has_more"] is True
        cursor = body["meta"]["pagination"]["cursor"]
        rest = api.get(f"/api/v1/events?limit=2&cursor={cursor}").json()
        assert [e["id"] for e in rest["data"]] == [ids[2], ids[1]]
        typed = api.get("/api/v1/events?type=a.b").json()["data"]
        assert [e["id"] for e in typed] == [ids[3], ids[1]]
        assert api.get(f"/api/v1/events/{ids[0]}").json()["data"]["data"] == {"i": 0}

    def test_window_limits(self, tenant, emit_committed, settings):
        import time_machine
        from django.utils import timezone

        settings.EVENTS_FEED_MAX_EVENTS = 2
        ids = [emit_committed(tenant.org, "a.b", {"i": i}).pk for i in range(3)]
        api = tenant.client()
        assert [e["id"] for e in api.get("/api/v1/events").json()["data"]] == [ids[2], ids[1]]
        assert api.get(f"/api/v1/events/{ids[0]}").status_code == 404
        with time_machine.travel(timezone.now() + timedelta(minutes=16), tick=False):
            assert api.get("/api/v1/events").json()["data"] == []
            assert api.get(f"/api/v1/events/{ids[2]}").status_code == 404
