"""SCIM on django-scim2 (issue 24): the package's hooks carry auth and tenancy, and the
behaviour our view subclasses add over the package's views answers over HTTP."""

from __future__ import annotations

import pytest
from django.conf import settings
from django_scim.settings import scim_settings
from django_scim.utils import get_group_adapter, get_user_adapter

from platform_core.sso.scim import adapters, hooks

from .test_scim import GROUP_SCHEMA, SCIM, USER_SCHEMA, Scim, _scim_error, _token


@pytest.fixture
def scim(tenant) -> Scim:
    return Scim(tenant.org.slug, _token(tenant))


def test_the_package_is_configured_with_our_hooks():
    assert settings.SCIM_SERVICE_PROVIDER["AUTH_CHECK_MIDDLEWARE"].endswith(
        "ScimTokenAuthMiddleware"
    )
    assert scim_settings.AUTH_CHECK_MIDDLEWARE is hooks.ScimTokenAuthMiddleware
    assert scim_settings.GET_EXTRA_MODEL_FILTER_KWARGS_GETTER is hooks.extra_filter_kwargs_getter
    assert get_user_adapter() is adapters.UserAdapter
    assert get_group_adapter() is adapters.GroupAdapter


def test_root_search_spans_users_and_groups(tenant, scim):
    user = scim.create_user("root@example.com")
    group = scim.create_group("developer", [user["id"]]).json()
    body = scim.post(
        "/.search",
        {
            "schemas": ["urn:ietf:params:scim:api:messages:2.0:SearchRequest"],
            "filter": 'displayName eq "developer"',
        },
    )
    assert body.status_code == 200, body.content
    assert [r["id"] for r in body.json()["Resources"]] == [group["id"]]
    everything = scim.post("/.search", {"count": 50}).json()
    ids = {r["id"] for r in everything["Resources"]}
    assert {user["id"], group["id"], tenant.owner.pk} <= ids
    assert everything["totalResults"] == len(ids)


def test_attribute_selection_on_get_list_and_search(scim):
    user = scim.create_user("sel@example.com", displayName="Sel")
    one = scim.get(f"/Users/{user['id']}", attributes="userName").json()
    assert set(one) == {"schemas", "id", "userName"}
    listed = scim.get("/Users", excludedAttributes="emails,meta").json()["Resources"]
    assert listed
    assert all("emails" not in r and "meta" not in r for r in listed)
    searched = scim.post("/Users/.search", {"attributes": ["displayName"]}).json()
    assert {"schemas", "id", "displayName"} >= set(searched["Resources"][0])
    _scim_error(
        scim.get("/Users", attributes="userName", excludedAttributes="emails"), 400, "invalidValue"
    )


def test_methods_paging_and_paths(tenant, scim, anon):
    response = scim.get("/Users/.search")
    _scim_error(response, 405)
    assert response["Allow"] == "POST"
    response = scim.post(f"/Users/{tenant.owner.pk}", {"schemas": [USER_SCHEMA]})
    _scim_error(response, 405)
    assert "PATCH" in response["Allow"]
    _scim_error(scim.get("/Users", startIndex="x"), 400, "invalidValue")
    assert scim.get("/Users", startIndex=0).json()["startIndex"] == 1
    _scim_error(scim.get(""), 404)
    _scim_error(anon.get(f"/scim/v2/{tenant.org.slug}/Nope"), 401)
    _scim_error(anon.post(f"/scim/v2/{tenant.org.slug}/Bulk"), 401)
    not_patch = scim.client.patch(
        f"{scim.base}/Groups/{scim.create_group('g').json()['id']}",
        data='{"schemas": ["urn:nope"], "Operations": []}',
        content_type=SCIM,
    )
    _scim_error(not_patch, 400, "invalidSyntax")


def test_group_lookup_is_scoped_by_the_package_filter_hook(tenant, other_tenant, scim):
    theirs = Scim(other_tenant.org.slug, _token(other_tenant))
    their_group = theirs.create_group("Theirs").json()
    _scim_error(scim.get(f"/Groups/{their_group['id']}"), 404)
    found = scim.get("/Groups", filter=f'id eq "{their_group["id"]}"').json()
    assert found["totalResults"] == 0
    assert theirs.get(f"/Groups/{their_group['id']}").json()["schemas"] == [GROUP_SCHEMA]
