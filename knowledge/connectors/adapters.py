"""Page sources of the connectors: live HTTP clients per vendor API and sandbox doubles.

A sandbox organization (or a test-mode one) never calls a vendor: its connectors read the
sandbox double, which serves `config.sandbox_pages` when given (a list of `{id, title,
content}`) or three fixed pages per system. Live adapters call the vendors' public APIs
through the platform's hardened provider client (SSRF-checked and pinned, bounded time and
body, retries with backoff, a circuit breaker per host). The API roots can be pointed
elsewhere with the KNOWLEDGE_CONNECTOR_API_ROOTS setting (the tests' local fakes).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode

from django.conf import settings

from knowledge import extract
from platform_core.net import provider_client

API_ROOTS = {
    "notion": "https://api.notion.com",
    "google_drive": "https://www.googleapis.com",
    "sharepoint": "https://graph.microsoft.com",
    "sharepoint_login": "https://login.microsoftonline.com",
    "zendesk_guide": "https://{subdomain}.zendesk.com",
}
NOTION_VERSION = "2022-06-28"
# Small pages: the hardened client reads at most 256 KB of an answer.
PAGE_SIZE = 10
MAX_REQUESTS = 200


class ConnectorError(Exception):
    """The external system refused or answered something unreadable."""


@dataclass(frozen=True)
class Page:
    external_id: str
    title: str
    text: str  # plain text or markdown, already converted
    url: str = ""
    updated_at: str = ""


def _root(name: str, **fmt: str) -> str:
    roots = {**API_ROOTS, **getattr(settings, "KNOWLEDGE_CONNECTOR_API_ROOTS", {})}
    return roots[name].format(**fmt).rstrip("/")


def _call(kind: str, method: str, url: str, *, headers: dict[str, str],
          body: Any = None, form: dict[str, str] | None = None, raw: bool = False) -> Any:
    content = b""
    headers = dict(headers)
    if body is not None:
        content = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    elif form is not None:
        content = urlencode(form).encode()
        headers["Content-Type"] = "application/x-www-form-urlencoded"
    response = provider_client.request(f"kb_{kind}", method, url, content=content,
                                       headers={"Accept": "application/json", **headers})
    if not response.ok:
        raise ConnectorError(f"{kind} answered HTTP {response.status_code}.")
    if raw:
        return response.text
    data = response.json()
    if not isinstance(data, dict):
        raise ConnectorError(f"{kind} answered something that is not a JSON object.")
    return data


def _basic(user: str, secret: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{secret}".encode()).decode()


class Adapter:
    kind = ""

    def __init__(self, config: dict[str, Any], credentials: dict[str, Any]) -> None:
        self.config, self.credentials = config, credentials

    def pages(self) -> Iterator[Page]:  # pragma: no cover - every adapter defines it
        raise NotImplementedError


class Confluence(Adapter):
    """GET /wiki/api/v2/spaces/{id}/pages?body-format=storage, cursor in `_links.next`."""

    kind = "confluence"

    def pages(self) -> Iterator[Page]:
        site = self.config["site_url"].rstrip("/")
        auth = {"Authorization": _basic(self.credentials["email"],
                                        self.credentials["api_token"])}
        url = (f"{site}/wiki/api/v2/spaces/{quote(str(self.config['space_id']))}/pages?"
               f"body-format=storage&limit={PAGE_SIZE}")
        for _ in range(MAX_REQUESTS):
            data = _call(self.kind, "GET", url, headers=auth)
            for item in data.get("results") or []:
                html = ((item.get("body") or {}).get("storage") or {}).get("value") or ""
                webui = (item.get("_links") or {}).get("webui") or ""
                yield Page(str(item["id"]), item.get("title") or "Untitled",
                           extract.html_to_text(html), f"{site}/wiki{webui}" if webui else "",
                           str((item.get("version") or {}).get("createdAt") or ""))
            following = (data.get("_links") or {}).get("next")
            if not following:
                return
            url = f"{site}{following}"


def _notion_text(rich: list[dict[str, Any]]) -> str:
    return "".join(part.get("plain_text") or "" for part in rich or [])


_NOTION_PREFIX = {"heading_1": "# ", "heading_2": "## ", "heading_3": "### ",
                  "bulleted_list_item": "- ", "numbered_list_item": "1. ", "quote": "> ",
                  "to_do": "- ", "paragraph": "", "callout": "", "code": "", "toggle": ""}


class Notion(Adapter):
    """POST /v1/search (pages shared with the integration), then each page's top-level
    blocks (GET /v1/blocks/{id}/children) as markdown."""

    kind = "notion"

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.credentials['token']}",
                "Notion-Version": NOTION_VERSION}

    def _blocks(self, page_id: str) -> str:
        root, lines, cursor = _root("notion"), [], None
        for _ in range(MAX_REQUESTS):
            query = f"page_size=100&start_cursor={quote(cursor)}" if cursor else "page_size=100"
            data = _call(self.kind, "GET", f"{root}/v1/blocks/{quote(page_id)}/children?{query}",
                         headers=self._headers())
            for block in data.get("results") or []:
                kind = block.get("type")
                if kind in _NOTION_PREFIX:
                    text = _notion_text((block.get(kind) or {}).get("rich_text"))
                    if text:
                        lines.append(_NOTION_PREFIX[kind] + text)
            if not data.get("has_more"):
                break
            cursor = data.get("next_cursor")
        return "\n\n".join(lines)

    def pages(self) -> Iterator[Page]:
        root, cursor = _root("notion"), None
        for _ in range(MAX_REQUESTS):
            body: dict[str, Any] = {"filter": {"property": "object", "value": "page"},
                                    "page_size": PAGE_SIZE}
            if cursor:
                body["start_cursor"] = cursor
            data = _call(self.kind, "POST", f"{root}/v1/search", headers=self._headers(),
                         body=body)
            for item in data.get("results") or []:
                title = next((_notion_text(p.get("title")) for p in
                              (item.get("properties") or {}).values()
                              if p.get("type") == "title"), "") or "Untitled"
                yield Page(str(item["id"]), title, self._blocks(str(item["id"])),
                           item.get("url") or "", item.get("last_edited_time") or "")
            if not data.get("has_more"):
                return
            cursor = data.get("next_cursor")


class GoogleDrive(Adapter):
    """GET /drive/v3/files in one folder; Google Docs exported as text/plain, text,
    markdown and HTML files downloaded (alt=media); other files skipped."""

    kind = "google_drive"
    EXPORTED = {"application/vnd.google-apps.document"}
    DOWNLOADED = {"text/plain", "text/markdown", "text/html"}

    def pages(self) -> Iterator[Page]:
        root = _root("google_drive")
        headers = {"Authorization": f"Bearer {self.credentials['access_token']}"}
        q = f"'{self.config['folder_id']}' in parents and trashed = false"
        token = None
        for _ in range(MAX_REQUESTS):
            params = {"q": q, "pageSize": str(PAGE_SIZE), "fields":
                      "nextPageToken,files(id,name,mimeType,modifiedTime,webViewLink)"}
            if token:
                params["pageToken"] = token
            data = _call(self.kind, "GET", f"{root}/drive/v3/files?{urlencode(params)}",
                         headers=headers)
            for item in data.get("files") or []:
                mime, file_id = item.get("mimeType"), quote(str(item["id"]))
                if mime in self.EXPORTED:
                    url = f"{root}/drive/v3/files/{file_id}/export?mimeType=text%2Fplain"
                elif mime in self.DOWNLOADED:
                    url = f"{root}/drive/v3/files/{file_id}?alt=media"
                else:
                    continue
                text = _call(self.kind, "GET", url, headers=headers, raw=True)
                if mime == "text/html":
                    text = extract.html_to_text(text)
                yield Page(str(item["id"]), item.get("name") or "Untitled", text.strip(),
                           item.get("webViewLink") or "", item.get("modifiedTime") or "")
            token = data.get("nextPageToken")
            if not token:
                return


class SharePoint(Adapter):
    """App-only token (client credentials), then GET
    /v1.0/sites/{id}/pages/microsoft.graph.sitePage?$expand=canvasLayout; the text web
    parts' HTML becomes the page text; `@odata.nextLink` pages on."""

    kind = "sharepoint"

    def _token(self) -> str:
        creds = self.credentials
        data = _call(self.kind, "POST", f"{_root('sharepoint_login')}/"
                     f"{quote(creds['tenant_id'])}/oauth2/v2.0/token", headers={}, form={
                         "client_id": creds["client_id"], "client_secret": creds["client_secret"],
                         "scope": "https://graph.microsoft.com/.default",
                         "grant_type": "client_credentials"})
        if not data.get("access_token"):
            raise ConnectorError("sharepoint gave no access token.")
        return data["access_token"]

    def pages(self) -> Iterator[Page]:
        headers = {"Authorization": f"Bearer {self._token()}"}
        url = (f"{_root('sharepoint')}/v1.0/sites/{quote(str(self.config['site_id']))}/pages/"
               f"microsoft.graph.sitePage?$expand=canvasLayout&$top={PAGE_SIZE}")
        for _ in range(MAX_REQUESTS):
            data = _call(self.kind, "GET", url, headers=headers)
            for item in data.get("value") or []:
                parts = [part.get("innerHtml") or ""
                         for section in ((item.get("canvasLayout") or {})
                                         .get("horizontalSections") or [])
                         for column in section.get("columns") or []
                         for part in column.get("webparts") or []]
                yield Page(str(item["id"]), item.get("title") or "Untitled",
                           extract.html_to_text("\n".join(parts)), item.get("webUrl") or "",
                           item.get("lastModifiedDateTime") or "")
            url = data.get("@odata.nextLink")
            if not url:
                return


class ZendeskGuide(Adapter):
    """GET /api/v2/help_center[/{locale}]/articles.json; drafts skipped; `next_page`."""

    kind = "zendesk_guide"

    def pages(self) -> Iterator[Page]:
        root = _root("zendesk_guide", subdomain=str(self.config["subdomain"]))
        locale = self.config.get("locale")
        path = f"/api/v2/help_center/{quote(locale)}/articles.json" if locale else \
            "/api/v2/help_center/articles.json"
        auth = {"Authorization": _basic(f"{self.credentials['email']}/token",
                                        self.credentials["api_token"])}
        url = f"{root}{path}?per_page={PAGE_SIZE}"
        for _ in range(MAX_REQUESTS):
            data = _call(self.kind, "GET", url, headers=auth)
            for item in data.get("articles") or []:
                if item.get("draft"):
                    continue
                yield Page(str(item["id"]), item.get("title") or "Untitled",
                           extract.html_to_text(item.get("body") or ""),
                           item.get("html_url") or "", item.get("updated_at") or "")
            url = data.get("next_page")
            if not url:
                return


LIVE: dict[str, type[Adapter]] = {a.kind: a for a in (Confluence, Notion, GoogleDrive,
                                                       SharePoint, ZendeskGuide)}


class Sandbox(Adapter):
    """The double of every system: `config.sandbox_pages` or three fixed pages."""

    def __init__(self, kind: str, config: dict[str, Any], credentials: dict[str, Any]) -> None:
        super().__init__(config, credentials)
        self.kind = kind

    def pages(self) -> Iterator[Page]:
        given = self.config.get("sandbox_pages")
        if given is None:
            given = [{"id": f"{self.kind}-{n}", "title": f"Sandbox {self.kind} page {n}",
                      "content": f"# Sandbox page {n}\n\nThis {self.kind} page is served by "
                                 f"the sandbox double (page {n} of 3)."}
                     for n in (1, 2, 3)]
        for item in given:
            yield Page(str(item["id"]), str(item.get("title") or "Untitled"),
                       str(item.get("content") or "").strip(),
                       f"https://sandbox.invalid/{self.kind}/{item['id']}", "")


def for_connector(connector) -> Adapter:
    if connector.organization.sandbox:
        return Sandbox(connector.kind, connector.config or {}, connector.credentials)
    return LIVE[connector.kind](connector.config or {}, connector.credentials)
