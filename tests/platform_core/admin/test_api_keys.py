"""API keys in the console: never the secret nor its digest; revoking is immediate."""

from __future__ import annotations

import pytest
from django.test import Client

from platform_core.audit.models import AuditLogEntry
from platform_core.identity.models import APIKey

from .conftest import ADMIN

KEYS = f"{ADMIN}/apikey/"
ORG_URL = "/api/v1/organization"


def _assert_no_secret(response, tenant):
    html = response.content.decode()
    assert tenant.key.key_hash not in html
    assert tenant.raw_key not in html
    # Not even a long piece of either.
    assert tenant.key.key_hash[:16] not in html
    assert tenant.raw_key[16:-4] not in html


def test_list_shows_prefix_and_last4_never_the_secret(console, tenant):
    response = console.get(KEYS)
    assert response.status_code == 200
    assert f"{tenant.key.prefix}…{tenant.key.last4}" in response.content.decode()
    _assert_no_secret(response, tenant)
    for params in ({"q": tenant.key.name}, {"status": "active"}, {"type__exact": "secret"}):
        response = console.get(KEYS, params)
        assert response.status_code == 200
        _assert_no_secret(response, tenant)


def test_key_page_shows_its_details_never_the_secret(console, tenant):
    response = console.get(f"{KEYS}{tenant.key.pk}/change/")
    assert response.status_code == 200
    html = response.content.decode()
    assert f"{tenant.key.prefix}…{tenant.key.last4}" in html
    assert tenant.org.name in html
    assert "key_hash" not in html
    _assert_no_secret(response, tenant)
    # Read-only: the page has no form field to submit.
    assert 'name="name"' not in html
    assert 'type="submit" value="Save"' not in html


def test_history_page_has_no_secret(console, tenant):
    response = console.get(f"{KEYS}{tenant.key.pk}/history/")
    assert response.status_code == 200
    _assert_no_secret(response, tenant)


def test_no_add_no_edit_no_delete(console, tenant):
    assert console.get(f"{KEYS}add/").status_code == 403
    assert f"{KEYS}add/" not in console.get(KEYS).content.decode()
    response = console.post(f"{KEYS}{tenant.key.pk}/change/", {"name": "renamed"})
    assert response.status_code == 403
    assert console.get(f"{KEYS}{tenant.key.pk}/delete/").status_code == 403
    response = console.post(KEYS, {"action": "delete_selected", "_selected_action": [tenant.key.pk],
                                   "post": "yes"})
    key = APIKey.objects.dangerously_unscoped().get(pk=tenant.key.pk)
    assert key.name == tenant.key.name
    assert key.revoked_at is None


@pytest.mark.parametrize("lookup", ["key_hash", "key_hash__startswith", "key_hash__gt"])
def test_digest_cannot_be_probed_through_the_query_string(console, tenant, lookup):
    response = console.get(KEYS, {lookup: tenant.key.key_hash[:2]})
    # DisallowedModelAdminLookup: the project's bad-request handler answers it.
    assert response.status_code in {400, 422}
    assert tenant.key.prefix not in response.content.decode()


def test_revoke_action_refuses_the_key_at_once(console, tenant, operator):
    api = tenant.client()
    assert api.get(ORG_URL).status_code == 200  # the key's snapshot is now cached
    response = console.post(KEYS, {"action": "revoke_selected",
                                   "_selected_action": [tenant.key.pk]}, follow=True)
    assert response.status_code == 200
    assert "Revoked 1 key(s)." in response.content.decode()

    answer = api.get(ORG_URL)
    assert answer.status_code == 401
    assert answer.json()["error"]["code"] == "INVALID_API_KEY"
    key = APIKey.objects.dangerously_unscoped().get(pk=tenant.key.pk)
    assert key.revoked_at is not None
    entry = AuditLogEntry.objects.get(action="api_key.revoked", target_id=key.pk)
    assert entry.organization_id == tenant.org.pk
    assert entry.actor_id == operator.pk
    assert console.get(KEYS, {"status": "revoked"}).context["cl"].result_count == 1


def test_revoke_leaves_other_keys_alone_and_reports_already_revoked(console, tenant_factory):
    first, second = tenant_factory(), tenant_factory()
    console.post(KEYS, {"action": "revoke_selected", "_selected_action": [first.key.pk]})
    response = console.post(KEYS, {"action": "revoke_selected",
                                   "_selected_action": [first.key.pk]}, follow=True)
    assert "Revoked 0 key(s). 1 already revoked." in response.content.decode()
    assert second.client().get(ORG_URL).status_code == 200
    assert AuditLogEntry.objects.filter(action="api_key.revoked").count() == 1


def test_staff_with_view_permission_only_cannot_revoke(tenant):
    from django.contrib.auth.models import Permission

    tenant.owner.is_staff = True
    tenant.owner.save()
    tenant.owner.user_permissions.add(Permission.objects.get(codename="view_apikey"))
    client = Client()
    client.force_login(tenant.owner)
    response = client.get(KEYS)
    assert response.status_code == 200
    assert "revoke_selected" not in response.content.decode()
    client.post(KEYS, {"action": "revoke_selected", "_selected_action": [tenant.key.pk]})
    assert tenant.client().get(ORG_URL).status_code == 200
