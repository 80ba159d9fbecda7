"""WhatsApp routes under the cross-tenant test: connections (keyed by Meta's
phone_number_id) and their calling routes, catalogs, products, flows, inbound calls."""

from platform_core.tenancy.context import tenant_context
from tests.cross_tenant import TenantRoute, register

BASE = "/api/v1/whatsapp"


def _connected(tenant) -> str:
    response = tenant.client().post(f"{BASE}/connect", {"code": "c", "waba_id": "4242424242",
                                                        "business_id": "7777"}, format="json")
    assert response.status_code == 201, response.content
    return next(r["phone_number_id"] for r in response.json()["data"] if r["is_default"])


def _catalog(tenant) -> str:
    _connected(tenant)
    response = tenant.client().post(f"{BASE}/catalogs", {"name": "Victim"}, format="json")
    assert response.status_code == 201, response.content
    return response.json()["data"]["id"]


PRODUCT = {"retailer_id": "SKU-9", "name": "Victim", "price": 100, "currency": "USD",
           "image_url": "https://cdn.example.com/v.png"}


def _product(tenant) -> str:
    catalog = _catalog(tenant)
    response = tenant.client().post(f"{BASE}/catalogs/{catalog}/products", PRODUCT,
                                    format="json")
    assert response.status_code == 201, response.content
    return response.json()["data"]["id"]


def _flow(tenant) -> str:
    _connected(tenant)
    response = tenant.client().post(f"{BASE}/flows", {"name": "Victim",
                                                      "categories": ["OTHER"]}, format="json")
    assert response.status_code == 201, response.content
    return response.json()["data"]["id"]


def _inbound_call(tenant) -> str:
    from messaging.whatsapp.models import Call

    _connected(tenant)
    with tenant_context(tenant.org):
        Call.objects.for_organization(tenant.org).create(
            organization=tenant.org, meta_call_id="wacid.VICTIM0001", direction="inbound",
            from_number="+14155550123", to_number="+15005550006")
    return "wacid.VICTIM0001"


register(TenantRoute(name="whatsapp-connections", list_url=f"{BASE}/connections",
                     detail_url=f"{BASE}/connections/{{id}}", create=_connected,
                     patch_body={"display_name": "stolen"}, methods=("PATCH", "DELETE"),
                     sub_urls=(f"{BASE}/connections/{{id}}/calling",)))
register(TenantRoute(name="whatsapp-connection-default",
                     detail_url=f"{BASE}/connections/{{id}}/default", create=_connected,
                     methods=("PUT",)))
for action in ("enable", "disable", "register-webhook"):
    register(TenantRoute(name=f"whatsapp-calling-{action}",
                         detail_url=f"{BASE}/connections/{{id}}/calling/{action}",
                         create=_connected, methods=("POST",)))
register(TenantRoute(name="whatsapp-catalogs", list_url=f"{BASE}/catalogs",
                     detail_url=f"{BASE}/catalogs/{{id}}", create=_catalog,
                     methods=("DELETE",), sub_urls=(f"{BASE}/catalogs/{{id}}/products",)))
register(TenantRoute(name="whatsapp-products", detail_url=f"{BASE}/products/{{id}}",
                     create=_product, patch_body=PRODUCT, methods=("PUT", "DELETE")))
register(TenantRoute(name="whatsapp-flows", list_url=f"{BASE}/flows",
                     detail_url=f"{BASE}/flows/{{id}}", create=_flow, methods=("GET", "DELETE"),
                     sub_urls=(f"{BASE}/flows/{{id}}/funnel",)))
for action in ("assets", "publish"):
    register(TenantRoute(name=f"whatsapp-flow-{action}",
                         detail_url=f"{BASE}/flows/{{id}}/{action}", create=_flow,
                         patch_body={"flow_json": {"version": "6.0"}}, methods=("POST",)))
for action in ("accept", "decline"):
    register(TenantRoute(name=f"whatsapp-call-{action}",
                         detail_url=f"{BASE}/calling/calls/{{id}}/{action}",
                         create=_inbound_call, methods=("POST",)))
