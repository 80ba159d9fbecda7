"""The reusable cross-tenant test.

Every app registers its list and detail routes in `tests/<app>/tenant_routes.py`:

    register(TenantRoute(
        name="files",
        list_url="/api/v1/files",
        detail_url="/api/v1/files/{id}",
        create=lambda tenant: <create one object for tenant.org, return its id>,
        patch_body={"name": "x"},            # optional; tried as the other tenant
        methods=("GET", "PATCH", "DELETE"),  # the detail methods the route has
    ))

`tests/test_cross_tenant.py` then proves, for each route, that another organization's
credentials cannot list, read, change or delete the object, and that the object is
unchanged afterwards: every attempt answers exactly like an unknown id (404 NOT_FOUND).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

ROUTES: list[TenantRoute] = []


@dataclass(frozen=True)
class TenantRoute:
    name: str
    detail_url: str
    create: Callable[[Any], str]
    list_url: str | None = None
    patch_body: dict[str, Any] = field(default_factory=dict)
    methods: tuple[str, ...] = ("GET", "PATCH", "DELETE")
    # Extra sub-routes of one object, e.g. "/api/v1/webhooks/{id}/deliveries".
    sub_urls: tuple[str, ...] = ()


def register(route: TenantRoute) -> TenantRoute:
    if any(r.name == route.name for r in ROUTES):
        raise ValueError(f"route {route.name} registered twice")
    ROUTES.append(route)
    return route


def listed_ids(response) -> set[str]:
    data = response.json()["data"]
    items = data["items"] if isinstance(data, dict) and "items" in data else data
    return {item["id"] for item in items}
