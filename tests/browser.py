"""Headless Chromium for the browser tests, driven by Playwright's sync API.

Chromium comes from Debian's `chromium` package (never `playwright install`). Without it a
browser test is skipped, unless REQUIRE_BROWSER_TESTS=1 (CI) turns the absence into a
failure.
"""

from __future__ import annotations

import os
import shutil

import pytest

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]


def browser_missing() -> str | None:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is not installed"
    if not (os.path.exists(CHROMIUM) or shutil.which("chromium")):
        return f"no Chromium at {CHROMIUM} (apt-get install chromium)"
    return None


def chromium_executable() -> str:
    return CHROMIUM if os.path.exists(CHROMIUM) else shutil.which("chromium") or CHROMIUM


MISSING = browser_missing()
if MISSING and os.environ.get("REQUIRE_BROWSER_TESTS") == "1":
    raise RuntimeError(f"browser tests required but {MISSING}")

# Every browser test module: `pytestmark = BROWSER_TEST`.
BROWSER_TEST = [pytest.mark.slow, pytest.mark.skipif(MISSING is not None, reason=MISSING or "")]
