"""The tenant-scoping mechanism fails closed and cannot be bypassed by accident."""

from __future__ import annotations

import pytest

from platform_core.api.views import TenantViewSet
from platform_core.identity.models import APIKey
from platform_core.tenancy.context import TenantScopeMissing, tenant_context


def test_scoped_manager_raises_without_a_current_organization(tenant):
    with pytest.raises(TenantScopeMissing):
        list(APIKey.objects.all())


def test_scoped_manager_sees_only_the_current_organization(tenant, other_tenant):
    with tenant_context(tenant.org):
        ids = set(APIKey.objects.values_list("pk", flat=True))
    assert tenant.key.pk in ids
    assert other_tenant.key.pk not in ids


def test_bypass_is_explicit_and_named(tenant, other_tenant):
    ids = set(APIKey.objects.dangerously_unscoped().values_list("pk", flat=True))
    assert {tenant.key.pk, other_tenant.key.pk} <= ids


def test_viewsets_cannot_override_get_queryset():
    with pytest.raises(TypeError, match="scope_queryset"):

        class Sneaky(TenantViewSet):  # noqa: F841
            model = APIKey

            def get_queryset(self):
                return APIKey.objects.dangerously_unscoped()


def test_context_is_reset_after_each_request(tenant):
    from platform_core.tenancy.context import get_current_organization

    assert tenant.client().get("/api/v1/organization").status_code == 200
    assert get_current_organization() is None


def test_organization_comes_from_the_credential_not_the_request(tenant, other_tenant):
    # Headers naming another organization are ignored for API keys.
    response = tenant.client().get(
        "/api/v1/organization", HTTP_X_ORGANIZATION_ID=other_tenant.org.pk
    )
    assert response.json()["data"]["id"] == tenant.org.pk


def test_precompiled_detail_lookup_matches_the_orm(tenant, other_tenant):
    from platform_core.api.fast_lookup import get_in_tenant

    found = get_in_tenant(APIKey, tenant.org.pk, tenant.key.pk)
    with tenant_context(tenant.org):
        expected = APIKey.objects.get(pk=tenant.key.pk)
    assert found is not None
    assert {f.attname: getattr(found, f.attname) for f in APIKey._meta.concrete_fields} == {
        f.attname: getattr(expected, f.attname) for f in APIKey._meta.concrete_fields
    }
    assert found._state.adding is False
    assert get_in_tenant(APIKey, other_tenant.org.pk, tenant.key.pk) is None
    assert get_in_tenant(APIKey, tenant.org.pk, "key_nope") is None


def test_ids_made_in_a_burst_sort_in_creation_order():
    from platform_core.ids import new_id

    ids = [new_id("evt") for _ in range(5000)]
    assert ids == sorted(ids)
    assert len(set(ids)) == len(ids)
