"""marketing-messages/send: approved MARKETING template only; tracking_id on status events."""

from __future__ import annotations

import pytest

from messaging.models import Message
from messaging.services import message_apply_status
from platform_core.tenancy.context import tenant_context

from .conftest import USER, code, data, events, messages

pytestmark = pytest.mark.django_db

TEMPLATES = "/api/v1/messages/templates"


def _template(wa, name: str, category: str, *, approve: bool = True) -> None:
    client = wa.client()
    response = client.post(TEMPLATES, {
        "name": name, "channel": "whatsapp", "language": "en", "category": category,
        "components": [{"type": "BODY", "text": "Hi {{1}}, 20% off today"}]}, format="json")
    assert response.status_code == 201, response.content
    if approve:
        decided = client.post(f"/api/v1/sandbox/templates/{data(response)['id']}/decision",
                              {"decision": "approved"}, format="json")
        assert decided.status_code == 200, decided.content


def test_marketing_send_echoes_tracking_id_on_status_events(wa):
    _template(wa, "spring_sale", "marketing")
    response = wa.client().post("/api/v1/whatsapp/marketing-messages/send", {
        "to": USER, "template_name": "spring_sale", "language": "en", "variables": {"1": "Kerry"},
        "tracking_id": "campaign-42"}, format="json")
    assert response.status_code == 202, response.content
    sent = data(response)
    assert sent["tracking_id"] == "campaign-42"
    (message,) = messages(wa, pk=sent["message_id"])
    assert message.template_name == "spring_sale"
    assert message.metadata["whatsapp"] == {"endpoint": "marketing_messages",
                                            "biz_opaque_callback_data": "campaign-42"}
    with tenant_context(wa.org):
        row = Message.objects.for_organization(wa.org).get(pk=message.pk)
        message_apply_status(message=row, status="sent")
        message_apply_status(message=Message.objects.for_organization(wa.org).get(pk=row.pk),
                             status="delivered")
    statuses = [e for e in events(wa, "message.") if e.data.get("message_id") == message.pk]
    assert {e.type for e in statuses} >= {"message.sent", "message.delivered"}
    assert all(e.data.get("tracking_id") == "campaign-42" for e in statuses
               if e.type in ("message.sent", "message.delivered"))


def test_only_approved_marketing_templates(wa):
    client = wa.client()
    _template(wa, "order_update", "utility")
    _template(wa, "draft_sale", "marketing", approve=False)
    utility = client.post("/api/v1/whatsapp/marketing-messages/send", {
        "to": USER, "template_name": "order_update", "variables": {"1": "x"}}, format="json")
    assert utility.status_code == 422
    assert code(utility) == "WHATSAPP_TEMPLATE_NOT_MARKETING"
    pending = client.post("/api/v1/whatsapp/marketing-messages/send", {
        "to": USER, "template_name": "draft_sale", "variables": {"1": "x"}}, format="json")
    assert pending.status_code == 422
    assert code(pending) == "INVALID_TEMPLATE"
    unknown = client.post("/api/v1/whatsapp/marketing-messages/send", {
        "to": USER, "template_name": "nope"}, format="json")
    assert code(unknown) == "INVALID_TEMPLATE"
    assert messages(wa, direction="outbound") == []
