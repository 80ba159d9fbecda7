"""Content templates: channel-agnostic variants, the author's fallback chain, render previews
and NO_VARIANT_FOR_CHANNEL (Document 2, 4.3; Document 1, 7)."""

from __future__ import annotations

import json

import pytest

from platform_core.errors import APIError
from templates.services import render_content_for_send

from .conftest import CONTENT, create, decide, error, key_client, wa_body


def content_body(**overrides) -> dict:
    body = {
        "name": "Order shipped",
        "variants": {
            "rcs": {"body": "Your order {{1}} shipped", "rich_card": {
                "title": "Order {{1}}", "description": "Arrives {{2}}",
                "media_url": "https://cdn.example/box.png"},
                "suggestions": [{"text": "Track", "url": "https://shop.example/t"}]},
            "whatsapp": {"template_name": "order_update", "language": "en"},
            "sms": {"body": "Order {{1}} shipped, arrives {{2}}"},
        },
        "fallback": ["rcs", "whatsapp", "sms"],
    }
    body.update(overrides)
    return body


def make(tenant, **overrides) -> dict:
    response = tenant.client().post(CONTENT, content_body(**overrides), format="json")
    assert response.status_code == 201, response.content
    return response.json()["data"]


def render_get(tenant, template_id, channel, variables=None, client=None):
    params = {"channel": channel}
    if variables is not None:
        params["variables"] = json.dumps(variables)
    return (client or tenant.client()).get(f"{CONTENT}/{template_id}/render", params)


def test_crud(tenant):
    created = make(tenant)
    assert created["id"].startswith("ctt_")
    assert created["fallback"] == ["rcs", "whatsapp", "sms"]
    client = tenant.client()
    assert client.get(f"{CONTENT}/{created['id']}").json()["data"] == created
    assert [row["id"] for row in client.get(CONTENT).json()["data"]] == [created["id"]]
    patched = client.patch(f"{CONTENT}/{created['id']}",
                           {"name": "Renamed", "fallback": ["sms"]}, format="json")
    assert patched.status_code == 200, patched.content
    assert (patched.json()["data"]["name"], patched.json()["data"]["fallback"]) == (
        "Renamed", ["sms"])
    assert client.delete(f"{CONTENT}/{created['id']}").status_code == 204
    error(client.get(f"{CONTENT}/{created['id']}"), 404, "NOT_FOUND")


@pytest.mark.parametrize(("overrides", "field"), [
    ({"variants": {}}, "variants"),
    ({"variants": {"fax": {"body": "x"}}}, "variants.fax"),
    ({"variants": {"sms": {"body": "x", "subject": "no"}}}, "variants.sms.subject"),
    ({"variants": {"sms": {}}}, "variants.sms"),
    ({"variants": {"sms": {"body": "Hi {{2}}"}}}, "variants.sms.body"),
    ({"variants": {"mms": {"media_urls": ["file:///etc/passwd"]}}}, "variants.mms.media_urls"),
    ({"variants": {"sms": {"body": "x"}}, "fallback": ["rcs"]}, "fallback.0"),
    ({"variants": {"sms": {"body": "x"}}, "fallback": ["sms", "sms"]}, "fallback.1"),
    ({"variants": {"sms": {"body": "x"}}, "fallback": "sms"}, "fallback"),
    ({"variants": {"rcs": {"body": "x", "suggestions": [{"text": "x" * 26}]}}},
     "variants.rcs.suggestions"),
])
def test_variants_and_fallback_are_validated(tenant, overrides, field):
    body = content_body(**overrides)
    payload = error(tenant.client().post(CONTENT, body, format="json"), 422, "VALIDATION_ERROR")
    assert field in [i["field"] for i in payload["details"]["issues"]], payload


def test_render_uses_the_channels_own_variant(tenant):
    created = make(tenant)
    response = render_get(tenant, created["id"], "rcs", {"1": "A-42", "2": "Friday"})
    assert response.status_code == 200, response.content
    data = response.json()["data"]
    assert (data["channel"], data["resolved_channel"], data["fallback_used"]) == (
        "rcs", "rcs", False)
    assert data["body"] == "Your order A-42 shipped"
    assert data["rich_card"]["title"] == "Order A-42"
    assert data["rich_card"]["description"] == "Arrives Friday"
    assert data["suggestions"] == [{"text": "Track", "url": "https://shop.example/t"}]
    assert data["fallback"] == ["whatsapp", "sms"]


def test_render_through_the_fallback_chain(tenant):
    created = make(tenant, variants={"rcs": {"body": "R {{1}}"}, "sms": {"body": "S {{1}}"}},
                   fallback=["rcs", "sms"])
    data = render_get(tenant, created["id"], "mms", {"1": "x"}).json()["data"]
    assert (data["resolved_channel"], data["fallback_used"], data["body"]) == (
        "rcs", True, "R x")


def test_fallback_skips_variants_that_cannot_travel(tenant):
    created = make(tenant, variants={"whatsapp": {"template_name": "order_update"},
                                     "sms": {"body": "S {{1}}"}},
                   fallback=["whatsapp", "sms"])
    data = render_get(tenant, created["id"], "rcs", {"1": "x"}).json()["data"]
    assert (data["resolved_channel"], data["body"]) == ("sms", "S x")


def test_no_variant_for_channel(tenant):
    created = make(tenant, variants={"whatsapp": {"template_name": "order_update"},
                                     "email": {"subject": "s", "body": "b"}},
                   fallback=["whatsapp"])
    payload = error(render_get(tenant, created["id"], "sms"), 422, "NO_VARIANT_FOR_CHANNEL")
    assert payload["details"] == {"channel": "sms", "variants": ["email", "whatsapp"],
                                  "fallback": ["whatsapp"]}
    # Without a fallback chain only the own variant renders.
    bare = make(tenant, variants={"sms": {"body": "x"}}, fallback=[])
    error(render_get(tenant, bare["id"], "rcs"), 422, "NO_VARIANT_FOR_CHANNEL")


def test_render_of_a_variant_naming_a_template(tenant):
    created = make(tenant)
    variables = {"1": "A-42", "2": "Ann", "3": "Monday"}
    unknown = error(render_get(tenant, created["id"], "whatsapp", variables), 422,
                    "INVALID_TEMPLATE")
    assert unknown["details"]["reason"] == "unknown_template"
    template = create(tenant, wa_body())
    data = render_get(tenant, created["id"], "whatsapp", variables).json()["data"]
    # A preview renders a pending template and says so.
    assert data["body"] == "Hi Ann, your order A-42 ships on Monday."
    assert data["template"] == {"id": template["id"], "name": "order_update", "language": "en",
                                "status": "pending"}
    assert data["components"][0]["text"] == "Order A-42"


def test_render_reports_missing_variables(tenant):
    created = make(tenant)
    payload = error(render_get(tenant, created["id"], "sms", {"1": "A-42"}), 422,
                    "INVALID_TEMPLATE")
    assert payload["details"]["missing"] == ["2"]


def test_render_by_post_and_query_pairs(tenant):
    created = make(tenant)
    client = tenant.client()
    posted = client.post(f"{CONTENT}/{created['id']}/render",
                         {"channel": "sms", "variables": {"1": "A", "2": "B"}}, format="json")
    assert posted.status_code == 200, posted.content
    assert posted.json()["data"]["body"] == "Order A shipped, arrives B"
    pairs = client.get(f"{CONTENT}/{created['id']}/render?channel=sms&variables[1]=A"
                       "&variables[2]=B")
    assert pairs.json()["data"]["body"] == "Order A shipped, arrives B"
    error(client.get(f"{CONTENT}/{created['id']}/render", {"channel": "pigeon"}), 422,
          "VALIDATION_ERROR")
    error(client.get(f"{CONTENT}/{created['id']}/render",
                     {"channel": "sms", "variables": "{not json"}), 400, "VALIDATION_ERROR")


def test_scopes(tenant):
    created = make(tenant)
    reader = key_client(tenant, ["templates:read"])
    assert reader.get(CONTENT).status_code == 200
    assert render_get(tenant, created["id"], "sms", {"1": "a", "2": "b"},
                      client=reader).status_code == 200
    error(reader.post(CONTENT, content_body(), format="json"), 403, "INSUFFICIENT_PERMISSIONS")
    error(reader.delete(f"{CONTENT}/{created['id']}"), 403, "INSUFFICIENT_PERMISSIONS")


def test_render_content_for_send(tenant):
    created = make(tenant)
    rendered = render_content_for_send(organization=tenant.org, content_template_id=created["id"],
                                       channel="sms", variables={"1": "A", "2": "B"})
    assert (rendered.resolved_channel, rendered.body, rendered.fallback) == (
        "sms", "Order A shipped, arrives B", [])
    create(tenant, wa_body())
    with pytest.raises(APIError) as caught:  # a send needs an approved template
        render_content_for_send(organization=tenant.org, content_template_id=created["id"],
                                channel="whatsapp",
                                variables={"1": "A-42", "2": "Ann", "3": "Monday"})
    assert caught.value.details["reason"] == "not_approved"
    template_id = caught.value.details["template_id"]
    assert decide(tenant, template_id).status_code == 200
    rendered = render_content_for_send(organization=tenant.org,
                                       content_template_id=created["id"], channel="whatsapp",
                                       variables={"1": "A-42", "2": "Ann", "3": "Monday"})
    assert (rendered.template_id, rendered.template_name, rendered.fallback) == (
        template_id, "order_update", ["sms"])
    assert rendered.parameters[0]["type"] == "header"
    with pytest.raises(APIError) as caught:
        render_content_for_send(organization=tenant.org, content_template_id="ctt_nope",
                                channel="sms", variables={})
    assert (caught.value.code, caught.value.details["field"]) == ("INVALID_TEMPLATE",
                                                                  "content_template_id")
    # email has no variant: the first portable one of the chain (rcs's body) travels.
    rendered = render_content_for_send(organization=tenant.org,
                                       content_template_id=created["id"], channel="email",
                                       variables={"1": "A", "2": "B"})
    assert (rendered.resolved_channel, rendered.body, rendered.fallback) == (
        "rcs", "Your order A shipped", ["whatsapp", "sms"])


def test_list_query_count_is_constant(tenant, django_assert_max_num_queries):
    client = tenant.client()
    make(tenant)
    client.get(CONTENT)
    for _ in range(10):
        make(tenant)
    with django_assert_max_num_queries(2):
        assert len(client.get(CONTENT).json()["data"]) == 11
