"""The Meta live adapter against a loopback Graph API: paths, bearer token, payload shapes
(Marketing API campaigns and custom audiences, Conversions API events), errors mapped."""

from __future__ import annotations

import hashlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import pytest

pytestmark = pytest.mark.django_db
BASE = "/api/v1/ads"
TOKEN = "EAAG-live-token"


class Graph:
    def __init__(self) -> None:
        self.seen: list[tuple[str, str, dict, dict]] = []
        graph = self

        class Handler(BaseHTTPRequestHandler):
            def _handle(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                parts = urlsplit(self.path)
                query = {k: v[0] for k, v in parse_qs(parts.query).items()}
                graph.seen.append((self.command, parts.path, body, query))
                if self.headers.get("Authorization") != f"Bearer {TOKEN}" and \
                        parts.path != "/v20.0/oauth/access_token":
                    return self._json(400, {"error": {"message": "Invalid OAuth access token.",
                                                      "code": 190, "fbtrace_id": "T1"}})
                path = parts.path
                if path == "/v20.0/oauth/access_token":
                    return self._json(200, {"access_token": TOKEN, "token_type": "bearer"})
                if path == "/v20.0/act_42":
                    return self._json(200, {"name": "Acme", "currency": "EUR",
                                            "account_status": 1, "id": "act_42"})
                if path == "/v20.0/act_42/campaigns":
                    return self._json(200, {"id": "120200001"})
                if path == "/v20.0/ds_9/events":
                    return self._json(200, {"events_received": len(body["data"]),
                                            "fbtrace_id": "T2"})
                if path == "/v20.0/act_42/customaudiences":
                    return self._json(200, {"id": "238000001"})
                if path == "/v20.0/238000001/users":
                    return self._json(200, {"audience_id": "238000001",
                                            "num_received": len(body["payload"]["data"])})
                return self._json(200, {"success": True})

            do_GET = do_POST = do_DELETE = _handle  # noqa: N815 - the http.server API

            def _json(self, status, payload):
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture
def graph(settings):
    graph = Graph()
    settings.ALLOW_PRIVATE_WEBHOOK_TARGETS = True
    settings.ADS_GRAPH_BASE_URL = f"http://127.0.0.1:{graph.server.server_address[1]}/v20.0"
    yield graph
    graph.server.shutdown()


@pytest.fixture
def live(tenant_factory):
    return tenant_factory(sandbox=False).client()


def test_connect_campaign_and_conversion(graph, live):
    bad = live.post(f"{BASE}/connect", {"access_token": "wrong", "ad_account_id": "42"},
                    format="json")
    assert bad.status_code == 422
    assert bad.json()["error"]["details"]["code"] == 190
    ok = live.post(f"{BASE}/connect", {"access_token": TOKEN, "ad_account_id": "act_42"},
                   format="json")
    assert ok.json()["data"]["currency"] == "EUR"
    assert graph.seen[-1][3]["fields"] == "name,currency,account_status"
    campaign = live.post(f"{BASE}/campaigns", {"name": "Spring", "channel": "whatsapp",
                                               "daily_budget": 5000}, format="json")
    assert campaign.json()["data"]["external_id"] == "120200001"
    method, path, body, _ = graph.seen[-1]
    assert (method, path) == ("POST", "/v20.0/act_42/campaigns")
    assert body["status"] == "PAUSED"
    assert body["objective"] == "OUTCOME_ENGAGEMENT"
    live.put(f"{BASE}/campaigns/{campaign.json()['data']['id']}", {"status": "active"},
             format="json")
    assert graph.seen[-1][1:3] == ("/v20.0/120200001", {"status": "ACTIVE"})
    live.put(f"{BASE}/conversions/dataset", {"dataset_id": "ds_9"}, format="json")
    sent = live.post(f"{BASE}/conversions", {"event": "lead", "user_data": {
        "email": "Bob@Example.com", "phone": "+44 20 7946 0958"}}, format="json")
    assert sent.json()["data"]["events_received"] == 1
    event = graph.seen[-1][2]["data"][0]
    assert event["event_name"] == "Lead"
    assert event["action_source"] == "business_messaging"
    assert event["messaging_channel"] == "whatsapp"
    assert event["user_data"]["em"] == [hashlib.sha256(b"bob@example.com").hexdigest()]
    assert event["user_data"]["ph"] == [hashlib.sha256(b"442079460958").hexdigest()]
    assert "Bob@Example.com" not in json.dumps(graph.seen[-1][2])


def test_oauth_exchange_needs_app_credentials(graph, live, settings):
    body = {"code": "c0de", "redirect_uri": "https://app.example.com/cb", "ad_account_id": "42"}
    unconfigured = live.post(f"{BASE}/oauth/exchange", body, format="json")
    assert unconfigured.status_code == 503
    settings.ADS_APP_ID, settings.ADS_APP_SECRET = "app-1", "shh"
    assert live.post(f"{BASE}/oauth/exchange", body, format="json").status_code == 201
    exchange = next(s for s in graph.seen if s[1] == "/v20.0/oauth/access_token")
    assert exchange[3] == {"client_id": "app-1", "client_secret": "shh",
                           "redirect_uri": "https://app.example.com/cb", "code": "c0de"}
