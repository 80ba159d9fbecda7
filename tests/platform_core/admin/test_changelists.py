"""Every console list renders with a search and a filter, in a bounded number of queries."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from platform_core.identity import services
from platform_core.identity.models import User
from platform_core.tenancy.models import Membership, Organization

from .conftest import ADMIN, add_member


def _lists(tenant):
    """(url, query) pairs: a search and a filter each, expected to show `tenant`'s row."""
    org = tenant.org
    return [
        (f"{ADMIN}/organization/", {"q": org.slug, "sandbox__exact": "1", "is_active__exact": "1"},
         org.slug),
        (f"{ADMIN}/organization/", {"q": org.pk}, org.slug),
        (f"{ADMIN}/user/", {"q": tenant.owner.email, "is_staff__exact": "0",
                            "is_superuser__exact": "0", "is_active__exact": "1"},
         tenant.owner.email),
        (f"{ADMIN}/membership/", {"q": tenant.owner.email, "role__exact": "owner"},
         tenant.owner.email),
        (f"{ADMIN}/membership/", {"q": org.slug, "organization": org.pk}, tenant.owner.email),
        (f"{ADMIN}/apikey/", {"q": "Default", "type__exact": "secret", "mode__exact": "test",
                              "status": "active", "organization": org.pk},
         f"{tenant.key.prefix}…{tenant.key.last4}"),
        (f"{ADMIN}/apikey/", {"q": org.slug}, f"{tenant.key.prefix}…{tenant.key.last4}"),
        (f"{ADMIN}/usersession/", {"q": tenant.owner.email, "status": "live",
                                   "organization": org.pk}, tenant.owner.email),
        (f"{ADMIN}/auditlogentry/", {"q": "organization.created", "action__exact":
                                     "organization.created", "actor_type": "system",
                                     "organization": org.pk}, org.pk),
        (f"{ADMIN}/auditlogentry/", {"q": org.pk}, "organization.created"),
    ]


def _with_session(tenant):
    services.session_start(user=tenant.owner, organization=tenant.org, ip="203.0.113.9",
                           user_agent="pytest")
    return tenant


def test_each_list_renders_with_search_and_filter(console, tenant_factory):
    tenant = _with_session(tenant_factory())
    _with_session(tenant_factory())  # another tenant, whose rows the filters must drop
    for url, params, expected in _lists(tenant):
        response = console.get(url, params)
        assert response.status_code == 200, (url, params, response.content[:500])
        html = response.content.decode()
        assert expected in html, (url, params)
        rows = list(response.context["cl"].result_list)
        assert rows, (url, params)
        # The search and filters narrow the list to this tenant's rows.
        assert {_tenant_of(row) for row in rows} <= {tenant.org.pk}, (url, params)


def _tenant_of(row) -> str | None:
    if isinstance(row, Organization):
        return row.pk
    if isinstance(row, User):
        return Membership.objects.dangerously_unscoped().get(user=row).organization_id
    return row.organization_id


def test_session_search_by_ip_address(console, tenant):
    _with_session(tenant)
    response = console.get(f"{ADMIN}/usersession/", {"q": "203.0.113"})
    assert response.status_code == 200
    assert response.context["cl"].result_count == 1


def test_audit_log_date_hierarchy(console, tenant):
    created = tenant.org.created_at
    response = console.get(f"{ADMIN}/auditlogentry/",
                           {"created_at__year": created.year, "created_at__month": created.month})
    assert response.status_code == 200
    assert response.context["cl"].result_count >= 1


LIST_URLS = ["organization", "user", "membership", "apikey", "usersession", "auditlogentry"]


def _count_queries(console, url) -> int:
    with CaptureQueriesContext(connection) as ctx:
        response = console.get(url)
    assert response.status_code == 200
    return len(ctx.captured_queries)


@pytest.mark.parametrize("model", LIST_URLS)
def test_list_queries_do_not_grow_with_rows(console, tenant_factory, model):
    url = f"{ADMIN}/{model}/"
    _with_session(tenant_factory())
    console.get(url)  # warm per-process caches (content types, permissions)
    few = _count_queries(console, url)
    for _ in range(12):
        tenant = _with_session(tenant_factory())
        add_member(tenant)
    many = _count_queries(console, url)
    assert many == few, f"{model}: {few} queries with 1 tenant, {many} with 13"
    assert many <= 10


@pytest.mark.parametrize("model", ["organization", "user"])
def test_change_page_with_many_members_is_bounded(console, tenant, model,
                                                  django_assert_max_num_queries):
    for _ in range(15):
        add_member(tenant)
    obj = tenant.org if model == "organization" else tenant.owner
    with django_assert_max_num_queries(12):
        response = console.get(f"{ADMIN}/{model}/{obj.pk}/change/")
    assert response.status_code == 200
