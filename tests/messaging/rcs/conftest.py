"""Fixtures of the RCS tests: HTTP helpers that run the after-commit work (the sandbox
double's decisions, the send dispatch, the event fan-out), brand and agent factories."""

from __future__ import annotations

import pytest

from platform_core.events.models import Event
from platform_core.tenancy.context import tenant_context

BASE = "/api/v1/rcs"


@pytest.fixture
def commit(django_capture_on_commit_callbacks):
    def make():
        return django_capture_on_commit_callbacks(execute=True)

    return make


@pytest.fixture
def api(tenant, commit):
    """`api(method, path, body=None, client=None)` under /api/v1/rcs, after-commit work run."""

    def do(method: str, path: str, body=None, *, client=None, **extra):
        with commit():
            call = getattr(client or tenant.client(), method.lower())
            if body is None:
                return call(f"{BASE}{path}", **extra)
            return call(f"{BASE}{path}", body, format="json", **extra)

    return do


def ok(response, status: int = 200):
    assert response.status_code == status, response.content
    return response.json()["data"]


def error(response, status: int, code: str):
    assert response.status_code == status, response.content
    body = response.json()
    assert body["error"]["code"] == code, body
    return body["error"]


@pytest.fixture
def brand(api):
    def make(name: str = "Acme Coffee", **fields):
        return ok(api("POST", "/brands", {"name": name, "website": "https://acme.example",
                                          "contact_name": "Ann", "contact_email":
                                          "ann@acme.example", **fields}), 201)

    return make


@pytest.fixture
def agent(api, brand):
    def make(display_name: str = "Acme Bot", *, brand_id: str | None = None, **fields):
        brand_id = brand_id or brand()["id"]
        return ok(api("POST", "/bots", {"brand_id": brand_id, "display_name": display_name,
                                        **fields}), 201)

    return make


def events(tenant, prefix: str = "rcs.") -> list[Event]:
    with tenant_context(tenant.org):
        rows = Event.objects.filter(organization=tenant.org).order_by("created_at", "id")
        return [e for e in rows if e.type.startswith(prefix)]
