"""Another organization's credentials can neither see nor touch an object (see cross_tenant)."""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

import pytest

from tests.cross_tenant import ROUTES, listed_ids

# Import every app's tenant_routes module so its routes are registered.
for module in pkgutil.walk_packages([str(Path(__file__).parent)], prefix="tests."):
    if module.name.endswith(".tenant_routes"):
        importlib.import_module(module.name)


@pytest.mark.parametrize("route", ROUTES, ids=[r.name for r in ROUTES])
def test_other_tenant_cannot_reach_object(route, tenant, other_tenant):
    object_id = route.create(tenant)
    url = route.detail_url.format(id=object_id)
    intruder = other_tenant.client()
    unknown_url = route.detail_url.format(id=object_id[:-4] + "ZZZZ")

    if route.list_url:
        response = intruder.get(route.list_url)
        assert response.status_code == 200, response.content
        assert object_id not in listed_ids(response)

    for method in route.methods:
        call = getattr(intruder, method.lower())
        kwargs = {"format": "json"}
        if method in ("PATCH", "PUT", "POST"):
            kwargs["data"] = route.patch_body
        response = call(url, **kwargs)
        unknown = call(unknown_url, **kwargs)
        assert response.status_code == 404, (method, response.content)
        body, unknown_body = response.json(), unknown.json()
        assert body["error"]["code"] == "NOT_FOUND"
        # Indistinguishable from an id that does not exist at all.
        assert (body["error"]["code"], body["error"]["message"]) == (
            unknown_body["error"]["code"],
            unknown_body["error"]["message"],
        )

    for sub in route.sub_urls:
        response = intruder.get(sub.format(id=object_id))
        assert response.status_code == 404, (sub, response.content)

    # The owner still sees it, unchanged by the attempts.
    if "GET" in route.methods:
        assert tenant.client().get(url).status_code == 200
