"""Document 1, section 5 rules 1-3, 5 and 7: how a request is authenticated, through HTTP."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from .conftest import assert_error, bearer, make_key

ORG_URL = "/api/v1/organization"


def test_x_api_key_authenticates(tenant):
    response = tenant.client().get(ORG_URL)
    assert response.status_code == 200
    body = response.json()
    assert body["data"]["id"] == tenant.org.pk
    assert body["meta"]["request_id"]
    assert body["meta"]["timestamp"]


def test_x_api_key_wins_over_authorization_header(tenant):
    client = APIClient()
    client.credentials(HTTP_X_API_KEY=tenant.raw_key, HTTP_AUTHORIZATION="Bearer eyJgarbage.x.y")
    assert client.get(ORG_URL).status_code == 200

    # And the other way round: a bad X-API-Key is not rescued by a good bearer value.
    session = tenant.session_client()
    token = session._credentials["HTTP_AUTHORIZATION"].split(" ", 1)[1]
    client = APIClient()
    client.credentials(HTTP_X_API_KEY="svc_test_sk_unknown", HTTP_AUTHORIZATION=f"Bearer {token}")
    assert_error(client.get(ORG_URL), 401, "INVALID_API_KEY")


def test_bearer_api_key_works(tenant):
    response = bearer(tenant.raw_key).get(ORG_URL)
    assert response.status_code == 200
    assert response.json()["data"]["id"] == tenant.org.pk


def test_bearer_session_jwt_works(tenant):
    response = tenant.session_client().get(ORG_URL)
    assert response.status_code == 200


def test_garbage_jwt_is_unauthorized_not_tried_as_key(tenant):
    assert_error(bearer("eyJhbGciOiJIUzI1NiJ9.garbage.sig").get(ORG_URL), 401, "UNAUTHORIZED")
    # Even a value that also happens to look like a key after the eyJ is a session token.
    assert_error(bearer("eyJ" + tenant.raw_key).get(ORG_URL), 401, "UNAUTHORIZED")


def test_bearer_value_without_key_prefix_is_unauthorized(tenant):
    assert_error(bearer("sk_something_else").get(ORG_URL), 401, "UNAUTHORIZED")


def test_non_bearer_scheme_is_unauthorized(tenant):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Basic {tenant.raw_key}")
    assert_error(client.get(ORG_URL), 401, "UNAUTHORIZED")


def test_missing_credentials(anon, db):
    response = anon.get(ORG_URL)
    assert_error(response, 401, "UNAUTHORIZED")
    assert response["WWW-Authenticate"].startswith("Bearer")


def test_every_401_carries_www_authenticate(tenant):
    for client in (bearer("eyJbad"), bearer("svc_test_sk_nope")):
        response = client.get(ORG_URL)
        assert response.status_code == 401
        assert response["WWW-Authenticate"].startswith("Bearer")


def test_unknown_key_is_invalid_api_key(tenant):
    assert_error(tenant.client("svc_test_sk_doesnotexist").get(ORG_URL), 401, "INVALID_API_KEY")
    assert_error(tenant.client("not-even-a-key").get(ORG_URL), 401, "INVALID_API_KEY")
    assert_error(bearer("svc_test_sk_doesnotexist").get(ORG_URL), 401, "INVALID_API_KEY")


def test_revoked_key_is_invalid_api_key(tenant):
    raw = make_key(tenant, ["*"])
    assert tenant.client(raw).get(ORG_URL).status_code == 200  # now cached
    key_id = tenant.client(raw).get("/api/v1/api-keys").json()["data"][0]["id"]
    assert tenant.client().delete(f"/api/v1/api-keys/{key_id}").status_code == 204
    assert_error(tenant.client(raw).get(ORG_URL), 401, "INVALID_API_KEY")


def test_live_key_in_sandbox_org_is_wrong_mode(tenant):
    assert tenant.org.sandbox
    live = make_key(tenant, ["*"], mode="live")
    assert live.startswith("svc_live_sk_")
    assert_error(tenant.client(live).get(ORG_URL), 403, "WRONG_KEY_MODE")
    assert_error(bearer(live).get(ORG_URL), 403, "WRONG_KEY_MODE")


def test_test_key_in_live_org_is_wrong_mode(live_tenant):
    assert live_tenant.raw_key.startswith("svc_live_sk_")
    test_key = make_key(live_tenant, ["*"], mode="test")
    assert_error(live_tenant.client(test_key).get(ORG_URL), 403, "WRONG_KEY_MODE")
    assert live_tenant.client().get(ORG_URL).status_code == 200


def test_flipping_sandbox_changes_key_mode_at_once(tenant):
    live = make_key(tenant, ["*"], mode="live")
    test_client, live_client = tenant.client(), tenant.client(live)
    # Warm the authentication cache for both keys.
    assert test_client.get(ORG_URL).status_code == 200
    assert_error(live_client.get(ORG_URL), 403, "WRONG_KEY_MODE")

    response = test_client.patch(ORG_URL, {"sandbox": False}, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["data"]["sandbox"] is False

    assert live_client.get(ORG_URL).status_code == 200
    assert_error(test_client.get(ORG_URL), 403, "WRONG_KEY_MODE")

    # Back again, through the live key this time.
    assert live_client.patch(ORG_URL, {"sandbox": True}, format="json").status_code == 200
    assert test_client.get(ORG_URL).status_code == 200
    assert_error(live_client.get(ORG_URL), 403, "WRONG_KEY_MODE")


def test_sessions_are_not_bound_to_key_mode(tenant):
    client = tenant.session_client()
    assert client.patch(ORG_URL, {"sandbox": False}, format="json").status_code == 200
    assert client.get(ORG_URL).status_code == 200


class TestAllowedIps:
    def test_refused_outside_range(self, tenant):
        raw = make_key(tenant, ["*"], allowed_ips=["10.0.0.0/8"])
        response = tenant.client(raw).get(ORG_URL, REMOTE_ADDR="192.168.1.20")
        assert_error(response, 403, "IP_NOT_ALLOWED")

    def test_accepted_in_range(self, tenant):
        raw = make_key(tenant, ["*"], allowed_ips=["10.0.0.0/8", "2001:db8::/32"])
        assert tenant.client(raw).get(ORG_URL, REMOTE_ADDR="10.20.30.40").status_code == 200
        assert tenant.client(raw).get(ORG_URL, REMOTE_ADDR="2001:db8::1").status_code == 200

    def test_single_address(self, tenant):
        raw = make_key(tenant, ["*"], allowed_ips=["203.0.113.7"])
        assert tenant.client(raw).get(ORG_URL, REMOTE_ADDR="203.0.113.7").status_code == 200
        assert_error(
            tenant.client(raw).get(ORG_URL, REMOTE_ADDR="203.0.113.8"), 403, "IP_NOT_ALLOWED"
        )

    def test_forwarded_for_ignored_unless_trusted(self, tenant, settings):
        raw = make_key(tenant, ["*"], allowed_ips=["10.0.0.0/8"])
        settings.TRUST_X_FORWARDED_FOR = False
        response = tenant.client(raw).get(
            ORG_URL, REMOTE_ADDR="192.168.1.20", HTTP_X_FORWARDED_FOR="10.0.0.1"
        )
        assert_error(response, 403, "IP_NOT_ALLOWED")
        settings.TRUST_X_FORWARDED_FOR = True
        response = tenant.client(raw).get(
            ORG_URL, REMOTE_ADDR="192.168.1.20", HTTP_X_FORWARDED_FOR="10.0.0.1, 192.168.1.20"
        )
        assert response.status_code == 200

    def test_created_through_api(self, tenant):
        response = tenant.client().post(
            "/api/v1/api-keys",
            {"name": "ip", "scopes": ["*"], "allowed_ips": ["10.1.0.0/16"]},
            format="json",
        )
        assert response.status_code == 201, response.content
        raw = response.json()["data"]["key"]
        assert tenant.client(raw).get(ORG_URL, REMOTE_ADDR="10.1.2.3").status_code == 200
        assert_error(tenant.client(raw).get(ORG_URL, REMOTE_ADDR="10.2.2.3"), 403, "IP_NOT_ALLOWED")

    def test_invalid_range_is_422(self, tenant):
        response = tenant.client().post(
            "/api/v1/api-keys",
            {"name": "ip", "scopes": ["*"], "allowed_ips": ["nonsense"]},
            format="json",
        )
        assert_error(response, 422, "VALIDATION_ERROR")


class TestInternalServiceToken:
    TOKEN = "internal-secret-for-tests-0123456789"  # noqa: S105

    @pytest.fixture(autouse=True)
    def _token(self, settings):
        settings.INTERNAL_SERVICE_TOKEN = self.TOKEN

    def client(self, org_ref: str, token: str | None = None) -> APIClient:
        client = APIClient()
        client.credentials(
            HTTP_X_INTERNAL_SERVICE_TOKEN=token or self.TOKEN, HTTP_X_ORGANIZATION_ID=org_ref
        )
        return client

    def test_gives_developer_role(self, tenant):
        client = self.client(tenant.org.pk)
        response = client.get(ORG_URL)
        assert response.status_code == 200
        assert response.json()["data"]["id"] == tenant.org.pk
        # Developers manage API keys ...
        assert client.get("/api/v1/api-keys").status_code == 200
        # ... but not users or organization settings (owner/admin only).
        assert_error(client.get("/api/v1/users"), 403, "INSUFFICIENT_PERMISSIONS")
        assert_error(
            client.patch(ORG_URL, {"name": "x"}, format="json"), 403, "INSUFFICIENT_PERMISSIONS"
        )

    def test_slug_names_the_organization(self, tenant):
        response = self.client(tenant.org.slug).get(ORG_URL)
        assert response.json()["data"]["id"] == tenant.org.pk

    def test_scoped_to_that_organization(self, tenant, other_tenant):
        response = self.client(other_tenant.org.pk).get(ORG_URL)
        assert response.json()["data"]["id"] == other_tenant.org.pk

    def test_wrong_token(self, tenant):
        assert_error(self.client(tenant.org.pk, token="nope").get(ORG_URL), 401, "UNAUTHORIZED")

    def test_unknown_or_missing_organization(self, tenant):
        assert_error(self.client("org_unknown").get(ORG_URL), 401, "UNAUTHORIZED")
        client = APIClient()
        client.credentials(HTTP_X_INTERNAL_SERVICE_TOKEN=self.TOKEN)
        assert_error(client.get(ORG_URL), 401, "UNAUTHORIZED")

    def test_disabled_when_not_configured(self, tenant, settings):
        settings.INTERNAL_SERVICE_TOKEN = ""
        assert_error(self.client(tenant.org.pk, token="anything").get(ORG_URL), 401, "UNAUTHORIZED")


def test_deactivated_organization_refuses_its_credentials(tenant):
    session = tenant.session_client()
    assert tenant.client().get(ORG_URL).status_code == 200
    tenant.org.is_active = False
    tenant.org.save()
    assert_error(tenant.client().get(ORG_URL), 401, "INVALID_API_KEY")
    assert_error(session.get(ORG_URL), 401, "EXPIRED_TOKEN")


def test_snapshot_cached_by_a_racing_request_is_dropped_at_commit(
    tenant, django_capture_on_commit_callbacks
):
    """A request that re-caches the key while the revoking transaction is still open would
    keep it alive for minutes; the second drop at commit prevents that."""
    from django.core.cache import cache
    from django.db import transaction

    from platform_core.identity import credentials, services

    raw = make_key(tenant, ["*"])
    client = tenant.client(raw)
    assert client.get(ORG_URL).status_code == 200
    cache_key = f"auth:key:{credentials.digest(raw)}"
    stale = cache.get(cache_key)
    assert stale is not None
    from platform_core.identity.models import APIKey

    key = APIKey.objects.for_organization(tenant.org).get(key_hash=credentials.digest(raw))
    with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
        services.api_key_revoke(key=key)
        cache.set(cache_key, stale)  # what a concurrent reader would do before our commit
    assert_error(client.get(ORG_URL), 401, "INVALID_API_KEY")
