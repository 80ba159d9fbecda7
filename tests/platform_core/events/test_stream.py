"""`GET /api/v1/events/stream` over a real daphne server with a real SSE client (httpx-sse).

The server is a daphne subprocess on a free port sharing this test run's database, Redis
key prefix and channel layer; tests are transactional so daphne sees committed data.
Events are emitted here, fanned out (Celery eager) to the feed and the channel layer,
and must arrive at the subscriber.
"""

from __future__ import annotations

import json
import queue
import statistics
import threading
import time

import httpx
import pytest
from httpx_sse import connect_sse

from platform_core.events import bus
from platform_core.events.bus import emit
from platform_core.events.fanout import stream_fanout
from platform_core.identity import services
from platform_core.identity.models import KeyType
from tests.daphne_server import running_daphne

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

STREAM = "/api/v1/events/stream"


@pytest.fixture(scope="module")
def daphne_server(django_db_setup, tmp_path_factory):
    logs = tmp_path_factory.mktemp("daphne")
    access_log = logs / "access.log"
    with running_daphne(logs, settings_module="tests.platform_core.events.daphne_settings",
                        extra_env={"EVENTS_STREAM_HEARTBEAT_SECONDS": "0.5"},
                        extra_args=("--access-log", str(access_log))) as port:
        yield {"url": f"http://127.0.0.1:{port}", "access_log": access_log}


class Subscriber:
    """An httpx-sse client reading the stream in a thread; events land in a queue."""

    def __init__(self, base_url: str, *, headers=None, params=None) -> None:
        self.client = httpx.Client(base_url=base_url, timeout=httpx.Timeout(10, read=30))
        self.headers = headers or {}
        self.params = params or {}
        self.events: queue.Queue = queue.Queue()
        self.ready = threading.Event()
        self.status: int | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        try:
            with connect_sse(self.client, "GET", STREAM, headers=self.headers,
                             params=self.params) as source:
                self.status = source.response.status_code
                self.ready.set()
                for sse in source.iter_sse():
                    if sse.data:  # skip the retry-only preamble
                        self.events.put((time.perf_counter(), sse))
        except Exception as exc:  # closed by the test, or a refused connection
            self.events.put((time.perf_counter(), exc))
        finally:
            self.ready.set()

    def __enter__(self) -> Subscriber:
        self.thread.start()
        assert self.ready.wait(10), "the stream did not open"
        assert self.status == 200, self.status
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self.client.close()
        self.thread.join(5)

    def next(self, timeout: float = 10.0):
        received_at, item = self.events.get(timeout=timeout)
        if isinstance(item, Exception):
            raise item
        return received_at, item

    def assert_silent(self, seconds: float) -> None:
        with pytest.raises(queue.Empty):
            self.events.get(timeout=seconds)


def _headers(tenant) -> dict[str, str]:
    return {"X-API-Key": tenant.raw_key}


def _emit(tenant, type_="message.delivered", **data):
    return emit(organization=tenant.org, type=type_, data=data or {"n": 1})


def test_subscriber_receives_emitted_events_and_latency_is_measured(
    daphne_server, tenant, capsys
):
    latencies = []
    with Subscriber(daphne_server["url"], headers=_headers(tenant)) as subscriber:
        for i in range(20):
            started = time.perf_counter()
            event = _emit(tenant, "message.delivered", message_id=f"msg_{i}", status="delivered")
            received_at, sse = subscriber.next()
            latencies.append((received_at - started) * 1000)
            assert sse.id == event.pk
            assert sse.event == "message.delivered"
            assert json.loads(sse.data) == event.envelope()
            assert "\n" not in sse.data  # one JSON object on one data: line
    latencies.sort()
    with capsys.disabled():
        print(f"\nSSE emit-to-receive latency over {len(latencies)} events: "
              f"p50 {statistics.median(latencies):.1f} ms, "
              f"p95 {latencies[int(len(latencies) * 0.95) - 1]:.1f} ms, "
              f"max {latencies[-1]:.1f} ms")
    assert statistics.median(latencies) < 1000


def test_each_tenant_receives_only_its_events(daphne_server, tenant, other_tenant):
    with Subscriber(daphne_server["url"], headers=_headers(tenant)) as mine:
        _emit(other_tenant, "secret.thing")
        own = _emit(tenant, "message.sent")
        _, sse = mine.next()
        assert sse.id == own.pk
        mine.assert_silent(0.5)


def test_last_event_id_resumes_with_exactly_the_missed_events(daphne_server, tenant):
    with Subscriber(daphne_server["url"], headers=_headers(tenant)) as first:
        seen = _emit(tenant, "message.sent", i=0)
        _, sse = first.next()
        assert sse.id == seen.pk
    # Disconnected: these happen while nobody listens.
    missed = [_emit(tenant, "message.sent", i=i).pk for i in range(1, 4)]
    headers = {**_headers(tenant), "Last-Event-ID": seen.pk}
    with Subscriber(daphne_server["url"], headers=headers) as resumed:
        got = [resumed.next()[1].id for _ in missed]
        assert got == missed
        live = _emit(tenant, "message.sent", i=4)
        assert resumed.next()[1].id == live.pk  # then live events, nothing repeated
        resumed.assert_silent(0.5)


def test_resume_from_an_id_outside_the_window_replays_the_window(daphne_server, tenant):
    in_window = [_emit(tenant, "a.b", i=i).pk for i in range(3)]
    headers = {**_headers(tenant), "Last-Event-ID": "evt_NOTINTHEWINDOW"}
    with Subscriber(daphne_server["url"], headers=headers) as resumed:
        assert [resumed.next()[1].id for _ in in_window] == in_window


def test_a_missed_channel_message_is_recovered_from_the_feed(
    daphne_server, tenant, monkeypatch
):
    """A subscriber that never got an event's message (full channel, dropped message)
    notices the gap at the next one and reads the missing event from the feed."""
    with Subscriber(daphne_server["url"], headers=_headers(tenant)) as subscriber:
        first = _emit(tenant, "a.b", i=1)
        assert subscriber.next()[1].id == first.pk
        monkeypatch.delitem(bus._FANOUTS, "stream")  # this one reaches the feed only
        dropped = _emit(tenant, "a.b", i=2)
        monkeypatch.setitem(bus._FANOUTS, "stream", stream_fanout)
        last = _emit(tenant, "a.b", i=3)
        assert [subscriber.next()[1].id for _ in range(2)] == [dropped.pk, last.pk]


def test_browser_token_query_parameter_authenticates(daphne_server, tenant):
    with Subscriber(daphne_server["url"], params={"token": tenant.raw_key}) as subscriber:
        event = _emit(tenant, "a.b")
        assert subscriber.next()[1].id == event.pk


def test_dashboard_session_token_authenticates(daphne_server, tenant):
    token = tenant.session_client()._credentials["HTTP_AUTHORIZATION"].split(" ", 1)[1]
    with Subscriber(daphne_server["url"], params={"token": token}) as by_query:
        event = _emit(tenant, "a.b")
        assert by_query.next()[1].id == event.pk
    with Subscriber(daphne_server["url"],
                    headers={"Authorization": f"Bearer {token}"}) as by_header:
        event = _emit(tenant, "a.b")
        assert by_header.next()[1].id == event.pk


def _refusal(daphne_server, **kwargs):
    response = httpx.get(daphne_server["url"] + STREAM, timeout=10, **kwargs)
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert body["error"]["status"] == response.status_code
    assert body["meta"]["request_id"] == response.headers["x-request-id"]
    # As on the REST API: every 401 names the scheme to use (RFC 9110), a 403 does not.
    assert ("www-authenticate" in response.headers) == (response.status_code == 401)
    return response.status_code, body["error"]["code"]


def test_refusals_answer_the_json_error_envelope(daphne_server, tenant):
    assert _refusal(daphne_server) == (401, "UNAUTHORIZED")
    assert _refusal(daphne_server, params={"token": "svc_test_sk_nope"}) == (
        401, "INVALID_API_KEY")
    assert _refusal(daphne_server, headers={"X-API-Key": "svc_test_sk_nope"}) == (
        401, "INVALID_API_KEY")
    assert _refusal(daphne_server, headers={"Authorization": "Basic abc"}) == (
        401, "UNAUTHORIZED")
    _, raw = services.api_key_create(organization=tenant.org, name="c", key_type=KeyType.SECRET,
                                     mode=None, scopes=["contacts:read"])
    assert _refusal(daphne_server, headers={"X-API-Key": raw}) == (
        403, "INSUFFICIENT_PERMISSIONS")
    response = httpx.post(daphne_server["url"] + STREAM, headers=_headers(tenant), timeout=10)
    assert response.status_code == 405
    assert response.json()["error"]["code"] == "METHOD_NOT_ALLOWED"


def test_heartbeats_keep_an_idle_stream_alive(daphne_server, tenant):
    lines = []
    with httpx.Client(base_url=daphne_server["url"], timeout=10) as client, client.stream(
        "GET", STREAM, headers=_headers(tenant)
    ) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        assert response.headers["cache-control"].startswith("no-cache")
        started = time.monotonic()
        for line in response.iter_lines():
            lines.append(line)
            if lines.count(": keepalive") >= 2 or time.monotonic() - started > 5:
                break
    assert lines.count(": keepalive") >= 2  # every 0.5 s here (15 s by default)


def test_query_strings_never_reach_the_access_log(daphne_server, tenant):
    secret_key = tenant.raw_key
    with Subscriber(daphne_server["url"], params={"token": secret_key}) as subscriber:
        _emit(tenant, "a.b")
        subscriber.next()
    httpx.get(daphne_server["url"] + STREAM, params={"token": "svc_test_sk_leaked"}, timeout=10)
    httpx.get(daphne_server["url"] + "/api/v1/events",
              params={"token": "svc_test_sk_leaked2", "limit": 1}, timeout=10)
    log = daphne_server["access_log"]
    deadline = time.monotonic() + 5
    while '"GET /api/v1/events" ' not in log.read_text() and time.monotonic() < deadline:
        time.sleep(0.1)
    text = log.read_text()
    assert '"GET /api/v1/events/stream" 401' in text
    assert '"GET /api/v1/events" ' in text  # whatever Django answered
    for leaked in ("?", "token", secret_key, "svc_test_sk_leaked"):
        assert leaked not in text
