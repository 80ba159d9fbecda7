"""The live connector adapters against a local fake of each vendor's public API (real HTTP
in this process): what they send (paths, auth, paging) and what becomes documents. A live
(non-sandbox) organization's connector calls the vendor; failures end the sync `failed`."""

from __future__ import annotations

import base64
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from .helpers import KB, create_kb
from .manage_helpers import documents, sync

pytestmark = pytest.mark.django_db


@dataclass
class FakeVendor:
    """Answers `routes[(method, path)]` (a JSON-able body, or (status, body)); records
    every request as (method, path, query, headers, body)."""

    url: str = ""
    routes: dict[tuple[str, str], Any] = field(default_factory=dict)
    requests: list[dict[str, Any]] = field(default_factory=list)

    def paths(self) -> list[str]:
        return [r["path"] for r in self.requests]


def _handler(fake: FakeVendor):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args) -> None:
            return

        def _answer(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            parts = urlsplit(self.path)
            fake.requests.append({"method": self.command, "path": parts.path,
                                  "query": parse_qs(parts.query),
                                  "headers": {k.lower(): v for k, v in self.headers.items()},
                                  "body": raw.decode()})
            answer = fake.routes.get((self.command, parts.path), (404, {"error": "nope"}))
            status, body = answer if isinstance(answer, tuple) else (200, answer)
            if callable(body):
                body = body(parse_qs(parts.query), raw)
            payload = body.encode() if isinstance(body, str) else json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        do_GET = do_POST = _answer  # noqa: N815 (http.server's names)

    return Handler


@pytest.fixture
def vendor(settings):
    fake = FakeVendor()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(fake))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    fake.url = f"http://127.0.0.1:{server.server_address[1]}"
    settings.ALLOW_PRIVATE_WEBHOOK_TARGETS = True
    settings.PROVIDER_HTTP_MAX_ATTEMPTS = 1
    settings.KNOWLEDGE_CONNECTOR_API_ROOTS = {
        "notion": fake.url, "google_drive": fake.url, "sharepoint": fake.url,
        "sharepoint_login": fake.url, "zendesk_guide": fake.url}
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.fixture
def live(tenant_factory, django_capture_on_commit_callbacks):
    tenant = tenant_factory(sandbox=False)
    client = tenant.client()
    kb = create_kb(client)

    def connect_and_sync(body: dict) -> tuple[dict, dict]:
        response = client.post(f"{KB}/{kb}/connectors", body, format="json")
        assert response.status_code == 201, response.content
        connector = response.json()["data"]["id"]
        state = sync(client, kb, connector, django_capture_on_commit_callbacks)
        return state, documents(client, kb)

    return connect_and_sync


def _basic(header: str) -> str:
    return base64.b64decode(header.removeprefix("Basic ")).decode()


def test_confluence(vendor, live):
    base = "/wiki/api/v2/spaces/SP1/pages"
    vendor.routes[("GET", base)] = lambda q, _: {
        "results": [{"id": "11", "title": "Refunds", "version": {"createdAt": "2026-01-01"},
                     "body": {"storage": {"value": "<h1>Refunds</h1><p>Within 30 days.</p>"
                                                   "<script>x()</script>"}},
                     "_links": {"webui": "/spaces/SP1/pages/11"}}],
        "_links": {"next": f"{base}?cursor=abc"}} if "cursor" not in q else {
        "results": [{"id": "12", "title": "Shipping",
                     "body": {"storage": {"value": "<p>Three days.</p>"}}}], "_links": {}}
    state, docs = live({"type": "confluence",
                        "config": {"site_url": vendor.url, "space_id": "SP1"},
                        "credentials": {"email": "ops@acme.test", "api_token": "cf-token"}})
    assert state["sync_status"] == "succeeded", state
    assert state["last_sync_stats"]["created"] == 2
    assert sorted(docs) == ["Refunds", "Shipping"]
    first = vendor.requests[0]
    assert first["query"]["body-format"] == ["storage"]
    assert _basic(first["headers"]["authorization"]) == "ops@acme.test:cf-token"
    assert vendor.requests[1]["query"]["cursor"] == ["abc"]


def test_notion(vendor, live):
    vendor.routes[("POST", "/v1/search")] = {"results": [{
        "id": "pg1", "url": "https://notion.so/pg1", "last_edited_time": "2026-01-01",
        "properties": {"Name": {"type": "title", "title": [{"plain_text": "Onboarding"}]}}}],
        "has_more": False}
    vendor.routes[("GET", "/v1/blocks/pg1/children")] = {"results": [
        {"type": "heading_1", "heading_1": {"rich_text": [{"plain_text": "Welcome"}]}},
        {"type": "paragraph", "paragraph": {"rich_text": [{"plain_text": "Read the "},
                                                          {"plain_text": "handbook."}]}},
        {"type": "bulleted_list_item",
         "bulleted_list_item": {"rich_text": [{"plain_text": "Get a laptop"}]}},
        {"type": "image", "image": {}}], "has_more": False}
    state, docs = live({"type": "notion", "credentials": {"token": "secret_abc"}})
    assert state["sync_status"] == "succeeded", state
    assert list(docs) == ["Onboarding"]
    search = vendor.requests[0]
    assert search["headers"]["authorization"] == "Bearer secret_abc"
    assert search["headers"]["notion-version"] == "2022-06-28"
    assert json.loads(search["body"])["filter"] == {"property": "object", "value": "page"}
    assert docs["Onboarding"]["size_bytes"] == len(
        b"# Welcome\n\nRead the handbook.\n\n- Get a laptop")


def test_google_drive(vendor, live):
    vendor.routes[("GET", "/drive/v3/files")] = {"files": [
        {"id": "d1", "name": "Policy", "mimeType": "application/vnd.google-apps.document"},
        {"id": "d2", "name": "notes.md", "mimeType": "text/markdown"},
        {"id": "d3", "name": "photo.png", "mimeType": "image/png"}]}
    vendor.routes[("GET", "/drive/v3/files/d1/export")] = "Policy text from a Google Doc."
    vendor.routes[("GET", "/drive/v3/files/d2")] = "# Notes\n\nMarkdown notes."
    state, docs = live({"type": "google_drive", "config": {"folder_id": "F1"},
                        "credentials": {"access_token": "ya29.token"}})
    assert state["sync_status"] == "succeeded", state
    assert sorted(docs) == ["Policy", "notes.md"]  # the image is skipped
    listing = vendor.requests[0]
    assert listing["query"]["q"] == ["'F1' in parents and trashed = false"]
    assert listing["headers"]["authorization"] == "Bearer ya29.token"
    assert vendor.requests[1]["query"]["mimeType"] == ["text/plain"]
    assert vendor.requests[2]["query"]["alt"] == ["media"]


def test_sharepoint(vendor, live):
    vendor.routes[("POST", "/tenant-1/oauth2/v2.0/token")] = {"access_token": "graph-token"}
    vendor.routes[("GET", "/v1.0/sites/site-1/pages/microsoft.graph.sitePage")] = {"value": [{
        "id": "sp1", "title": "Holidays", "webUrl": "https://acme.sharepoint.com/p",
        "canvasLayout": {"horizontalSections": [{"columns": [{"webparts": [
            {"innerHtml": "<p>Ten days a year.</p>"}]}]}]}}]}
    state, docs = live({"type": "sharepoint", "config": {"site_id": "site-1"},
                        "credentials": {"tenant_id": "tenant-1", "client_id": "app",
                                        "client_secret": "shh"}})
    assert state["sync_status"] == "succeeded", state
    assert list(docs) == ["Holidays"]
    token = parse_qs(vendor.requests[0]["body"])
    assert (token["grant_type"], token["client_secret"]) == (["client_credentials"], ["shh"])
    assert vendor.requests[1]["headers"]["authorization"] == "Bearer graph-token"
    assert vendor.requests[1]["query"]["$expand"] == ["canvasLayout"]


def test_zendesk_guide(vendor, live):
    path = "/api/v2/help_center/en-us/articles.json"
    vendor.routes[("GET", path)] = lambda q, _: {"articles": [
        {"id": 1, "title": "Reset password", "body": "<p>Open settings.</p>"},
        {"id": 2, "title": "Draft", "body": "<p>Not yet.</p>", "draft": True}],
        "next_page": f"{vendor.url}{path}?page=2"} if "page" not in q else {
        "articles": [{"id": 3, "title": "Invoices", "body": "<p>Monthly.</p>"}],
        "next_page": None}
    state, docs = live({"type": "zendesk_guide",
                        "config": {"subdomain": "acme", "locale": "en-us"},
                        "credentials": {"email": "ops@acme.test", "api_token": "zd"}})
    assert state["sync_status"] == "succeeded", state
    assert sorted(docs) == ["Invoices", "Reset password"]  # the draft is skipped
    assert _basic(vendor.requests[0]["headers"]["authorization"]) == "ops@acme.test/token:zd"


def test_vendor_refusal_fails_the_sync(vendor, live):
    vendor.routes[("GET", "/api/v2/help_center/articles.json")] = (401, {"error": "Couldn't"})
    state, docs = live({"type": "zendesk_guide", "config": {"subdomain": "acme"},
                        "credentials": {"email": "ops@acme.test", "api_token": "bad"}})
    assert state["sync_status"] == "failed"
    assert state["last_sync_error"] == "zendesk_guide answered HTTP 401."
    assert docs == {}


def test_unreachable_vendor_fails_the_sync(vendor, live, settings):
    settings.ALLOW_PRIVATE_WEBHOOK_TARGETS = False  # the local fake is now refused
    state, docs = live({"type": "notion", "credentials": {"token": "secret_abc"}})
    assert state["sync_status"] == "failed"
    assert "not an allowed target" in state["last_sync_error"]
    assert vendor.requests == []
    assert docs == {}


def test_vendor_server_error_fails_the_sync(vendor, live):
    vendor.routes[("POST", "/v1/search")] = (500, {"error": "down"})
    state, docs = live({"type": "notion", "credentials": {"token": "secret_abc"}})
    assert state["sync_status"] == "failed"
    assert state["last_sync_error"].startswith("The kb_notion ")
    assert state["last_sync_stats"]["created"] == 0
    assert docs == {}


def test_malformed_vendor_answer_fails_the_sync(vendor, live):
    vendor.routes[("POST", "/v1/search")] = {"results": [{"no_id": True}], "has_more": False}
    state, docs = live({"type": "notion", "credentials": {"token": "secret_abc"}})
    assert state["sync_status"] == "failed"
    assert state["last_sync_error"] == "Unexpected answer from notion: KeyError."
    assert docs == {}
