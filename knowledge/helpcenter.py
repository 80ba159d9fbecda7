"""Help-center import: articles of a public help center read through its API (Document 3,
4.2 `/ai/kb/import/help-center`).

Live adapters (every call through the hardened SSRF-safe client, time- and size-capped):
- `zendesk` (default): Zendesk Guide's public Help Center API,
  `GET https://{subdomain}.zendesk.com/api/v2/help_center/{locale}/articles.json`, pages of
  100 followed through `next_page` (same host only); drafts skipped. No credential for a
  public help center.
- `freshdesk`: Freshdesk Solutions API (needs the agent `api_key`):
  categories -> folders -> `GET /api/v2/solutions/folders/{id}/articles`; only published
  articles (`status` 2).
- `intercom`: Intercom Articles API (needs an access token as `api_key`), pages of
  `GET https://api.intercom.io/articles`; only `published` articles.

Test mode (a sandbox organization) never leaves the machine: `SandboxHelpCenter` answers a
fixed set of articles for any subdomain, so an import can be tried end to end.
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from urllib.parse import urlencode, urlsplit

from django.conf import settings

from platform_core.net import http

PROVIDERS = ("zendesk", "freshdesk", "intercom")
KEYED_PROVIDERS = ("freshdesk", "intercom")  # no public API without a credential
DEFAULT_LOCALE = "en-us"
PAGE_TIMEOUT = 15.0  # one API page
TOTAL_BUDGET = 25.0  # the whole read, inside a sync web worker's default 30 s timeout
MAX_PAGE_BYTES = 8 * 1024 * 1024


class HelpCenterError(Exception):
    """The help center could not be read; the message says why (answered as 502)."""


@dataclass(frozen=True)
class Article:
    article_id: str
    title: str
    html: str
    url: str
    locale: str
    updated_at: str


def _base(provider: str, subdomain: str) -> str:
    defaults = {"zendesk": "https://{subdomain}.zendesk.com",
                "freshdesk": "https://{subdomain}.freshdesk.com",
                "intercom": "https://api.intercom.io"}
    template = getattr(settings, f"KNOWLEDGE_{provider.upper()}_BASE_URL", defaults[provider])
    return template.format(subdomain=subdomain).rstrip("/")


class _Reader:
    """GETs JSON pages under one overall deadline."""

    def __init__(self, headers: dict[str, str] | None = None) -> None:
        self.headers = {"Accept": "application/json", **(headers or {})}
        budget = float(getattr(settings, "KNOWLEDGE_HELP_CENTER_BUDGET", TOTAL_BUDGET))
        self.deadline = time.monotonic() + budget

    def get(self, url: str):
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            raise HelpCenterError("The help center took too long to read.")
        try:
            response = http.request("GET", url, headers=self.headers,
                                    timeout=min(PAGE_TIMEOUT, remaining),
                                    max_body=MAX_PAGE_BYTES + 1)
        except http.OutboundError as exc:
            raise HelpCenterError(f"The help center could not be reached ({exc}).") from None
        if response.status_code in (401, 403):
            raise HelpCenterError(f"The help center refused access (HTTP "
                                  f"{response.status_code}); check the subdomain and api_key.")
        if response.status_code == 404:
            raise HelpCenterError("The help center was not found (HTTP 404); check the "
                                  "subdomain and locale.")
        if response.status_code != 200:
            raise HelpCenterError(f"The help center answered HTTP {response.status_code}.")
        if len(response.body) > MAX_PAGE_BYTES:
            raise HelpCenterError("A help-center page was larger than 8 MB.")
        try:
            return json.loads(response.body)
        except ValueError:
            raise HelpCenterError("The help center did not answer JSON.") from None


def _zendesk(subdomain: str, locale: str, api_key: str) -> Iterator[Article]:
    base = _base("zendesk", subdomain)
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    reader = _Reader(headers)
    url: str | None = (f"{base}/api/v2/help_center/{locale}/articles.json?"
                       + urlencode({"per_page": 100, "sort_by": "position",
                                    "sort_order": "asc"}))
    origin = urlsplit(base).netloc
    while url:
        page = reader.get(url)
        if not isinstance(page, dict) or not isinstance(page.get("articles"), list):
            raise HelpCenterError("The help center's answer has no `articles` list.")
        for item in page["articles"]:
            if not isinstance(item, dict) or item.get("draft"):
                continue
            yield Article(str(item.get("id", "")), str(item.get("title") or "Untitled"),
                          str(item.get("body") or ""), str(item.get("html_url") or ""),
                          str(item.get("locale") or locale), str(item.get("updated_at") or ""))
        following = page.get("next_page")
        url = following if isinstance(following, str) and urlsplit(
            following).netloc == origin else None


def _freshdesk(subdomain: str, locale: str, api_key: str) -> Iterator[Article]:
    if not api_key:
        raise HelpCenterError("A Freshdesk import needs the agent `api_key`.")
    base = _base("freshdesk", subdomain) + "/api/v2/solutions"
    token = base64.b64encode(f"{api_key}:X".encode()).decode()
    reader = _Reader({"Authorization": f"Basic {token}"})

    def listing(url: str) -> list[dict]:
        page = reader.get(url)
        if not isinstance(page, list):
            raise HelpCenterError("The help center's answer is not a list.")
        return [item for item in page if isinstance(item, dict)]

    for category in listing(f"{base}/categories"):
        for folder in listing(f"{base}/categories/{category.get('id')}/folders"):
            number = 1
            while True:
                articles = listing(f"{base}/folders/{folder.get('id')}/articles?"
                                   + urlencode({"page": number, "per_page": 100}))
                for item in articles:
                    if item.get("status") != 2:  # 1 draft, 2 published
                        continue
                    article_id = str(item.get("id", ""))
                    yield Article(article_id, str(item.get("title") or "Untitled"),
                                  str(item.get("description") or ""),
                                  f"https://{subdomain}.freshdesk.com/support/solutions/"
                                  f"articles/{article_id}", locale,
                                  str(item.get("updated_at") or ""))
                if len(articles) < 100:
                    break
                number += 1


def _intercom(subdomain: str, locale: str, api_key: str) -> Iterator[Article]:
    if not api_key:
        raise HelpCenterError("An Intercom import needs an access token as `api_key`.")
    reader = _Reader({"Authorization": f"Bearer {api_key}", "Intercom-Version": "2.11"})
    base = _base("intercom", subdomain)
    url: str | None = f"{base}/articles?" + urlencode({"per_page": 100, "page": 1})
    while url:
        page = reader.get(url)
        if not isinstance(page, dict) or not isinstance(page.get("data"), list):
            raise HelpCenterError("The help center's answer has no `data` list.")
        for item in page["data"]:
            if not isinstance(item, dict) or item.get("state") != "published":
                continue
            yield Article(str(item.get("id", "")), str(item.get("title") or "Untitled"),
                          str(item.get("body") or ""), str(item.get("url") or ""),
                          str(item.get("default_locale") or locale),
                          str(item.get("updated_at") or ""))
        pages = page.get("pages") if isinstance(page.get("pages"), dict) else {}
        following = pages.get("next")
        url = following if isinstance(following, str) and urlsplit(
            following).netloc == urlsplit(base).netloc else None


_SANDBOX_ARTICLES = [
    ("Resetting your password", "<h2>From the sign-in page</h2><p>Choose <b>Forgot "
     "password</b>, enter your email address and follow the link we send. The link is "
     "valid for one hour.</p>"),
    ("Refund policy", "<p>Refunds are available within 30 days of purchase and go back to "
     "the original payment method within five business days.</p>"),
    ("Changing your plan", "<p>Owners can upgrade or downgrade the plan from Settings, "
     "Billing. Upgrades apply at once; downgrades at the end of the billing period.</p>"),
    ("Exporting your data", "<p>Settings, Data, Export builds a ZIP of every record; the "
     "download link arrives by email within an hour.</p>"),
    ("Two-factor authentication", "<p>Turn on two-factor authentication under Profile, "
     "Security, and scan the QR code with an authenticator app.</p>"),
    ("Contacting support", "<p>Support answers by chat from 8:00 to 20:00 UTC on weekdays "
     "and by email at any time.</p>"),
]


class SandboxHelpCenter:
    """The test-mode double: the same articles for any subdomain, provider and locale."""

    @staticmethod
    def articles(provider: str, subdomain: str, locale: str) -> Iterator[Article]:
        for number, (title, html) in enumerate(_SANDBOX_ARTICLES, start=1):
            yield Article(f"sandbox-{number}", title, html,
                          f"https://{subdomain}.help.sandbox.invalid/{locale}/articles/"
                          f"{number}", locale, "2026-01-01T00:00:00Z")


ADAPTERS: dict[str, Callable[[str, str, str], Iterator[Article]]] = {
    "zendesk": _zendesk, "freshdesk": _freshdesk, "intercom": _intercom}


def read_articles(*, sandbox: bool, provider: str, subdomain: str, locale: str,
                  max_articles: int, api_key: str = "") -> list[Article]:
    """Up to `max_articles` published articles, in the help center's order."""
    source = SandboxHelpCenter.articles(provider, subdomain, locale) if sandbox else \
        ADAPTERS[provider](subdomain, locale, api_key)
    found: list[Article] = []
    for article in source:
        found.append(article)
        if len(found) >= max_articles:
            break
    return found
