"""Template routes under the cross-tenant test."""

from tests.cross_tenant import TenantRoute, register

BASE = "/api/v1/messages/templates"
CONTENT = "/api/v1/messages/content-templates"


def _template(tenant) -> str:
    response = tenant.client().post(BASE, {
        "name": "victim_template", "channel": "whatsapp", "language": "en",
        "components": [{"type": "BODY", "text": "Hello {{1}}"}]}, format="json")
    assert response.status_code == 201, response.content
    return response.json()["data"]["id"]


def _content_template(tenant) -> str:
    response = tenant.client().post(CONTENT, {
        "name": "victim", "variants": {"sms": {"body": "Hello {{1}}"}}}, format="json")
    assert response.status_code == 201, response.content
    return response.json()["data"]["id"]


register(TenantRoute(
    name="message-templates", list_url=BASE, detail_url=BASE + "/{id}", create=_template,
    patch_body={"category": "marketing"}, methods=("GET", "PATCH", "DELETE"),
    sub_urls=(BASE + "/{id}/localizations", BASE + "/{id}/analytics"),
))
register(TenantRoute(
    name="templates-alias", list_url="/api/v1/templates", detail_url="/api/v1/templates/{id}",
    create=_template, methods=("GET",), sub_urls=("/api/v1/templates/{id}/analytics",),
))
register(TenantRoute(
    name="content-templates", list_url=CONTENT, detail_url=CONTENT + "/{id}",
    create=_content_template, patch_body={"name": "hijacked"},
    methods=("GET", "PATCH", "DELETE"),
    sub_urls=(CONTENT + "/{id}/render?channel=sms",),
))
