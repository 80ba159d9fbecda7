"""Browser fixtures of the dashboard tests: a real daphne server, headless Chromium, and
signed-in browser contexts.

- `dashboard_server` (one per test module): daphne serving the whole project (HTTP and the
  WebSockets) on the test database, with its own address as PUBLIC_BASE_URL; tests are
  transactional so it sees committed rows.
- `browser` (one per test module): Chromium. Playwright's sync API keeps an event loop in
  this thread while it runs, and Django refuses ORM calls from a thread with a running
  loop; Playwright's loop only runs inside its own calls (greenlets, no concurrency), so
  DJANGO_ALLOW_ASYNC_UNSAFE is set while the module's browser is open.
- `open_as(user, org)`: a new browser context (own cookies) signed in as that member
  through a real session, with consent already given; `page_as` opens its first page.
- `shot(page, name)`: a full-page screenshot under var/screenshots/dashboard/ for review.
- `client_as(user, org)`: a Django test client with a real dashboard session cookie.
- `off_loop(fn, ...)`: run a write from a browser test in a worker thread (see there).
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection
from django.test import Client
from django.utils import timezone

from platform_core.accounts.models import ConsentRecord
from platform_core.identity import dashboard_cookie
from platform_core.identity import services as identity_services
from tests.browser import CHROMIUM_ARGS, MISSING, chromium_executable
from tests.daphne_server import running_daphne

SCREENSHOTS = Path(os.environ.get("SCREENSHOT_DIR", settings.BASE_DIR / "var" / "screenshots"
                                  / "dashboard"))


@pytest.fixture(scope="module")
def dashboard_server(django_db_setup, django_db_blocker, tmp_path_factory) -> str:
    logs = tmp_path_factory.mktemp("daphne")
    with running_daphne(logs, self_base_url=True) as port:
        yield f"http://127.0.0.1:{port}"


@pytest.fixture(scope="module")
def browser():
    if MISSING:
        pytest.skip(MISSING)
    from playwright.sync_api import sync_playwright

    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    playwright = sync_playwright().start()
    browser = playwright.chromium.launch(executable_path=chromium_executable(),
                                         args=CHROMIUM_ARGS)
    try:
        yield browser
    finally:
        browser.close()
        playwright.stop()
        if previous is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


@pytest.fixture
def new_context(browser, dashboard_server):
    """Fresh browser contexts (separate cookie jars), closed after the test."""
    contexts = []

    def make(**options):
        context = browser.new_context(base_url=dashboard_server,
                                      viewport=options.pop("viewport", {"width": 1280,
                                                                        "height": 860}),
                                      **options)
        context.set_default_timeout(15_000)
        contexts.append(context)
        return context

    yield make
    for context in contexts:
        context.close()


def consent(user) -> None:
    ConsentRecord.objects.update_or_create(user=user, defaults={
        "terms_version": settings.DASHBOARD_TERMS_VERSION,
        "privacy_version": settings.DASHBOARD_PRIVACY_VERSION,
        "locale": "en", "organization_id": None, "accepted_at": timezone.now()})


@pytest.fixture
def open_as(new_context, dashboard_server):
    """`open_as(user, org)` -> a browser context signed in as that member."""

    def make(user, org, **options):
        consent(user)
        _session, token = identity_services.session_start(
            user=user, organization=org, ip="127.0.0.1", user_agent="playwright")
        context = new_context(**options)
        context.add_cookies([{"name": dashboard_cookie.COOKIE_NAME, "value": token,
                              "url": dashboard_server, "httpOnly": True,
                              "secure": settings.DASHBOARD_COOKIE_SECURE, "sameSite": "Lax"}])
        return context

    return make


@pytest.fixture
def page_as(open_as):
    def make(user, org, path: str = "/dashboard/", **options):
        page = open_as(user, org, **options).new_page()
        page.goto(path)
        return page

    return make


def shot(page, name: str) -> Path:
    """Save a full-page screenshot of the current screen for review."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


def client_as(user, org, **options) -> Client:
    """A Django test client carrying a real dashboard session cookie (consent given)."""
    consent(user)
    _session, token = identity_services.session_start(
        user=user, organization=org, ip="127.0.0.1", user_agent="test-client")
    client = Client(**options)
    client.cookies[dashboard_cookie.COOKIE_NAME] = token
    return client


def off_loop(function, *args, **kwargs):
    """Run `function` in a worker thread (with its own connection): Playwright keeps an
    event loop in the test's thread, where the event fan-out to the channel layer
    (async_to_sync) refuses to run, so events written there would never go live."""

    def run():
        try:
            return function(*args, **kwargs)
        finally:
            connection.close()

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(run).result()
