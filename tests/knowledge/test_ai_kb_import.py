"""POST /api/v1/ai/kb/import/help-center (Document 3, 4.2): the sandbox double in test
mode, and the live Zendesk, Freshdesk and Intercom adapters against a local fake of each
API (a live organization; private targets allowed as in other outbound tests)."""

from __future__ import annotations

import base64
import json

import pytest

from knowledge.models import Chunk, Document
from platform_core.tenancy.context import tenant_context

from .helpers import search
from .ingest_support import DOCS, site_fixture  # noqa: F401

pytestmark = pytest.mark.django_db

IMPORT = "/api/v1/ai/kb/import/help-center"


def _import(client, capture, **body):
    with capture(execute=True):
        return client.post(IMPORT, body, format="json")


def _json(payload) -> tuple[int, dict[str, str], bytes]:
    return 200, {"Content-Type": "application/json"}, json.dumps(payload).encode()


def _zendesk_article(number: int, *, draft: bool = False, body: str | None = None) -> dict:
    return {"id": 1000 + number, "title": f"Article {number}", "draft": draft,
            "locale": "en-us", "updated_at": "2026-03-01T10:00:00Z",
            "html_url": f"https://acme.zendesk.com/hc/en-us/articles/{1000 + number}",
            "body": body or f"<p>Answer number {number}.</p><script>x()</script>"}


# --- test mode: the sandbox double ---------------------------------------------------------

def test_sandbox_import_creates_indexed_searchable_documents(
        tenant, django_capture_on_commit_callbacks):
    client = tenant.client()
    response = _import(client, django_capture_on_commit_callbacks, subdomain="acme",
                       name_prefix="Help: ")
    assert response.status_code == 201, response.content
    result = response.json()["data"]
    assert (result["provider"], result["locale"], result["sandbox"]) == ("zendesk", "en-us",
                                                                         True)
    assert (result["articles_found"], result["created"], result["updated"],
            result["unchanged"]) == (6, 6, 0, 0)
    names = sorted(d["name"] for d in result["documents"])
    assert "Help: Refund policy" in names
    listed = client.get(DOCS).json()["data"]
    assert len(listed) == 6
    assert {d["status"] for d in listed} == {"ready"}
    assert {d["source_type"] for d in listed} == {"help_center"}
    refund = next(d for d in listed if d["name"] == "Help: Refund policy")
    assert refund["metadata"]["provider"] == "zendesk"
    assert refund["source_url"].startswith("https://acme.help.sandbox.invalid/")
    hit = search(client, "How long do refunds take?")[0]
    assert hit["document_id"] == refund["id"]
    assert hit["heading"] == "Refund policy"  # the article title is the heading


def test_reimport_leaves_unchanged_articles_alone(tenant, django_capture_on_commit_callbacks):
    client = tenant.client()
    capture = django_capture_on_commit_callbacks
    _import(client, capture, subdomain="acme", max_articles=2)
    with tenant_context(tenant.org):
        chunk_ids = set(Chunk.objects.values_list("pk", flat=True))
    again = _import(client, capture, subdomain="acme", max_articles=3).json()["data"]
    assert (again["articles_found"], again["created"], again["updated"],
            again["unchanged"]) == (3, 1, 0, 2)
    assert len(client.get(DOCS).json()["data"]) == 3
    with tenant_context(tenant.org):  # the two unchanged articles were not re-embedded
        assert chunk_ids <= set(Chunk.objects.values_list("pk", flat=True))


@pytest.mark.parametrize("body", [
    {},
    {"subdomain": ""},
    {"subdomain": "Acme_Support"},
    {"subdomain": "acme.evil.com"},
    {"subdomain": "-acme"},
    {"subdomain": "acme", "provider": "confluence"},
    {"subdomain": "acme", "locale": "english please"},
    {"subdomain": "acme", "max_articles": 0},
    {"subdomain": "acme", "max_articles": 1001},
    {"subdomain": "acme", "name_prefix": "x" * 101},
])
def test_invalid_import_bodies(tenant, body):
    response = tenant.client().post(IMPORT, body, format="json")
    assert response.status_code == 422, response.content
    assert response.json()["error"]["code"] == "VALIDATION_ERROR"


def test_max_articles_bounds_are_inclusive(tenant, django_capture_on_commit_callbacks):
    client = tenant.client()
    one = _import(client, django_capture_on_commit_callbacks, subdomain="acme",
                  max_articles=1, locale="PT-BR")
    assert one.status_code == 201
    assert one.json()["data"]["articles_found"] == 1
    assert one.json()["data"]["locale"] == "pt-br"
    most = _import(client, django_capture_on_commit_callbacks, subdomain="acme",
                   max_articles=1000)
    assert most.status_code == 201
    assert most.json()["data"]["articles_found"] == 6  # the sample has six


# --- live adapters --------------------------------------------------------------------------

@pytest.fixture
def live(tenant_factory):
    return tenant_factory(sandbox=False)


def test_zendesk_live_import_follows_pages(live, site, settings,
                                           django_capture_on_commit_callbacks):
    settings.KNOWLEDGE_ZENDESK_BASE_URL = site.base_url + "/{subdomain}"
    first = "/acme/api/v2/help_center/en-gb/articles.json?per_page=100&sort_by=position" \
            "&sort_order=asc"
    second = "/acme/api/v2/help_center/en-gb/articles.json?page=2&per_page=100"
    site.routes[first] = _json({"articles": [_zendesk_article(1),
                                             _zendesk_article(2, draft=True),
                                             _zendesk_article(3)],
                                "next_page": site.url(second)})
    site.routes[second] = _json({"articles": [_zendesk_article(4), _zendesk_article(5)],
                                 "next_page": None})
    client = live.client()
    response = _import(client, django_capture_on_commit_callbacks, subdomain="acme",
                       locale="en-gb", max_articles=3)
    assert response.status_code == 201, response.content
    result = response.json()["data"]
    assert (result["sandbox"], result["articles_found"], result["created"]) == (False, 3, 3)
    assert [p for p, _ in site.requests] == [first, second]  # stopped at three articles
    names = sorted(d["name"] for d in client.get(DOCS).json()["data"])
    assert names == ["Article 1", "Article 3", "Article 4"]  # the draft is skipped
    with tenant_context(live.org):
        doc = Document.objects.get(external_id="zendesk:1001")
        assert doc.content == "# Article 1\n\nAnswer number 1."  # sanitised, no script
        assert doc.source_url == "https://acme.zendesk.com/hc/en-us/articles/1001"

    site.routes[first] = _json({"articles": [_zendesk_article(1, body="<p>New answer.</p>"),
                                             _zendesk_article(3)], "next_page": None})
    again = _import(client, django_capture_on_commit_callbacks, subdomain="acme",
                    locale="en-gb", max_articles=3).json()["data"]
    assert (again["created"], again["updated"], again["unchanged"]) == (0, 1, 1)
    with tenant_context(live.org):
        changed = Document.objects.get(external_id="zendesk:1001")
        assert "New answer." in changed.content
        assert changed.version == 2  # the article's first text is kept as version 1
        kept = changed.versions.get()
        assert (kept.version, kept.replaced_by) == (1, "import")
        assert kept.content == "# Article 1\n\nAnswer number 1."
        assert Chunk.objects.filter(document__external_id="zendesk:1001",
                                    text__contains="New answer.").exists()


def test_zendesk_next_page_on_another_host_is_not_followed(
        live, site, settings, django_capture_on_commit_callbacks):
    settings.KNOWLEDGE_ZENDESK_BASE_URL = site.base_url + "/{subdomain}"
    site.routes["/acme/api/v2/help_center/en-us/articles.json?per_page=100&sort_by=position"
                "&sort_order=asc"] = _json({"articles": [_zendesk_article(1)],
                                            "next_page": "http://169.254.169.254/steal"})
    response = _import(live.client(), django_capture_on_commit_callbacks, subdomain="acme")
    assert response.status_code == 201
    assert response.json()["data"]["articles_found"] == 1
    assert len(site.requests) == 1


@pytest.mark.parametrize(("reply", "message"), [
    ((404, {}, b"{}"), "not found"),
    ((403, {}, b"{}"), "refused access"),
    ((503, {}, b""), "HTTP 503"),
    ((200, {}, b"<html>not json</html>"), "did not answer JSON"),
    ((200, {}, b'{"results": []}'), "no `articles` list"),
])
def test_an_unreadable_help_center_answers_502_and_writes_nothing(
        live, site, settings, django_capture_on_commit_callbacks, reply, message):
    settings.KNOWLEDGE_ZENDESK_BASE_URL = site.base_url + "/{subdomain}"
    site.routes["/acme/api/v2/help_center/en-us/articles.json?per_page=100&sort_by=position"
                "&sort_order=asc"] = reply
    client = live.client()
    response = _import(client, django_capture_on_commit_callbacks, subdomain="acme")
    assert response.status_code == 502
    error = response.json()["error"]
    assert error["code"] == "KNOWLEDGE_HELP_CENTER_UNAVAILABLE"
    assert message in error["message"]
    assert client.get(DOCS).json()["data"] == []


def test_live_import_refuses_private_targets(live, settings,
                                             django_capture_on_commit_callbacks):
    settings.ALLOW_PRIVATE_WEBHOOK_TARGETS = False
    settings.KNOWLEDGE_ZENDESK_BASE_URL = "http://127.0.0.1:9/{subdomain}"
    response = _import(live.client(), django_capture_on_commit_callbacks, subdomain="acme")
    assert response.status_code == 502
    assert "unsafe_target" in response.json()["error"]["message"]


def test_freshdesk_live_import(live, site, settings, django_capture_on_commit_callbacks):
    settings.KNOWLEDGE_FRESHDESK_BASE_URL = site.base_url + "/{subdomain}"
    base = "/acme/api/v2/solutions"
    site.routes[f"{base}/categories"] = _json([{"id": 7}])
    site.routes[f"{base}/categories/7/folders"] = _json([{"id": 70}])
    site.routes[f"{base}/folders/70/articles?page=1&per_page=100"] = _json([
        {"id": 1, "title": "Published", "description": "<p>Visible answer.</p>",
         "status": 2},
        {"id": 2, "title": "Draft", "description": "<p>Hidden.</p>", "status": 1}])
    client = live.client()
    missing_key = client.post(IMPORT, {"subdomain": "acme", "provider": "freshdesk"},
                              format="json")
    assert missing_key.status_code == 422
    assert missing_key.json()["error"]["details"]["issues"][0]["field"] == "api_key"
    response = _import(client, django_capture_on_commit_callbacks, subdomain="acme",
                       provider="freshdesk", api_key="fd-key")
    assert response.status_code == 201, response.content
    assert response.json()["data"]["created"] == 1
    assert [d["name"] for d in client.get(DOCS).json()["data"]] == ["Published"]
    sent = site.requests[0][1]
    assert sent["Authorization"] == "Basic " + base64.b64encode(b"fd-key:X").decode()
    assert "fd-key" not in json.dumps(response.json())  # the key is never echoed


def test_intercom_live_import(live, site, settings, django_capture_on_commit_callbacks):
    settings.KNOWLEDGE_INTERCOM_BASE_URL = site.base_url
    site.routes["/articles?per_page=100&page=1"] = _json({
        "data": [{"id": "9", "title": "Live chat hours", "body": "<p>Nine to five.</p>",
                  "state": "published", "url": "https://help.acme.test/9"},
                 {"id": "10", "title": "Draft", "body": "<p>x</p>", "state": "draft"}],
        "pages": {"next": site.url("/articles?per_page=100&page=2")}})
    site.routes["/articles?per_page=100&page=2"] = _json({
        "data": [{"id": "11", "title": "Billing", "body": "<p>Monthly.</p>",
                  "state": "published"}], "pages": {}})
    client = live.client()
    response = _import(client, django_capture_on_commit_callbacks, subdomain="acme",
                       provider="intercom", api_key="tok")
    assert response.status_code == 201, response.content
    assert response.json()["data"]["created"] == 2
    assert site.requests[0][1]["Authorization"] == "Bearer tok"
    assert sorted(d["name"] for d in client.get(DOCS).json()["data"]) == [
        "Billing", "Live chat hours"]


def test_a_slow_help_center_is_cut_at_the_budget(live, site, settings,
                                                 django_capture_on_commit_callbacks):
    settings.KNOWLEDGE_ZENDESK_BASE_URL = site.base_url + "/{subdomain}"
    settings.KNOWLEDGE_HELP_CENTER_BUDGET = 0.5

    def hang(_handler):
        site.release.wait(10)  # answers only after the import has given up
        return _json({"articles": [], "next_page": None})

    site.routes["/acme/api/v2/help_center/en-us/articles.json?per_page=100&sort_by=position"
                "&sort_order=asc"] = hang
    response = _import(live.client(), django_capture_on_commit_callbacks, subdomain="acme")
    site.release.set()
    assert response.status_code == 502
    assert "timeout" in response.json()["error"]["message"]
