"""Inbound provider webhooks (Document 1, section 5 rule 10) and test-mode injection
(0-conventions.md section 6).

Each organization has one route per provider, `/api/v1/inbound/<provider>/<org slug>`,
configured at the provider (see `public_urls.webhook_url`). They take no API key: each
request must carry the provider's signature, verified with the organization's provider
account credentials (`messaging.providers.models.ProviderAccount`):

    twilio        credentials `auth_token` (and `webhook_signing_key` for HMAC_SHA256)
    whatsapp      credentials `app_secret`; `verify_token` (config or credential) for GET
    rcs           credentials (or config) `client_token` of the agent's webhook

Order of the checks: a request without a raw body answers 400 WEBHOOK_BODY_MISSING; a
signature that is missing or does not verify (also: unknown organization, no account of
that provider) answers 401 INVALID_SIGNATURE; then a missing or out-of-window timestamp
401 STALE_WEBHOOK (freshness.py says which timestamps, and why Twilio has none).
"""

from __future__ import annotations

import json
import logging
from typing import Any
from xml.sax.saxutils import escape

from django.http import HttpResponse, QueryDict
from django.http.request import RawPostDataException
from django.utils.crypto import constant_time_compare
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.response import Response

from contacts.normalize import normalize_email, normalize_phone
from messaging.api.serializers import MessageSerializer
from platform_core.api.views import PlatformAPIView, PublicAPIView
from platform_core.errors import APIError
from platform_core.ids import new_id
from platform_core.tenancy.context import tenant_context
from platform_core.tenancy.models import Organization

from . import (
    error_codes,  # noqa: F401  (registers this family's codes)
    parsers,
    pipeline,
    signatures,
)
from .freshness import parse_rfc3339, require_fresh
from .items import InboundItem
from .public_urls import requested_public_url
from .serializers import SandboxInboundSerializer, WebhookAckSerializer

logger = logging.getLogger("messaging.inbound")

_SLUG = OpenApiParameter("org_slug", OpenApiTypes.STR, OpenApiParameter.PATH,
                         description="The organization's slug.")
_ERRORS = {
    400: OpenApiResponse(description="WEBHOOK_BODY_MISSING"),
    401: OpenApiResponse(description="INVALID_SIGNATURE or STALE_WEBHOOK"),
}


def _raw_body(request) -> bytes:
    try:
        raw = request._request.body
    except RawPostDataException:
        raw = b""
    if not raw:
        raise APIError("WEBHOOK_BODY_MISSING")
    return raw


def _invalid(reason: str) -> APIError:
    logger.info("inbound webhook refused: %s", reason)
    return APIError("INVALID_SIGNATURE")


def _accounts(org_slug: str, provider: str) -> tuple[Organization, list]:
    """The organization and its accounts of `provider` (else INVALID_SIGNATURE)."""
    from messaging.providers.models import ProviderAccount

    organization = Organization.objects.filter(slug=org_slug, is_active=True).first()
    if organization is None:
        raise _invalid(f"unknown organization {org_slug!r}")
    accounts = list(ProviderAccount.objects.for_organization(organization)
                    .filter(provider=provider).order_by("pk"))
    if not accounts:
        raise _invalid(f"{org_slug} has no {provider} account")
    return organization, accounts


def _secrets(accounts: list, *names: str) -> list[str]:
    found: list[str] = []
    for account in accounts:
        for name in names:
            value = account.setting(name)
            if value and str(value) not in found:
                found.append(str(value))
    return found


def _json(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        raise APIError("VALIDATION_ERROR", "The body is not JSON.", status=400) from None


def _process(organization, items) -> pipeline.Outcome:
    with tenant_context(organization):
        return pipeline.process(organization=organization, items=items)


def _twiml(replies: list[str]) -> str:
    messages = "".join(f"<Message>{escape(text)}</Message>" for text in replies)
    return f'<?xml version="1.0" encoding="UTF-8"?><Response>{messages}</Response>'


class TwilioInboundView(PublicAPIView):
    idempotent_posts = False

    @extend_schema(
        operation_id="inbound_twilio",
        auth=[],
        parameters=[_SLUG],
        request={"application/x-www-form-urlencoded": OpenApiTypes.OBJECT},
        responses={(200, "text/xml"): OpenApiTypes.STR, **_ERRORS},
        description=(
            "Twilio's messaging webhook and status callback (and voice call status "
            "callback) for the organization. Verified with `X-Twilio-Signature` over the "
            "public URL and the sorted POST parameters, keyed with the Twilio account's Auth "
            "Token. Twilio signs no timestamp, so STALE_WEBHOOK does not apply: inbound "
            "messages are deduplicated on MessageSid and receipts never move a message "
            "backwards. Answers empty TwiML; with the account's config `keyword_replies: true`, "
            "a STOP / START / HELP message is answered with the standard reply as TwiML "
            "`<Message>` (off by default: Twilio's own opt-out handling replies already)."
        ),
    )
    def post(self, request, org_slug: str):
        raw = _raw_body(request)
        organization, accounts = _accounts(org_slug, parsers.TWILIO)
        content_type = request.META.get("CONTENT_TYPE", "").split(";")[0].strip().lower()
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise _invalid("body is not UTF-8") from None
        params = QueryDict(text) if content_type != "application/json" else QueryDict()
        signature = request.META.get("HTTP_X_TWILIO_SIGNATURE", "")
        algorithm = signatures.twilio_algorithm(
            request.META.get("HTTP_X_TWILIO_WEBHOOKS_SIGNATURE_SETTINGS", ""))
        url = requested_public_url(request)
        tokens = _secrets(accounts, "auth_token") if algorithm == "HMAC_SHA1" else \
            _secrets(accounts, "webhook_signing_key", "auth_token")
        mapping = {name: params.getlist(name) for name in params}
        if not any(signatures.twilio_valid(token=token, url=url, params=mapping, raw_body=raw,
                                           signature=signature, algorithm=algorithm)
                   for token in tokens):
            raise _invalid(f"twilio signature for {url}")
        outcome = _process(organization, parsers.twilio_items(params))
        replies: list[str] = []
        if any(account.setting("keyword_replies") is True for account in accounts):
            replies = [m.metadata["auto_reply"] for m in outcome.received
                       if (m.metadata or {}).get("auto_reply")]
        return HttpResponse(_twiml(replies), content_type="text/xml")


def _template_updates(organization, payload: Any, raw: bytes) -> int:
    """Meta sends every field of the app's subscription to one callback URL: template
    decisions (`message_template_status_update`, which carry no timestamp) go to the
    templates family, as its own route would."""
    if not parsers.has_field(payload, "message_template_status_update"):
        return 0
    try:
        from templates.inbound import apply_whatsapp_updates
    except ImportError:  # pragma: no cover - the templates app is part of the platform
        return 0
    with tenant_context(organization):
        _received, applied = apply_whatsapp_updates(organization=organization, raw_body=raw)
    return applied


class WhatsAppInboundView(PublicAPIView):
    idempotent_posts = False

    @extend_schema(
        operation_id="inbound_whatsapp_verify",
        auth=[],
        parameters=[_SLUG,
                    OpenApiParameter("hub.mode", OpenApiTypes.STR, enum=["subscribe"]),
                    OpenApiParameter("hub.verify_token", OpenApiTypes.STR),
                    OpenApiParameter("hub.challenge", OpenApiTypes.STR)],
        responses={(200, "text/plain"): OpenApiTypes.STR,
                   403: OpenApiResponse(description="WEBHOOK_VERIFICATION_FAILED")},
        description="Meta's subscription check: echoes `hub.challenge` when `hub.verify_token` "
                    "matches the WhatsApp account's `verify_token`.",
    )
    def get(self, request, org_slug: str):
        params = request.query_params
        token = params.get("hub.verify_token", "")
        organization = Organization.objects.filter(slug=org_slug, is_active=True).first()
        expected: list[str] = []
        if organization is not None:
            from messaging.providers.models import ProviderAccount

            expected = _secrets(list(ProviderAccount.objects.for_organization(organization)
                                     .filter(provider=parsers.WHATSAPP)), "verify_token")
        matched = False
        for candidate in expected:
            matched |= constant_time_compare(candidate, token)
        if params.get("hub.mode") != "subscribe" or not token or not matched:
            raise APIError("WEBHOOK_VERIFICATION_FAILED")
        return HttpResponse(params.get("hub.challenge", ""), content_type="text/plain")

    @extend_schema(
        operation_id="inbound_whatsapp",
        auth=[],
        parameters=[_SLUG],
        request={"application/json": OpenApiTypes.OBJECT},
        responses={200: WebhookAckSerializer, **_ERRORS},
        description=(
            "WhatsApp Cloud API notifications (field `messages`: inbound messages and "
            "`statuses[]` receipts). Verified with `X-Hub-Signature-256` = `sha256=` + hex "
            "HMAC-SHA256 of the raw body keyed with the app secret. Every message and status "
            "must carry its `timestamp`, the newest within the accepted window (default 5 "
            "minutes), else STALE_WEBHOOK. Template decisions "
            "(`message_template_status_update`) sent to the same callback URL are applied "
            "too."
        ),
    )
    def post(self, request, org_slug: str):
        raw = _raw_body(request)
        organization, accounts = _accounts(org_slug, parsers.WHATSAPP)
        header = request.META.get("HTTP_X_HUB_SIGNATURE_256", "")
        if not any(signatures.meta_valid(app_secret=secret, raw_body=raw, header=header)
                   for secret in _secrets(accounts, "app_secret")):
            raise _invalid("whatsapp signature")
        payload = _json(raw)
        items = parsers.whatsapp_items(payload)
        if items or parsers.whatsapp_timestamps(payload):
            require_fresh(parsers.whatsapp_timestamps(payload))
        summary = _process(organization, items).summary()
        summary["template_updates"] = _template_updates(organization, payload, raw)
        from messaging import hooks

        with tenant_context(organization):  # channel apps' fields (calls, ...)
            for field, applied in hooks.whatsapp_fields(organization, payload).items():
                summary[f"{field}_updates"] = applied
        return Response(summary)


class RcsInboundView(PublicAPIView):
    idempotent_posts = False

    @extend_schema(
        operation_id="inbound_rcs",
        auth=[],
        parameters=[_SLUG],
        request={"application/json": OpenApiTypes.OBJECT},
        responses={200: WebhookAckSerializer, (200, "text/plain"): OpenApiTypes.STR,
                   **_ERRORS},
        description=(
            "Google RCS Business Messaging webhook (a Pub/Sub push: `message.data` is the "
            "base64 user message or event). Verified with `X-Goog-Signature` = base64 "
            "HMAC-SHA512 of the decoded `message.data`, keyed with the agent's webhook "
            "`client_token`. The event's `sendTime` must be within the accepted window, else "
            "STALE_WEBHOOK. DELIVERED and READ events are delivery receipts. The webhook "
            "set-up check (`{clientToken, secret}`) is answered with the secret when the "
            "client token matches."
        ),
    )
    def post(self, request, org_slug: str):
        raw = _raw_body(request)
        organization, accounts = _accounts(org_slug, parsers.RCS)
        tokens = _secrets(accounts, "client_token")
        payload = _json(raw)
        if isinstance(payload, dict) and "clientToken" in payload and "secret" in payload:
            matched = False
            for token in tokens:
                matched |= constant_time_compare(token, str(payload["clientToken"]))
            if not matched:
                raise _invalid("rcs webhook set-up token")
            return HttpResponse(str(payload["secret"]), content_type="text/plain")
        data = parsers.rbm_decode(payload)
        if data is None:
            raise APIError("WEBHOOK_BODY_MISSING", "The body carries no `message.data`.")
        header = request.META.get("HTTP_X_GOOG_SIGNATURE", "")
        if not any(signatures.google_rbm_valid(client_token=token, data=data, header=header)
                   for token in tokens):
            raise _invalid("rcs signature")
        event = parsers.rcs_event(data)
        if event is None:
            raise APIError("VALIDATION_ERROR", "`message.data` is not a JSON object.",
                           status=400)
        require_fresh([parse_rfc3339(event.get("sendTime"))])
        return Response(_process(organization, parsers.rcs_items(event)).summary())


def _address(value: str, *, channel: str, field: str, organization) -> str:
    if channel == "email":
        return normalize_email(value, field=field)
    if channel == "rcs" and field == "to" and not value.strip().startswith("+"):
        return value.strip()  # an RCS agent id
    return normalize_phone(value, default_country=organization.default_country, field=field)


class SandboxInboundView(PlatformAPIView):
    required_scopes = {"POST": "messages:write"}
    test_mode_only = True

    @extend_schema(
        operation_id="sandbox_inbound",
        request=SandboxInboundSerializer,
        responses={201: MessageSerializer,
                   403: OpenApiResponse(description="TEST_MODE_ONLY (a live key)")},
        description=(
            "Test mode only: inject a message from an end user (`from`) to one of your "
            "addresses (`to`) through the same pipeline as a provider webhook. It creates or "
            "continues the conversation, runs the STOP / START / HELP keywords (`STOP` opts "
            "`from` out: later sends to it answer 422 RECIPIENT_OPTED_OUT; `START` opts back "
            "in) and emits `message.received`. Phone numbers are E.164 or national for the "
            "organization's `default_country` (invalid: 422 INVALID_PHONE_NUMBER); `to` of "
            "an rcs message may be an agent id. A live key: 403 TEST_MODE_ONLY."
        ),
    )
    def post(self, request):
        body = SandboxInboundSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        channel = data["channel"]
        sender = _address(data["from"], channel=channel, field="from",
                          organization=self.organization)
        recipient = _address(data["to"], channel=channel, field="to",
                             organization=self.organization)
        item = InboundItem(channel=channel, from_=sender, to=recipient, body=data["body"],
                           provider="sandbox", provider_message_id=new_id("sbxin"),
                           media_urls=data.get("media_urls") or [])
        message = pipeline.receive_message(organization=self.organization, item=item)
        if message is None:  # a channel app's inbound filter dropped it (a blocked sender)
            raise APIError("INBOUND_DROPPED")
        return Response(MessageSerializer(message).data, status=status.HTTP_201_CREATED)
