"""The compliance checker scim2-tester against /scim/v2/{orgSlug}/, through scim2-client's
in-process WSGI engine bound to the Django application (same thread, so inside the test's
database transaction; no network)."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections

scim2_tester = pytest.importorskip("scim2_tester")
from scim2_client.engines.wsgi import WSGISCIMClient  # noqa: E402
from scim2_tester import Status, check_server  # noqa: E402

# Checks skipped on purpose: none (every check of scim2-tester runs and must succeed).
SKIPPED_CHECKS: dict[str, str] = {}


@pytest.fixture
def wsgi_app():
    """The Django WSGI application, keeping the database connection open across requests
    (as Django's own test client does), so requests share the test's transaction."""
    handler = get_wsgi_application()

    def app(environ, start_response):
        request_started.disconnect(close_old_connections)
        request_finished.disconnect(close_old_connections)
        try:
            result = handler(environ, start_response)
            try:
                return [b"".join(result)]
            finally:
                if hasattr(result, "close"):
                    result.close()
        finally:
            request_started.connect(close_old_connections)
            request_finished.connect(close_old_connections)

    return app


@pytest.fixture
def scim_client(tenant, wsgi_app):
    token = tenant.session_client().post("/api/v1/settings/scim/generate-token")
    assert token.status_code == 201, token.content
    return WSGISCIMClient(
        wsgi_app,
        base_url=f"{settings.PUBLIC_BASE_URL}/scim/v2/{tenant.org.slug}",
        headers={"Authorization": f"Bearer {token.json()['data']['token']}"},
    )


def test_scim2_tester_passes(scim_client):
    results = check_server(scim_client)
    failures = [
        r
        for r in results
        if r.status in (Status.ERROR, Status.CRITICAL) and r.title not in SKIPPED_CHECKS
    ]
    report = "\n".join(f"{r.title} [{r.resource_type}]: {r.reason}"[:1500] for r in failures)
    assert not failures, report
    skipped = [(r.title, r.resource_type, r.reason) for r in results if r.status == Status.SKIPPED]
    assert not skipped, skipped
    titles = {r.title for r in results if r.status == Status.SUCCESS}
    # CRUD, PATCH add/remove/replace, attribute selection, search and discovery all ran.
    assert {
        "object_creation",
        "object_replacement",
        "object_deletion",
        "check_add_attribute",
        "check_remove_attribute",
        "check_replace_attribute",
        "search_with_attributes",
        "object_list_with_attributes",
        "query_all_schemas",
        "random_url",
    } <= titles
    assert {r.resource_type for r in results if r.resource_type} == {"User", "Group"}
