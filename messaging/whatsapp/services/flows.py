"""Flows: draft -> published (irreversible; Document 2, section 3). Only drafts take new
assets or are deleted; only published flows are sent (sends.send_flow). Submissions
(`interactive.nfm_reply`) are recorded by `submission_record` from the inbound pipeline."""

from __future__ import annotations

import json
from typing import Any

from django.db import transaction
from django.utils import timezone

from platform_core.audit.services import audit_record
from platform_core.errors import APIError
from platform_core.events.bus import emit

from .. import flowjson
from ..gateway import gateway_for
from ..models import Flow, FlowSend, FlowStatus, FlowSubmission
from .common import default_connection


def flow_create(*, organization, principal, name: str, categories: list[str]) -> Flow:
    connection = default_connection(organization)
    meta_id = gateway_for(organization).create_flow(connection.waba_id, name, categories)
    with transaction.atomic():
        flow = Flow.objects.for_organization(organization).create(
            organization=organization, meta_flow_id=meta_id, waba_id=connection.waba_id,
            name=name, categories=categories)
        audit_record(action="whatsapp.flow.created", organization=organization,
                     principal=principal, target=flow)
    return flow


def _locked_draft(organization, flow: Flow) -> Flow:
    current = Flow.objects.for_organization(organization).select_for_update().get(pk=flow.pk)
    if current.status != FlowStatus.DRAFT:
        raise APIError("WHATSAPP_FLOW_NOT_DRAFT", details={"status": current.status})
    return current


def flow_delete(*, organization, principal, flow: Flow) -> None:
    with transaction.atomic():
        current = _locked_draft(organization, flow)
        gateway_for(organization).delete_flow(current.meta_flow_id)
        audit_record(action="whatsapp.flow.deleted", organization=organization,
                     principal=principal, target=current)
        current.delete()


def flow_assets(*, organization, principal, flow: Flow, definition: Any) -> Flow:
    definition = flowjson.validate(definition)
    with transaction.atomic():
        current = _locked_draft(organization, flow)
        errors = gateway_for(organization).upload_flow_json(current.meta_flow_id, definition)
        if errors:
            raise APIError("VALIDATION_ERROR", "Meta refused the flow JSON.", details={
                "issues": [{"field": "flow_json", "message": str(e.get("message") or e)}
                           for e in errors], "validation_errors": errors})
        current.definition = definition
        current.json_version = definition.get("version", "")
        current.save()
        audit_record(action="whatsapp.flow.assets", organization=organization,
                     principal=principal, target=current)
    return current


def flow_publish(*, organization, principal, flow: Flow) -> Flow:
    with transaction.atomic():
        current = _locked_draft(organization, flow)
        if not current.definition:
            raise APIError("WHATSAPP_FLOW_NO_ASSETS")
        gateway_for(organization).publish_flow(current.meta_flow_id)
        current.status = FlowStatus.PUBLISHED
        current.published_at = timezone.now()
        current.save()
        audit_record(action="whatsapp.flow.published", organization=organization,
                     principal=principal, target=current)
        emit(organization=organization, type="whatsapp.flow.published",
             data={"flow_id": current.pk, "meta_flow_id": current.meta_flow_id})
    return current


def submission_record(*, organization, message, nfm_reply: dict[str, Any]
                      ) -> FlowSubmission | None:
    """Record a flow completion (an inbound `nfm_reply`) against the flow its token names.
    The flow_token is echoed on the record and on the `whatsapp.flow.submitted` event."""
    raw = nfm_reply.get("response_json")
    try:
        response = json.loads(raw) if isinstance(raw, str) else (raw or {})
    except ValueError:
        response = {}
    if not isinstance(response, dict):
        response = {}
    token = str(response.get("flow_token") or "")[:200]
    if not token:
        return None
    send = (FlowSend.objects.for_organization(organization).select_related("flow")
            .filter(flow_token=token).first())
    if send is None:
        return None
    with transaction.atomic():
        submission = FlowSubmission.objects.for_organization(organization).create(
            organization=organization, flow=send.flow, flow_token=token,
            message_id=message.pk, contact_id=message.contact_id,
            conversation_id=message.conversation_id, response=response)
        emit(organization=organization, type="whatsapp.flow.submitted", data={
            "flow_id": send.flow_id, "flow_token": token, "message_id": message.pk,
            "submission_id": submission.pk, "contact_id": message.contact_id,
            "conversation_id": message.conversation_id, "response": response})
    return submission
