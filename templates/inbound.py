"""Provider webhooks of template decisions (live mode).

WhatsApp Cloud API: Meta posts `message_template_status_update` changes of the
`whatsapp_business_account` object to `POST /api/v1/inbound/whatsapp-templates/{org_slug}`,
signed `X-Hub-Signature-256: sha256=<hex HMAC-SHA256(app secret, raw body)>`; the app
secret is the whatsapp provider account's credential `app_secret`. The subscription
handshake (`GET` with `hub.mode=subscribe`, `hub.verify_token`, `hub.challenge`) is
answered with the challenge when the token equals the account credential `verify_token`.

    {"object": "whatsapp_business_account", "entry": [{"id": "<WABA id>", "changes": [
      {"field": "message_template_status_update", "value": {"event": "APPROVED",
       "message_template_id": 123, "message_template_name": "order_update",
       "message_template_language": "en_US", "reason": null}}]}]}

Each change finds the template by its provider id (else by name and language) and goes
through `services.template_apply_status` (source `provider_webhook`), which emits the
template-approval event. Unknown templates and unmapped events are counted, not failed:
the provider must get its 200.
"""

from __future__ import annotations

import hashlib
import hmac
import json

from django.db import transaction

from platform_core.errors import APIError, validation_error
from platform_core.tenancy.models import Organization

from . import services, submission
from .models import MessageTemplate, TemplateChannel


def organization_for_slug(slug: str) -> Organization:
    organization = Organization.objects.filter(slug=slug, is_active=True).first()
    if organization is None:
        raise APIError("NOT_FOUND")
    return organization


def whatsapp_account(organization: Organization):
    """The organization's whatsapp provider account (whatever the mode), or 404."""
    from django.apps import apps

    try:
        model = apps.get_model("providers", "ProviderAccount")
    except LookupError:
        raise APIError("NOT_FOUND") from None
    accounts = [a for a in model.objects.for_organization(organization).order_by("pk")
                if getattr(a, "channel", None) == TemplateChannel.WHATSAPP
                and getattr(a, "enabled", True)]
    if not accounts:
        raise APIError("NOT_FOUND")
    return accounts[0]


def verify_signature(account, raw_body: bytes, header: str | None) -> None:
    secret = submission.account_credentials(account).get("app_secret")
    if not secret or not header or not header.startswith("sha256="):
        raise APIError("INVALID_SIGNATURE")
    expected = hmac.new(str(secret).encode(), raw_body, hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected, header.removeprefix("sha256=").strip().lower()):
        raise APIError("INVALID_SIGNATURE")


def verify_token(account, token: str | None) -> bool:
    expected = submission.account_credentials(account).get("verify_token")
    return bool(expected and token and hmac.compare_digest(str(expected), str(token)))


def apply_whatsapp_updates(*, organization: Organization, raw_body: bytes) -> tuple[int, int]:
    """(received, applied) for the template status changes of one webhook body."""
    try:
        payload = json.loads(raw_body or b"null")
    except ValueError:
        raise validation_error("body", "The body is not JSON.", status=400) from None
    received = applied = 0
    entries = payload.get("entry") if isinstance(payload, dict) else None
    for entry in entries if isinstance(entries, list) else []:
        changes = entry.get("changes") if isinstance(entry, dict) else None
        for change in changes if isinstance(changes, list) else []:
            if not isinstance(change, dict) or change.get("field") != (
                    "message_template_status_update"):
                continue
            value = change.get("value") if isinstance(change.get("value"), dict) else {}
            received += 1
            if _apply_one(organization, value):
                applied += 1
    return received, applied


def _apply_one(organization: Organization, value: dict) -> bool:
    status = submission.WHATSAPP_STATUSES.get(str(value.get("event") or "").upper())
    if status is None:
        return False
    provider_id = str(value.get("message_template_id") or "") or None
    templates = MessageTemplate.objects.for_organization(organization).filter(
        channel=TemplateChannel.WHATSAPP)
    with transaction.atomic():
        template = None
        if provider_id:
            template = templates.select_for_update().filter(
                provider_template_id=provider_id).first()
        if template is None and value.get("message_template_name"):
            template = templates.select_for_update().filter(
                name=value["message_template_name"],
                language=value.get("message_template_language") or "").first()
        if template is None:
            return False
        reason = value.get("reason")
        reason = None if reason in (None, "", "NONE") else str(reason)
        return services.template_apply_status(template=template, status=status, reason=reason,
                                              source="provider_webhook",
                                              provider_template_id=provider_id)
