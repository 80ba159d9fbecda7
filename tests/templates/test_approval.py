"""The approval lifecycle: sandbox decisions, live submission to the WhatsApp Cloud API,
the provider webhook and the status sync (Document 2, 3; 0-conventions.md section 6)."""

from __future__ import annotations

import hashlib
import hmac
import json

import pytest

from templates.models import MessageTemplate
from templates.tasks import sync_statuses

from . import graph_fake
from .conftest import BASE, create, decide, error, events, sms_body, wa_body, whatsapp_account

# --- Test mode --------------------------------------------------------------------------


def test_sandbox_approval_emits_the_template_approval_event(tenant):
    template = create(tenant, wa_body())
    response = decide(tenant, template["id"])
    assert response.status_code == 200, response.content
    assert response.json()["data"]["status"] == "approved"
    assert tenant.client().get(f"{BASE}/{template['id']}").json()["data"]["status"] == "approved"
    [event] = events(tenant)
    assert event.type == "template.approved"
    assert event.data == {"template_id": template["id"], "name": "order_update",
                          "channel": "whatsapp", "language": "en", "category": "utility",
                          "status": "approved", "previous_status": "pending", "reason": None,
                          "source": "sandbox"}


def test_sandbox_rejection_carries_the_reason(tenant):
    template = create(tenant, wa_body(channel="rcs"))
    response = decide(tenant, template["id"], "rejected", "Promotional content")
    assert response.status_code == 200, response.content
    data = response.json()["data"]
    assert (data["status"], data["rejection_reason"]) == ("rejected", "Promotional content")
    [event] = events(tenant)
    assert (event.type, event.data["reason"], event.data["status"]) == (
        "template.rejected", "Promotional content", "rejected")


def test_only_pending_templates_are_decided(tenant):
    template = create(tenant, wa_body())
    assert decide(tenant, template["id"]).status_code == 200
    error(decide(tenant, template["id"], "rejected"), 409, "CONFLICT")
    sms = create(tenant, sms_body())
    error(decide(tenant, sms["id"]), 409, "CONFLICT")
    assert len(events(tenant)) == 1


def test_decision_body_is_validated(tenant):
    template = create(tenant, wa_body())
    error(decide(tenant, template["id"], "maybe"), 422, "VALIDATION_ERROR")
    error(tenant.client().post(f"/api/v1/sandbox/templates/{template['id']}/decision", {},
                               format="json"), 422, "VALIDATION_ERROR")


def test_decision_of_unknown_or_foreign_template_is_404(tenant, other_tenant):
    template = create(tenant, wa_body())
    error(decide(other_tenant, template["id"]), 404, "NOT_FOUND")
    error(decide(tenant, "tpl_unknown"), 404, "NOT_FOUND")
    assert MessageTemplate.objects.for_organization(tenant.org).get(
        pk=template["id"]).status == "pending"


def test_decision_needs_templates_write(tenant):
    from .conftest import key_client

    template = create(tenant, wa_body())
    reader = key_client(tenant, ["templates:read"])
    error(reader.post(f"/api/v1/sandbox/templates/{template['id']}/decision",
                      {"decision": "approved"}, format="json"), 403, "INSUFFICIENT_PERMISSIONS")


def test_live_key_gets_test_mode_only(live_tenant):
    with_id = MessageTemplate.objects.for_organization(live_tenant.org).create(
        organization=live_tenant.org, name="x", channel="whatsapp", language="en",
        components=[{"type": "BODY", "text": "x"}])
    response = live_tenant.client().post(f"/api/v1/sandbox/templates/{with_id.pk}/decision",
                                         {"decision": "approved"}, format="json")
    error(response, 403, "TEST_MODE_ONLY")
    # Whatever the id: a live key never reaches the simulation.
    error(live_tenant.client().post("/api/v1/sandbox/templates/tpl_nope/decision",
                                    {"decision": "approved"}, format="json"),
          403, "TEST_MODE_ONLY")


def test_test_mode_never_calls_a_provider(tenant, graph, django_capture_on_commit_callbacks):
    whatsapp_account(tenant, graph)  # even with an account configured
    with django_capture_on_commit_callbacks(execute=True):
        create(tenant, wa_body())
    assert graph.requests == []
    assert sync_statuses() == 0
    assert graph.requests == []


# --- Live mode --------------------------------------------------------------------------


def test_live_template_without_a_whatsapp_account_is_not_wired(live_tenant):
    error(live_tenant.client().post(BASE, wa_body(), format="json"), 503, "PROVIDER_NOT_WIRED")
    assert not MessageTemplate.objects.for_organization(live_tenant.org).exists()
    # sms templates need no carrier approval.
    assert create(live_tenant, sms_body())["status"] == "approved"


def test_live_submission_to_the_cloud_api(live_tenant, graph,
                                          django_capture_on_commit_callbacks):
    whatsapp_account(live_tenant, graph)
    with django_capture_on_commit_callbacks(execute=True):
        template = create(live_tenant, wa_body())
    assert template["status"] == "pending"
    [request] = graph.requests
    assert (request.method, request.path) == (
        "POST", f"/v20.0/{graph_fake.WABA}/message_templates")
    assert request.headers["Authorization"] == f"Bearer {graph_fake.TOKEN}"
    body = request.json
    assert (body["name"], body["language"], body["category"]) == ("order_update", "en",
                                                                  "UTILITY")
    header, body_component, footer, buttons = body["components"]
    # Per-component numbering for the provider, with examples.
    assert header == {"type": "HEADER", "format": "TEXT", "text": "Order {{1}}",
                      "example": {"header_text": ["sample 1"]}}
    assert body_component["text"] == "Hi {{2}}, your order {{1}} ships on {{3}}."
    assert body_component["example"] == {"body_text": [["sample 1", "sample 2", "sample 3"]]}
    assert footer == {"type": "FOOTER", "text": "Reply STOP to opt out"}
    assert buttons["buttons"][1]["url"] == "https://shop.example/t/{{1}}"
    row = MessageTemplate.objects.for_organization(live_tenant.org).get(pk=template["id"])
    assert row.provider_template_id == "900000001"
    assert row.submitted_at is not None
    assert row.status == "pending"


def test_live_template_waba_id_comes_from_the_template_first(live_tenant, graph,
                                                             django_capture_on_commit_callbacks):
    whatsapp_account(live_tenant, graph)
    with django_capture_on_commit_callbacks(execute=True):
        create(live_tenant, wa_body(waba_id="999"))
    assert graph.requests[0].path == "/v20.0/999/message_templates"


def test_live_submission_refused_by_the_provider_is_rejected(
        live_tenant, graph, django_capture_on_commit_callbacks):
    whatsapp_account(live_tenant, graph)
    graph.create_answer = (400, {"error": {"message": "Invalid parameter", "code": 100,
                                           "error_user_msg": "Body has too many variables"}})
    with django_capture_on_commit_callbacks(execute=True):
        template = create(live_tenant, wa_body())
    row = MessageTemplate.objects.for_organization(live_tenant.org).get(pk=template["id"])
    assert (row.status, row.rejection_reason) == ("rejected", "Body has too many variables")
    [event] = events(live_tenant)
    assert (event.type, event.data["source"]) == ("template.rejected", "provider_submission")


def test_provider_outage_keeps_pending_and_the_sync_resubmits(
        live_tenant, graph, django_capture_on_commit_callbacks):
    whatsapp_account(live_tenant, graph)
    graph.create_answer = (503, {"error": {"message": "down"}})
    with django_capture_on_commit_callbacks(execute=True):
        template = create(live_tenant, wa_body())
    row = MessageTemplate.objects.for_organization(live_tenant.org).get(pk=template["id"])
    assert row.status == "pending"
    assert row.provider_template_id is None
    assert row.submission_error
    graph.create_answer = None
    MessageTemplate.objects.for_organization(live_tenant.org).filter(pk=row.pk).update(
        updated_at=row.created_at.replace(year=2000))
    sync_statuses()
    row.refresh_from_db()
    assert row.provider_template_id
    assert row.submission_error is None


def test_status_sync_applies_the_carrier_decision(live_tenant, graph,
                                                  django_capture_on_commit_callbacks):
    whatsapp_account(live_tenant, graph)
    with django_capture_on_commit_callbacks(execute=True):
        template = create(live_tenant, wa_body())
    provider_id = MessageTemplate.objects.for_organization(live_tenant.org).get(
        pk=template["id"]).provider_template_id
    assert sync_statuses() == 1  # still pending at the carrier
    assert events(live_tenant) == []
    graph.statuses[provider_id] = {"status": "APPROVED"}
    sync_statuses()
    assert graph.requests[-1].method == "GET"
    assert graph.requests[-1].path == f"/v20.0/{provider_id}"
    data = live_tenant.client().get(f"{BASE}/{template['id']}").json()["data"]
    assert data["status"] == "approved"
    [event] = events(live_tenant)
    assert (event.type, event.data["source"]) == ("template.approved", "status_sync")
    sync_statuses()  # nothing pending any more
    assert len(events(live_tenant)) == 1


def _signed(body: dict, secret: str = graph_fake.APP_SECRET) -> tuple[bytes, str]:
    raw = json.dumps(body).encode()
    return raw, "sha256=" + hmac.new(secret.encode(), raw, hashlib.sha256).hexdigest()


def _status_update(provider_id, event="APPROVED", name="order_update", language="en",
                   reason=None):
    return {"object": "whatsapp_business_account", "entry": [{"id": graph_fake.WABA,
            "time": 1700000000, "changes": [{"field": "message_template_status_update",
                                             "value": {"event": event,
                                                       "message_template_id": provider_id,
                                                       "message_template_name": name,
                                                       "message_template_language": language,
                                                       "reason": reason}}]}]}


def test_provider_webhook_decides(live_tenant, graph, anon, django_capture_on_commit_callbacks):
    whatsapp_account(live_tenant, graph)
    with django_capture_on_commit_callbacks(execute=True):
        template = create(live_tenant, wa_body())
    provider_id = MessageTemplate.objects.for_organization(live_tenant.org).get(
        pk=template["id"]).provider_template_id
    url = f"/api/v1/inbound/whatsapp-templates/{live_tenant.org.slug}"
    raw, signature = _signed(_status_update(int(provider_id), "REJECTED",
                                            reason="INVALID_FORMAT"))
    response = anon.post(url, raw, content_type="application/json",
                         HTTP_X_HUB_SIGNATURE_256=signature)
    assert response.status_code == 200, response.content
    assert response.json()["data"] == {"received": 1, "applied": 1}
    data = live_tenant.client().get(f"{BASE}/{template['id']}").json()["data"]
    assert (data["status"], data["rejection_reason"]) == ("rejected", "INVALID_FORMAT")
    [event] = events(live_tenant)
    assert (event.type, event.data["source"]) == ("template.rejected", "provider_webhook")
    # A repeated delivery changes nothing and emits nothing.
    again = anon.post(url, raw, content_type="application/json",
                      HTTP_X_HUB_SIGNATURE_256=signature)
    assert again.json()["data"] == {"received": 1, "applied": 0}
    assert len(events(live_tenant)) == 1


def test_provider_webhook_matches_by_name_and_language(live_tenant, anon):
    whatsapp_account(live_tenant, None)
    MessageTemplate.objects.for_organization(live_tenant.org).create(
        organization=live_tenant.org, name="order_update", channel="whatsapp", language="en",
        components=[{"type": "BODY", "text": "x"}])
    raw, signature = _signed(_status_update(12345))
    response = anon.post(f"/api/v1/inbound/whatsapp-templates/{live_tenant.org.slug}", raw,
                         content_type="application/json", HTTP_X_HUB_SIGNATURE_256=signature)
    assert response.json()["data"] == {"received": 1, "applied": 1}
    row = MessageTemplate.objects.for_organization(live_tenant.org).get(name="order_update")
    assert (row.status, row.provider_template_id) == ("approved", "12345")


@pytest.mark.parametrize("signature", [None, "sha256=00", "md5=abc"])
def test_provider_webhook_signature_is_verified(live_tenant, anon, signature):
    whatsapp_account(live_tenant, None)
    raw, _good = _signed(_status_update(1))
    headers = {"HTTP_X_HUB_SIGNATURE_256": signature} if signature else {}
    response = anon.post(f"/api/v1/inbound/whatsapp-templates/{live_tenant.org.slug}", raw,
                         content_type="application/json", **headers)
    error(response, 401, "INVALID_SIGNATURE")
    raw, wrong_secret = _signed(_status_update(1), secret="another")
    error(anon.post(f"/api/v1/inbound/whatsapp-templates/{live_tenant.org.slug}", raw,
                    content_type="application/json", HTTP_X_HUB_SIGNATURE_256=wrong_secret),
          401, "INVALID_SIGNATURE")


def test_provider_webhook_unknown_org_or_account_is_404(live_tenant, anon):
    raw, signature = _signed(_status_update(1))
    error(anon.post("/api/v1/inbound/whatsapp-templates/no-such-org", raw,
                    content_type="application/json", HTTP_X_HUB_SIGNATURE_256=signature),
          404, "NOT_FOUND")
    error(anon.post(f"/api/v1/inbound/whatsapp-templates/{live_tenant.org.slug}", raw,
                    content_type="application/json", HTTP_X_HUB_SIGNATURE_256=signature),
          404, "NOT_FOUND")


def test_provider_webhook_handshake(live_tenant, anon):
    whatsapp_account(live_tenant, None)
    url = f"/api/v1/inbound/whatsapp-templates/{live_tenant.org.slug}"
    ok = anon.get(url, {"hub.mode": "subscribe", "hub.verify_token": graph_fake.VERIFY_TOKEN,
                        "hub.challenge": "1158201444"})
    assert ok.status_code == 200
    assert ok.content == b"1158201444"
    error(anon.get(url, {"hub.mode": "subscribe", "hub.verify_token": "wrong",
                         "hub.challenge": "1"}), 403, "WEBHOOK_VERIFICATION_FAILED")


def test_live_edit_is_sent_back_for_review(live_tenant, graph,
                                           django_capture_on_commit_callbacks):
    whatsapp_account(live_tenant, graph)
    with django_capture_on_commit_callbacks(execute=True):
        template = create(live_tenant, wa_body())
    provider_id = MessageTemplate.objects.for_organization(live_tenant.org).get(
        pk=template["id"]).provider_template_id
    with django_capture_on_commit_callbacks(execute=True):
        response = live_tenant.client().patch(
            f"{BASE}/{template['id']}",
            {"components": [{"type": "BODY", "text": "Changed {{1}}"}]}, format="json")
    assert response.status_code == 200, response.content
    edit = graph.requests[-1]
    assert (edit.method, edit.path) == ("POST", f"/v20.0/{provider_id}")
    assert edit.json["components"][0]["text"] == "Changed {{1}}"


def test_live_delete_removes_it_at_the_provider(live_tenant, graph,
                                                django_capture_on_commit_callbacks):
    whatsapp_account(live_tenant, graph)
    with django_capture_on_commit_callbacks(execute=True):
        template = create(live_tenant, wa_body())
    provider_id = MessageTemplate.objects.for_organization(live_tenant.org).get(
        pk=template["id"]).provider_template_id
    with django_capture_on_commit_callbacks(execute=True):
        assert live_tenant.client().delete(f"{BASE}/{template['id']}").status_code == 204
    removal = graph.requests[-1]
    assert (removal.method, removal.path) == ("DELETE",
                                              f"/v20.0/{graph_fake.WABA}/message_templates")
    assert removal.query == {"name": ["order_update"], "hsm_id": [provider_id]}


def test_live_rcs_template_needs_an_rcs_account_and_waits_for_a_submitter(
        live_tenant, django_capture_on_commit_callbacks):
    from messaging.providers.models import ProviderAccount

    error(live_tenant.client().post(BASE, wa_body(channel="rcs"), format="json"), 503,
          "PROVIDER_NOT_WIRED")
    ProviderAccount.objects.for_organization(live_tenant.org).create(
        organization=live_tenant.org, channel="rcs", provider="rcs_business",
        credentials={"access_token": "x"}, config={"agent_id": "agent"})
    with django_capture_on_commit_callbacks(execute=True):
        template = create(live_tenant, wa_body(channel="rcs"))
    row = MessageTemplate.objects.for_organization(live_tenant.org).get(pk=template["id"])
    # No template API is registered for this adapter: it stays pending, and says why.
    assert row.status == "pending"
    assert "rcs_business" in row.submission_error


def test_template_updates_sent_to_the_shared_whatsapp_callback_apply_too(
        live_tenant, graph, anon, django_capture_on_commit_callbacks):
    """Meta has one callback URL per app: the messaging webhook hands template decisions on."""
    whatsapp_account(live_tenant, graph)
    with django_capture_on_commit_callbacks(execute=True):
        template = create(live_tenant, wa_body())
    provider_id = MessageTemplate.objects.for_organization(live_tenant.org).get(
        pk=template["id"]).provider_template_id
    raw, signature = _signed(_status_update(int(provider_id)))
    response = anon.post(f"/api/v1/inbound/whatsapp/{live_tenant.org.slug}", raw,
                         content_type="application/json", HTTP_X_HUB_SIGNATURE_256=signature)
    assert response.status_code == 200, response.content
    data = live_tenant.client().get(f"{BASE}/{template['id']}").json()["data"]
    assert data["status"] == "approved"
    assert [e.type for e in events(live_tenant)] == ["template.approved"]
