"""Fixtures of the verify tests: HTTP helpers with the after-commit work run."""

from __future__ import annotations

import pytest

from messaging.providers.sandbox import SandboxProvider
from platform_core.events.models import Event

# Live mode: an organization with a Twilio account on the providers' loopback stand-in.
from tests.messaging.test_live import fake, live  # noqa: F401

USER = "+14155550123"
USER_2 = "+14155550124"


@pytest.fixture
def commit(django_capture_on_commit_callbacks):
    def make():
        return django_capture_on_commit_callbacks(execute=True)

    return make


@pytest.fixture
def sandbox_sent(monkeypatch) -> dict[str, str]:
    """The text the test-mode provider (the sandbox double) was handed, by message id: the
    message's stored `body` is redacted, the provider gets the real one."""
    sent: dict[str, str] = {}
    original = SandboxProvider.send

    def spy(self, message, account):
        sent[message.pk] = message.body
        return original(self, message, account)

    monkeypatch.setattr(SandboxProvider, "send", spy)
    return sent


@pytest.fixture
def post(tenant, commit):
    """POST as `tenant` (or `client`) and run the after-commit work (dispatch, fan-out)."""

    def do(path: str, body: dict, *, client=None, **extra):
        with commit():
            return (client or tenant.client()).post(f"/api/v1/verify/{path}", body,
                                                    format="json", **extra)

    return do


@pytest.fixture
def send(post):
    def do(body: dict, **kwargs):
        return post("send", {"channel": "sms", **body}, **kwargs)

    return do


@pytest.fixture
def check(post):
    def do(verification_id: str, code: str, **kwargs):
        return post("check", {"verification_id": verification_id, "code": code}, **kwargs)

    return do


def error_code(response) -> str:
    return response.json()["error"]["code"]


def verify_events(org, prefix: str = "verification.") -> list[Event]:
    rows = Event.objects.for_organization(org).filter(type__startswith=prefix)
    return list(rows.order_by("created_at", "id"))


def wrong(code: str) -> str:
    """A code of the same length that is not `code`."""
    return "".join(str((int(c) + 1) % 10) for c in code)
