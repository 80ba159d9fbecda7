"""Templates CRUD, scopes, filters, summary and the read-only alias (Document 2, 2.3 and 4.3)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from .conftest import BASE, create, error, key_client, sms_body, wa_body


def test_whatsapp_template_starts_pending_with_the_documented_fields(tenant):
    data = create(tenant, wa_body())
    assert data["id"].startswith("tpl_")
    assert {"id", "name", "channel", "status", "category", "language", "components",
            "content"} <= set(data)
    assert (data["name"], data["channel"], data["status"], data["category"],
            data["language"]) == ("order_update", "whatsapp", "pending", "utility", "en")
    assert [c["type"] for c in data["components"]] == ["HEADER", "BODY", "FOOTER", "BUTTONS"]
    assert data["placeholder_count"] == 3
    assert data["content"] is None
    assert tenant.client().get(f"{BASE}/{data['id']}").json()["data"] == data


def test_rcs_template_starts_pending(tenant):
    data = create(tenant, wa_body(channel="rcs", name="Order update"))
    assert data["status"] == "pending"


@pytest.mark.parametrize("channel", ["sms", "email", "mms"])
def test_plain_channel_templates_are_usable_at_once(tenant, channel):
    body = sms_body(channel=channel)
    if channel == "email":
        body["subject"] = "Reminder for {{1}}"
    data = create(tenant, body)
    assert data["status"] == "approved"
    assert data["content"] == "Hi {{1}}, see you at {{2}}."
    assert data["components"] == []
    assert data["decided_at"] is not None


def test_content_on_a_rich_channel_becomes_the_body(tenant):
    data = create(tenant, {"name": "hello", "channel": "whatsapp", "language": "en",
                           "content": "Hello {{1}}"})
    assert data["components"] == [{"type": "BODY", "text": "Hello {{1}}"}]


def test_placeholder_gap_names_the_component_path(tenant):
    body = wa_body(components=[{"type": "BODY", "text": "Hi {{1}}, code {{3}}"}])
    payload = error(tenant.client().post(BASE, body, format="json"), 422, "VALIDATION_ERROR")
    issue = payload["details"]["issues"][0]
    assert issue["field"] == "components.0.text"
    assert "{{2}}" in issue["message"]


def test_gap_across_components_names_the_component_beyond_it(tenant):
    body = wa_body(components=[
        {"type": "HEADER", "format": "TEXT", "text": "Order {{4}}"},
        {"type": "BODY", "text": "Hi {{1}} {{2}}"},
    ])
    payload = error(tenant.client().post(BASE, body, format="json"), 422, "VALIDATION_ERROR")
    assert payload["details"]["issues"][0]["field"] == "components.0.text"


@pytest.mark.parametrize(("components", "field"), [
    ([{"type": "HEADER", "format": "TEXT", "text": "x"}], "components"),  # no BODY
    ([{"type": "BODY", "text": "a"}, {"type": "BODY", "text": "b"}], "components.1.type"),
    ([{"type": "SIDEBAR", "text": "a"}], "components.0.type"),
    ([{"type": "HEADER", "format": "GIF"}, {"type": "BODY", "text": "a"}], "components.0.format"),
    ([{"type": "HEADER", "format": "IMAGE", "text": "no"}, {"type": "BODY", "text": "a"}],
     "components.0.text"),
    ([{"type": "BODY", "text": "x" * 1025}], "components.0.text"),
    ([{"type": "BODY", "text": "a"}, {"type": "FOOTER", "text": "Code {{1}}"}],
     "components.1.text"),
    ([{"type": "BODY", "text": "Hi {{name}}"}], "components.0.text"),
    ([{"type": "BODY", "text": "Hi {{0}}"}], "components.0.text"),
    ([{"type": "BODY", "text": "a"}, {"type": "BUTTONS", "buttons": []}], "components.1.buttons"),
    ([{"type": "BODY", "text": "a"}, {"type": "BUTTONS", "buttons": [
        {"type": "QUICK_REPLY", "text": "x" * 26}]}], "components.1.buttons.0.text"),
    ([{"type": "BODY", "text": "a"}, {"type": "BUTTONS", "buttons": [
        {"type": "CALL_ME", "text": "x"}]}], "components.1.buttons.0.type"),
    ([{"type": "BODY", "text": "a"}, {"type": "BUTTONS", "buttons": [
        {"type": "URL", "text": "Go", "url": "ftp://x"}]}], "components.1.buttons.0.url"),
    ([{"type": "BODY", "text": "a {{1}}"}, {"type": "BUTTONS", "buttons": [
        {"type": "URL", "text": "Go", "url": "https://x.example/{{1}}/a"}]}],
     "components.1.buttons.0.url"),
    ([{"type": "BODY", "text": "a"}, {"type": "BUTTONS", "buttons": [
        {"type": "PHONE_NUMBER", "text": "Call", "phone_number": "555"}]}],
     "components.1.buttons.0.phone_number"),
    ([{"type": "BODY", "text": "a"}, {"type": "BUTTONS", "buttons": [
        {"type": "URL", "text": f"U{i}", "url": "https://x.example"} for i in range(3)]}],
     "components.1.buttons"),
    ([{"type": "BODY", "text": "a"}, {"type": "BUTTONS", "buttons": [
        {"type": "PHONE_NUMBER", "text": f"P{i}", "phone_number": "+15551234567"}
        for i in range(2)]}], "components.1.buttons"),
    ([{"type": "BODY", "text": "a"}, {"type": "BUTTONS", "buttons": [
        {"type": "QUICK_REPLY", "text": f"Q{i}"} for i in range(11)]}], "components.1.buttons"),
    ("not a list", "components"),
])
def test_component_rules(tenant, components, field):
    payload = error(tenant.client().post(BASE, wa_body(components=components), format="json"),
                    422, "VALIDATION_ERROR")
    assert field in [i["field"] for i in payload["details"]["issues"]], payload


def test_button_limits_accept_the_maximum(tenant):
    buttons = ([{"type": "QUICK_REPLY", "text": f"Q{i}"} for i in range(7)]
               + [{"type": "URL", "text": f"U{i}", "url": "https://x.example"} for i in range(2)]
               + [{"type": "PHONE_NUMBER", "text": "Call", "phone_number": "+15551234567"}])
    data = create(tenant, wa_body(components=[{"type": "BODY", "text": "a"},
                                              {"type": "BUTTONS", "buttons": buttons}]))
    assert len(data["components"][1]["buttons"]) == 10


def test_plain_content_placeholder_gap(tenant):
    payload = error(tenant.client().post(BASE, sms_body(content="Hi {{2}}"), format="json"),
                    422, "VALIDATION_ERROR")
    assert payload["details"]["issues"][0]["field"] == "content"


@pytest.mark.parametrize(("body", "field"), [
    (sms_body(components=[{"type": "BODY", "text": "x"}]), "components"),
    (sms_body(content=None), "content"),
    (sms_body(subject="only email"), "subject"),
    (wa_body(name="Order Update"), "name"),
    (wa_body(language="english!"), "language"),
    (wa_body(category="spam"), "category"),
    (sms_body(waba_id="123"), "waba_id"),
    ({"name": "x", "language": "en", "content": "x"}, "channel"),
])
def test_field_rules(tenant, body, field):
    payload = error(tenant.client().post(BASE, body, format="json"), 422, "VALIDATION_ERROR")
    assert field in [i["field"] for i in payload["details"]["issues"]]


def test_one_variant_per_channel_name_language(tenant):
    create(tenant, wa_body())
    error(tenant.client().post(BASE, wa_body(), format="json"), 409, "ALREADY_EXISTS")
    # Another language or channel is another variant.
    assert create(tenant, wa_body(language="fr"))["language"] == "fr"
    assert create(tenant, wa_body(channel="rcs"))["channel"] == "rcs"


def test_scopes(tenant):
    template = create(tenant, wa_body())
    reader = key_client(tenant, ["templates:read"])
    assert reader.get(BASE).status_code == 200
    assert reader.get(f"{BASE}/{template['id']}").status_code == 200
    assert reader.get(f"{BASE}/summary").status_code == 200
    assert reader.get("/api/v1/templates").status_code == 200
    error(reader.post(BASE, sms_body(), format="json"), 403, "INSUFFICIENT_PERMISSIONS")
    error(reader.patch(f"{BASE}/{template['id']}", {"category": "marketing"}, format="json"),
          403, "INSUFFICIENT_PERMISSIONS")
    error(reader.delete(f"{BASE}/{template['id']}"), 403, "INSUFFICIENT_PERMISSIONS")
    error(reader.post(f"{BASE}/{template['id']}/localize", {"locales": ["fr"]}, format="json"),
          403, "INSUFFICIENT_PERMISSIONS")
    outsider = key_client(tenant, ["contacts:read"])
    error(outsider.get(BASE), 403, "INSUFFICIENT_PERMISSIONS")
    error(outsider.get("/api/v1/templates"), 403, "INSUFFICIENT_PERMISSIONS")
    writer = key_client(tenant, ["templates:write"])
    assert writer.post(BASE, sms_body(), format="json").status_code == 201
    assert writer.get(BASE).status_code == 200  # write implies read


def test_session_user_can_manage_templates(tenant):
    client = tenant.session_client()
    data = create(tenant, sms_body(), client=client)
    assert client.get(f"{BASE}/{data['id']}").status_code == 200


def _ids(response) -> list[str]:
    assert response.status_code == 200, response.content
    return [row["id"] for row in response.json()["data"]]


def test_list_filters(tenant):
    wa = create(tenant, wa_body(waba_id="555"))
    wa_fr = create(tenant, wa_body(language="fr"))
    sms = create(tenant, sms_body())
    email = create(tenant, sms_body(channel="email", name="Receipt",
                                    content="Your receipt for {{1}}"))
    client = tenant.client()
    assert _ids(client.get(BASE)) == [email["id"], sms["id"], wa_fr["id"], wa["id"]]
    assert set(_ids(client.get(BASE, {"channel": "whatsapp"}))) == {wa["id"], wa_fr["id"]}
    assert set(_ids(client.get(BASE, {"channel": "sms,email"}))) == {sms["id"], email["id"]}
    assert set(_ids(client.get(BASE, {"status": "approved"}))) == {sms["id"], email["id"]}
    assert _ids(client.get(BASE, {"waba_id": "555"})) == [wa["id"]]
    assert set(_ids(client.get(BASE, {"search": "ORDER"}))) == {wa["id"], wa_fr["id"]}
    assert _ids(client.get(BASE, {"search": "receipt for"})) == [email["id"]]
    assert set(_ids(client.get(BASE, {"search": "SHIPS ON"}))) == {wa["id"], wa_fr["id"]}
    assert _ids(client.get(BASE, {"language": "fr"})) == [wa_fr["id"]]
    error(client.get(BASE, {"channel": "pigeon"}), 400, "VALIDATION_ERROR")
    error(client.get(BASE, {"status": "maybe"}), 400, "VALIDATION_ERROR")


def test_list_is_cursor_paginated_and_keeps_filters(tenant):
    for i in range(5):
        create(tenant, sms_body(name=f"t{i}"))
    client = tenant.client()
    first = client.get(BASE, {"limit": 2, "channel": "sms"})
    meta = first.json()["meta"]["pagination"]
    assert meta["has_more"] is True
    second = client.get(BASE, {"limit": 2, "channel": "sms", "cursor": meta["cursor"]})
    assert len(_ids(second)) == 2
    assert not set(_ids(first)) & set(_ids(second))
    error(client.get(BASE, {"limit": 2, "channel": "email", "cursor": meta["cursor"]}), 400,
          "INVALID_CURSOR")


def _count_queries(client, url) -> int:
    with CaptureQueriesContext(connection) as ctx:
        response = client.get(url)
    assert response.status_code == 200, response.content
    return len(ctx.captured_queries)


def test_list_query_count_is_constant(tenant, django_assert_max_num_queries):
    client = tenant.client()
    create(tenant, sms_body(name="first"))
    client.get(BASE)  # warm the credential cache
    few = _count_queries(client, BASE)
    few_alias = _count_queries(client, "/api/v1/templates")
    for i in range(30):
        create(tenant, wa_body(name=f"tpl_{i}"))
    assert _count_queries(client, BASE) <= few + 1  # + the capped total count on page 1
    assert _count_queries(client, "/api/v1/templates") <= few_alias + 1
    with django_assert_max_num_queries(2):
        client.get(BASE, {"channel": "whatsapp", "limit": 50})


def test_summary_counts_per_channel_and_status(tenant):
    first = create(tenant, wa_body())
    create(tenant, wa_body(language="fr"))
    create(tenant, sms_body())
    from .conftest import decide

    assert decide(tenant, first["id"]).status_code == 200
    response = tenant.client().get(f"{BASE}/summary")
    assert response.status_code == 200, response.content
    data = response.json()["data"]
    assert data["total"] == 3
    assert data["by_status"]["approved"] == 2
    assert data["by_status"]["pending"] == 1
    assert data["by_channel"]["whatsapp"]["total"] == 2
    assert data["by_channel"]["whatsapp"]["by_status"]["approved"] == 1
    assert data["by_channel"]["whatsapp"]["by_status"]["pending"] == 1
    assert data["by_channel"]["sms"] == {"total": 1, "by_status": {
        "pending": 0, "approved": 1, "rejected": 0, "paused": 0, "disabled": 0}}
    assert "email" not in data["by_channel"]


def test_read_only_alias(tenant):
    wa = create(tenant, wa_body())
    sms = create(tenant, sms_body())
    client = tenant.client()
    assert set(_ids(client.get("/api/v1/templates"))) == {wa["id"], sms["id"]}
    assert _ids(client.get("/api/v1/templates", {"search": "order"})) == [wa["id"]]
    assert client.get(f"/api/v1/templates/{wa['id']}").json()["data"]["id"] == wa["id"]
    error(client.post("/api/v1/templates", sms_body(name="x"), format="json"), 405,
          "METHOD_NOT_ALLOWED")
    error(client.patch(f"/api/v1/templates/{wa['id']}", {"category": "marketing"},
                       format="json"), 405, "METHOD_NOT_ALLOWED")
    error(client.delete(f"/api/v1/templates/{wa['id']}"), 405, "METHOD_NOT_ALLOWED")


def test_patch_content_of_plain_template_stays_approved(tenant):
    sms = create(tenant, sms_body())
    response = tenant.client().patch(f"{BASE}/{sms['id']}", {"content": "Bye {{1}}"},
                                     format="json")
    assert response.status_code == 200, response.content
    data = response.json()["data"]
    assert (data["content"], data["status"], data["placeholder_count"]) == (
        "Bye {{1}}", "approved", 1)


def test_patch_of_an_approved_whatsapp_template_goes_back_to_pending(tenant):
    from .conftest import decide, events

    wa = create(tenant, wa_body())
    assert decide(tenant, wa["id"]).status_code == 200
    components = [{"type": "BODY", "text": "New text {{1}}"}]
    response = tenant.client().patch(f"{BASE}/{wa['id']}", {"components": components},
                                     format="json")
    assert response.status_code == 200, response.content
    data = response.json()["data"]
    assert data["status"] == "pending"
    assert data["components"] == components
    assert [e.type for e in events(tenant)] == ["template.approved", "template.status_updated"]
    assert events(tenant)[-1].data["status"] == "pending"
    assert events(tenant)[-1].data["previous_status"] == "approved"


def test_patch_validates_and_refuses_identity_changes(tenant):
    wa = create(tenant, wa_body())
    client = tenant.client()
    payload = error(client.patch(f"{BASE}/{wa['id']}", {"components": [
        {"type": "BODY", "text": "{{2}}"}]}, format="json"), 422, "VALIDATION_ERROR")
    assert payload["details"]["issues"][0]["field"] == "components.0.text"
    for change in ({"name": "other"}, {"channel": "rcs"}, {"language": "de"}):
        error(client.patch(f"{BASE}/{wa['id']}", change, format="json"), 422,
              "VALIDATION_ERROR")
    # Same values are fine (clients echo the record back).
    assert client.patch(f"{BASE}/{wa['id']}", {"name": "order_update", "waba_id": "77"},
                        format="json").json()["data"]["waba_id"] == "77"


def test_delete(tenant):
    wa = create(tenant, wa_body())
    client = tenant.client()
    assert client.delete(f"{BASE}/{wa['id']}").status_code == 204
    error(client.get(f"{BASE}/{wa['id']}"), 404, "NOT_FOUND")
    error(client.delete(f"{BASE}/{wa['id']}"), 404, "NOT_FOUND")


def test_writes_are_audited(tenant):
    from platform_core.audit.models import AuditLogEntry

    wa = create(tenant, wa_body())
    tenant.client().patch(f"{BASE}/{wa['id']}", {"category": "marketing"}, format="json")
    tenant.client().delete(f"{BASE}/{wa['id']}")
    actions = list(AuditLogEntry.objects.filter(organization=tenant.org, target_id=wa["id"])
                   .order_by("id").values_list("action", flat=True))
    assert actions == ["template.created", "template.updated", "template.deleted"]


def test_summary_route_is_not_captured_by_the_detail_route(tenant):
    assert tenant.client().get(f"{BASE}/summary").json()["data"]["total"] == 0
