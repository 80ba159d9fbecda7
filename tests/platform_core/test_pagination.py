"""Cursor pagination over a keyset (Document 1, 2.2 and 8), walked through the API."""

from __future__ import annotations

import hashlib
import secrets

import pytest
from django.core import signing

from platform_core.identity.models import APIKey


def _seed_keys(tenant, count: int) -> set[str]:
    rows = [
        APIKey(
            organization=tenant.org,
            name=f"k{i}",
            type="secret",
            mode="test",
            prefix="svc_test_sk_x",
            last4="abcd",
            key_hash=hashlib.sha256(secrets.token_bytes(16)).hexdigest(),
            scopes=["*"],
        )
        for i in range(count)
    ]
    APIKey.objects.dangerously_unscoped().bulk_create(rows)
    return {r.pk for r in rows} | {tenant.key.pk}


def _walk(client, url: str) -> list[dict]:
    seen, cursor, pages = [], None, 0
    while True:
        response = client.get(url, {"limit": 37, **({"cursor": cursor} if cursor else {})})
        assert response.status_code == 200, response.content
        body = response.json()
        seen.extend(body["data"])
        pagination = body["meta"]["pagination"]
        pages += 1
        if not pagination["has_more"]:
            assert pagination["cursor"] is None
            return seen
        cursor = pagination["cursor"]
        assert pages < 100


def test_walk_visits_every_row_exactly_once_in_order(tenant, other_tenant):
    expected = _seed_keys(tenant, 300)
    _seed_keys(other_tenant, 20)
    rows = _walk(tenant.client(), "/api/v1/api-keys")
    ids = [r["id"] for r in rows]
    assert len(ids) == len(set(ids)) == 301
    assert set(ids) == expected
    assert ids == sorted(ids, reverse=True)  # newest first, ULID order


def test_first_page_meta_and_total_when_cheap(tenant):
    _seed_keys(tenant, 30)
    body = tenant.client().get("/api/v1/api-keys", {"limit": 10}).json()
    assert len(body["data"]) == 10
    assert body["meta"]["pagination"]["has_more"] is True
    assert body["meta"]["pagination"]["total"] == 31
    assert isinstance(body["meta"]["pagination"]["cursor"], str)


def test_limit_defaults_clamps_and_rejects(tenant):
    _seed_keys(tenant, 230)
    client = tenant.client()
    assert len(client.get("/api/v1/api-keys").json()["data"]) == 25
    assert len(client.get("/api/v1/api-keys", {"limit": 1000}).json()["data"]) == 200
    for bad in ("0", "-3", "ten"):
        response = client.get("/api/v1/api-keys", {"limit": bad})
        assert response.status_code == 400
        assert response.json()["error"]["code"] == "VALIDATION_ERROR"
        assert response.json()["error"]["details"]["issues"][0]["field"] == "limit"


@pytest.mark.parametrize(
    "mutate",
    [
        lambda c: c[:-2] + ("AA" if not c.endswith("AA") else "BB"),  # altered signature
        lambda c: "garbage",  # malformed
        lambda c: "x" + c,  # altered payload
    ],
)
def test_tampered_or_malformed_cursor_is_400(tenant, mutate):
    _seed_keys(tenant, 40)
    cursor = (
        tenant.client().get("/api/v1/api-keys", {"limit": 5}).json()["meta"]["pagination"]["cursor"]
    )
    response = tenant.client().get("/api/v1/api-keys", {"limit": 5, "cursor": mutate(cursor)})
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "INVALID_CURSOR"


def test_stale_cursor_is_400(tenant, monkeypatch):
    _seed_keys(tenant, 40)
    cursor = (
        tenant.client().get("/api/v1/api-keys", {"limit": 5}).json()["meta"]["pagination"]["cursor"]
    )
    import time_machine

    with time_machine.travel("2099-01-01"):
        response = tenant.client().get("/api/v1/api-keys", {"limit": 5, "cursor": cursor})
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "INVALID_CURSOR"


def test_cursor_with_other_filters_is_refused(tenant):
    _seed_keys(tenant, 40)
    cursor = (
        tenant.client().get("/api/v1/api-keys", {"limit": 5}).json()["meta"]["pagination"]["cursor"]
    )
    response = tenant.client().get("/api/v1/api-keys", {"limit": 5, "cursor": cursor, "x": "1"})
    assert response.json()["error"]["code"] == "INVALID_CURSOR"


def test_cursor_is_opaque_and_never_offset(tenant, django_assert_max_num_queries):
    _seed_keys(tenant, 60)
    client = tenant.client()
    cursor = client.get("/api/v1/api-keys", {"limit": 5}).json()["meta"]["pagination"]["cursor"]
    payload = signing.loads(cursor, salt="platform.cursor.v1")
    assert "offset" not in str(payload).lower()
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    first = {row["id"] for row in client.get("/api/v1/api-keys", {"limit": 5}).json()["data"]}
    with CaptureQueriesContext(connection) as ctx:
        response = client.get("/api/v1/api-keys", {"limit": 5, "cursor": cursor})
    assert response.status_code == 200
    second = {row["id"] for row in response.json()["data"]}
    assert len(second) == 5
    assert not second & first
    sql = " ".join(q["sql"] for q in ctx.captured_queries).upper()
    assert "APIKEY" in sql  # the page really was read
    assert "OFFSET" not in sql


def test_list_query_count_is_constant(tenant, django_assert_max_num_queries):
    _seed_keys(tenant, 5)
    with django_assert_max_num_queries(4):
        tenant.client().get("/api/v1/api-keys", {"limit": 200})
    _seed_keys(tenant, 150)
    with django_assert_max_num_queries(4):
        tenant.client().get("/api/v1/api-keys", {"limit": 200})


def test_offset_pagination_shape():
    from rest_framework.request import Request
    from rest_framework.test import APIRequestFactory

    from platform_core.api.pagination import OffsetPagination

    paginator = OffsetPagination()
    request = Request(APIRequestFactory().get("/", {"limit": 2, "offset": 3}))
    page = paginator.paginate_queryset(list(range(10)), request)
    assert page == [3, 4]
    assert paginator.get_paginated_response(page).data == {
        "items": [3, 4],
        "total": 10,
        "limit": 2,
        "offset": 3,
    }


def test_reused_output_serializer_matches_drf(tenant):
    """The output fast path (api/serialization.py) renders exactly what DRF renders."""
    from platform_core.api.serialization import represent
    from platform_core.identity.api.serializers import APIKeySerializer, SessionSerializer
    from platform_core.identity.models import UserSession

    _seed_keys(tenant, 3)
    keys = list(APIKey.objects.for_organization(tenant.org))
    assert represent(APIKeySerializer, keys, many=True) == APIKeySerializer(keys, many=True).data
    tenant.session_client()
    session = UserSession.objects.for_organization(tenant.org).first()
    context = {"current_session_id": session.pk}
    assert represent(SessionSerializer, session, context=context) == SessionSerializer(
        session, context=context
    ).data


def test_cursor_of_another_list_is_refused(tenant):
    _seed_keys(tenant, 40)
    cursor = tenant.client().get("/api/v1/api-keys", {"limit": 5}).json()["meta"]["pagination"][
        "cursor"
    ]
    response = tenant.client().get("/api/v1/files", {"limit": 5, "cursor": cursor})
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "INVALID_CURSOR"
