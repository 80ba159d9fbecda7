"""Writes of verify: sending codes (one or a batch, the same pipeline), checking,
canceling, expiring, and the verify profiles.

The send pipeline (`verifications_send`), for one recipient or a bulk of 1000:

1. Options: the profile's defaults under the request's fields; a factor channel steers to
   the factor endpoints (422 `VERIFY_USE_FACTOR_ENDPOINT`); the channel chain is reduced
   to the channels with a provider (503 `PROVIDER_NOT_WIRED` when none has one).
2. Each recipient normalized for the channel (E.164 / email), deduplicated keeping the
   first; the fraud guard (`fraud.py`) refuses what it must, in two queries for the batch.
3. Each code drawn from `secrets`, rendered into the channel's text and handed to the
   messaging pipeline (one INSERT per message, the dispatcher sends after commit). A
   refusal of the pipeline fails that recipient only.
4. In one transaction: the recipients' open verifications are canceled (`superseded`),
   the new ones are inserted `pending` (one INSERT), the fraud guard's prefix buckets are
   counted (one upsert), and every event goes out through `emit_batch` (one INSERT, one
   fan-out hook).
5. The message status events move each verification to `sent` or `failed`
   (`tracking.py`).

The code itself is never stored (only `codes.digest`) nor logged; test mode returns it as
`test_code`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone

from contacts.normalize import parse_email, parse_phone
from platform_core.audit.services import audit_record
from platform_core.errors import APIError, validation_error
from platform_core.events.bus import emit, emit_batch
from platform_core.identity.principal import Principal

from . import codes, delivery, fraud, links, network, texts
from .models import OPEN_STATUSES, Status, Verification, VerifyProfile

DEFAULT_CODE_LENGTH = 6
DEFAULT_MAX_ATTEMPTS = 3
DEFAULT_EXPIRATION_SECONDS = 600
CODE_LENGTH_RANGE = (4, 8)
MAX_ATTEMPTS_RANGE = (1, 10)


@dataclass
class SendOptions:
    channel: str | None = None
    code_length: int | None = None
    max_attempts: int | None = None
    profile_id: str | None = None
    locale: str | None = None
    fallback: list[str] = field(default_factory=list)
    country: str | None = None
    template_variables: dict[str, str] = field(default_factory=dict)
    device_token: str | None = None
    link_url: str | None = None


@dataclass
class Plan:
    """The options of a send resolved against its profile."""

    chain: list[str]
    code_length: int
    max_attempts: int
    expiration_seconds: int
    locale: str
    template: str
    sender: str
    name: str
    profile: VerifyProfile | None
    country: str
    variables: dict[str, str]
    link_url: str = ""


@dataclass
class Outcome:
    """One recipient's result: a verification (and its code in test mode) or an error."""

    recipient: str
    verification: Verification | None = None
    test_code: str | None = None
    test_link: str | None = None
    error: APIError | None = None


def _event(verification: Verification, **extra: Any) -> tuple[Any, str, dict[str, Any]]:
    return (verification.organization, f"verification.{verification.status}", {
        "verification_id": verification.pk, "to": verification.to,
        "channel": verification.channel, "status": verification.status,
        "profile_id": verification.profile_id, "attempts": verification.attempts, **extra})


# --- Options -------------------------------------------------------------------------------


def _profile(organization, profile_id: str | None) -> VerifyProfile | None:
    if not profile_id:
        return None
    profile = VerifyProfile.objects.for_organization(organization).filter(pk=profile_id).first()
    if profile is None:
        raise validation_error("profile_id", "No verify profile with this id.")
    return profile


def _check_channel(channel: str) -> None:
    if channel in delivery.FACTOR_CHANNELS:
        raise APIError("VERIFY_USE_FACTOR_ENDPOINT",
                       f"`{channel}` is a factor, not a code sent by the platform: use "
                       "/api/v1/verify/factors/totp (create, then verify a code).",
                       details={"field": "channel", "factor_endpoint": "/api/v1/verify/factors/totp",
                                "issues": [{"field": "channel",
                                            "message": "Use the factor endpoints."}]})
    known = delivery.OTP_CHANNELS + delivery.NETWORK_CHANNELS + (delivery.LINK_CHANNEL,)
    if channel not in known:
        raise validation_error(
            "channel", f"Unknown channel {channel!r}; use one of {', '.join(known)}.")


def _in_range(name: str, value: int | None, bounds: tuple[int, int]) -> None:
    if value is not None and not bounds[0] <= value <= bounds[1]:
        raise validation_error(name, f"{name} must be between {bounds[0]} and {bounds[1]}.")


def plan(*, organization, options: SendOptions) -> Plan:
    profile = _profile(organization, options.profile_id)
    channel = options.channel or (profile.channel if profile else "sms")
    _check_channel(channel)
    _in_range("code_length", options.code_length, CODE_LENGTH_RANGE)
    _in_range("max_attempts", options.max_attempts, MAX_ATTEMPTS_RANGE)
    locale = texts.normalize_locale(options.locale or (profile.locale if profile else None))
    if locale is None:
        raise validation_error("locale", f"Unsupported locale; use one of "
                                         f"{', '.join(texts.LOCALES)}.")
    chain = [channel]
    link_url = ""
    if channel == delivery.LINK_CHANNEL:
        if options.fallback:
            raise validation_error("fallback", "A magic link goes by email (an address) or "
                                               "sms (a phone number); no fallback.")
        try:
            link_url = links.check_url(options.link_url or "")
        except ValueError as exc:
            raise validation_error("link_url", str(exc)) from None
    for item in options.fallback:
        _check_channel(item)
        if (item in delivery.NETWORK_CHANNELS or item == delivery.LINK_CHANNEL
                or (item == "email") != (channel == "email")):
            raise validation_error("fallback", "Fallback channels must reach the same "
                                               "recipient (phone channels after a phone one).")
        if delivery.is_code_channel(item) != delivery.is_code_channel(channel):
            raise validation_error("fallback", "telegram and flashcall carry the code alone: "
                                               "they fall back to each other only.")
        if item not in chain:
            chain.append(item)
    if channel not in delivery.NETWORK_CHANNELS and channel != delivery.LINK_CHANNEL:
        chain = delivery.usable_chain(organization, chain)
    return Plan(
        chain=chain,
        code_length=options.code_length or (profile.code_length if profile
                                            else DEFAULT_CODE_LENGTH),
        max_attempts=options.max_attempts or (profile.max_attempts if profile
                                              else DEFAULT_MAX_ATTEMPTS),
        expiration_seconds=profile.expiration_seconds if profile else DEFAULT_EXPIRATION_SECONDS,
        locale=locale,
        template=profile.template if profile else "",
        sender=profile.sender if profile else "",
        name=(profile.name if profile else "") or organization.name,
        profile=profile,
        country=(options.country or organization.default_country or "US").upper(),
        variables={str(k): str(v) for k, v in options.template_variables.items()},
        link_url=link_url,
    )


def normalize_recipient(channel: str, raw: Any, *, country: str, bulk: bool = False) -> str:
    """E.164 for phone channels, a lower-cased address for email. A bulk row answers
    `INVALID_RECIPIENT`; a single send the field's own code."""
    text = str(raw or "").strip()
    if channel == delivery.LINK_CHANNEL:
        channel = delivery.link_transport(text)
    if channel == "email":
        value = parse_email(text)
        code = "INVALID_EMAIL"
    else:
        value = parse_phone(text, default_country=country) if text else None
        code = "INVALID_PHONE_NUMBER"
    if value is None:
        kind = "an email address" if channel == "email" else "an E.164 phone number"
        raise validation_error("recipients" if bulk else "to",
                               f"{text!r} is not {kind} (channel {channel}).",
                               code="INVALID_RECIPIENT" if bulk else code)
    return value


# --- Sending -------------------------------------------------------------------------------


def verifications_send(*, organization, principal: Principal | None, recipients: list[Any],
                       options: SendOptions, bulk: bool = False) -> list[Outcome]:
    """Send a code to each recipient (deduplicated keeping the first, in order). Errors of
    the request as a whole raise; each recipient's own failure is its outcome's `error`."""
    p = plan(organization=organization, options=options)
    channel = p.chain[0]
    if channel in delivery.NETWORK_CHANNELS:
        if bulk:
            raise validation_error("channel", "Silent network authentication needs one "
                                              "device token per recipient: use /verify/send.")
        return [_send_network(organization=organization, to=recipients[0], plan=p,
                              device_token=options.device_token)]

    outcomes: list[Outcome] = []
    accepted: list[tuple[Outcome, str]] = []  # (outcome, normalized recipient)
    seen: set[str] = set()
    for raw in recipients:
        try:
            to = normalize_recipient(channel, raw, country=p.country, bulk=bulk)
        except APIError as exc:
            if f"raw:{raw}" not in seen:
                seen.add(f"raw:{raw}")
                outcomes.append(Outcome(recipient=str(raw), error=exc))
            continue
        if to not in seen:
            seen.add(to)
            outcomes.append(Outcome(recipient=str(raw) if bulk else to))
            accepted.append((outcomes[-1], to))

    prefixes = {to: fraud.destination_prefix(to) for _, to in accepted}
    refused = fraud.check_many(organization, [(to, prefixes[to]) for _, to in accepted])
    now = timezone.now()
    expires_at = now + timedelta(seconds=p.expiration_seconds)
    created: list[Verification] = []
    with transaction.atomic():
        for outcome, to in accepted:
            if to in refused:
                outcome.error = refused[to]
                continue
            verification = Verification(
                organization=organization, profile=p.profile, to=to, channel=channel,
                status=Status.PENDING, code_length=p.code_length, max_attempts=p.max_attempts,
                locale=p.locale, destination_prefix=prefixes[to], created_at=now,
                expires_at=expires_at)
            code, secret = _secret(verification, p)
            try:
                sent = _deliver(organization, principal, verification, p, code)
            except APIError as exc:
                outcome.error = exc
                continue
            verification.channel, verification.message_id = sent.channel, sent.message_id
            verification.fallback = sent.fallback
            verification.code_hash = codes.digest(verification.pk, secret)
            outcome.verification = verification
            if organization.sandbox:
                outcome.test_code = code if channel != delivery.LINK_CHANNEL else secret_token(
                    code)
                outcome.test_link = code if channel == delivery.LINK_CHANNEL else None
            created.append(verification)
        events = _supersede(organization, [v.to for v in created], now=now)
        Verification.objects.bulk_create(created)
        fraud.record_sends(organization, [v.destination_prefix for v in created], now=now)
        emit_batch(events + [_event(v) for v in created])
    return outcomes


def _secret(verification: Verification, p: Plan) -> tuple[str, str]:
    """(what the recipient gets, what is hashed): a code twice, or a link and its nonce."""
    if verification.channel != delivery.LINK_CHANNEL:
        code = codes.generate(p.code_length)
        return code, code
    nonce = links.new_nonce()
    return links.link(p.link_url, links.sign(verification.pk, nonce)), nonce


def secret_token(link: str) -> str:
    """The token of a magic link (test mode answers it as `test_code`)."""
    return link.rsplit("token=", 1)[1]


def _deliver(organization, principal, verification: Verification, p: Plan,
             code: str) -> delivery.Delivery:
    chain = p.chain
    text = {"channel": chain[0], "locale": p.locale, "code": code, "name": p.name,
            "minutes": max(p.expiration_seconds // 60, 1), "template": p.template,
            "variables": p.variables,
            "email": (delivery.link_transport(verification.to) if chain[0] ==
                      delivery.LINK_CHANNEL else chain[0]) == "email"}
    body, subject = texts.render(**text)
    redacted, _subject = texts.render(**text, masked=True)
    return delivery.deliver(organization=organization, principal=principal, chain=chain,
                            to=verification.to, body=redacted, secret_body=body,
                            subject=subject, sender=p.sender or None,
                            verification_id=verification.pk)


def _supersede(organization, recipients: list[str], *, now) -> list[tuple]:
    """Cancel the recipients' open verifications (a new code replaces them)."""
    if not recipients:
        return []
    rows = list(Verification.objects.for_organization(organization)
                .filter(to__in=recipients, status__in=OPEN_STATUSES)
                .select_for_update().order_by("pk"))
    if not rows:
        return []
    Verification.objects.for_organization(organization).filter(
        pk__in=[r.pk for r in rows]).update(status=Status.CANCELED, cancel_reason="superseded",
                                            ended_at=now, updated_at=now)
    for row in rows:
        row.status, row.cancel_reason, row.ended_at = Status.CANCELED, "superseded", now
    return [_event(row, reason="superseded") for row in rows]


def _send_network(*, organization, to: Any, plan: Plan, device_token: str | None) -> Outcome:
    """`sna`: the operator confirms the device's number; no code is sent."""
    phone = normalize_recipient("sms", to, country=plan.country)
    if not device_token:
        raise network.not_wired("a device-bound `device_token` is required (without one "
                                "there is nothing to check the number against).")
    adapter = network.number_verification_for(organization)
    prefix = fraud.destination_prefix(phone)
    refused = fraud.check_many(organization, [(phone, prefix)])
    if phone in refused:
        raise refused[phone]
    matched = adapter.verify(phone_number=phone, device_token=device_token)
    now = timezone.now()
    verification = Verification(
        organization=organization, profile=plan.profile, to=phone, channel="sna",
        status=Status.VERIFIED if matched else Status.FAILED, code_length=0, max_attempts=1,
        attempts=1, locale=plan.locale, destination_prefix=prefix, created_at=now,
        expires_at=now + timedelta(seconds=plan.expiration_seconds), sent_at=now,
        verified_at=now if matched else None, ended_at=now)
    with transaction.atomic():
        events = _supersede(organization, [phone], now=now)
        verification.save(force_insert=True)
        emit_batch(events + [_event(verification)])
    return Outcome(recipient=phone, verification=verification)


# --- Check, cancel, expiry -----------------------------------------------------------------


_REFUSALS = {
    Status.VERIFIED: "VERIFICATION_ALREADY_VERIFIED",
    Status.CANCELED: "VERIFICATION_CANCELED",
    Status.FAILED: "VERIFICATION_MAX_ATTEMPTS",
    Status.EXPIRED: "VERIFICATION_EXPIRED",
}


def _refusal(verification: Verification) -> APIError:
    if verification.cancel_reason == "delivery_failed":
        return APIError("VERIFICATION_DELIVERY_FAILED",
                        details={"verification_id": verification.pk,
                                 "status": verification.status})
    return APIError(_REFUSALS[verification.status],
                    details={"verification_id": verification.pk,
                             "status": verification.status})


def _end(verification: Verification, status: str, *, now, reason: str = "") -> None:
    verification.status, verification.ended_at = status, now
    verification.cancel_reason = reason
    verification.save(update_fields=["status", "ended_at", "cancel_reason", "attempts",
                                     "verified_at", "updated_at"])
    emit(organization=verification.organization, type=f"verification.{status}",
         data=_event(verification, **({"reason": reason} if reason else {}))[2])


def _locked(organization, *, verification_id: str | None, to: str | None) -> Verification:
    rows = Verification.objects.for_organization(organization).select_for_update()
    if verification_id:
        found = rows.filter(pk=verification_id).first()
    else:
        found = rows.filter(to=to).order_by("-created_at", "-pk").first()
    if found is None:
        raise APIError("NOT_FOUND", "No verification with this id.")
    return found


def verification_check(*, organization, code: str | None = None,
                       verification_id: str | None = None, to: str | None = None,
                       token: str | None = None) -> tuple[Verification, bool]:
    """Count one attempt. A match verifies; the last wrong attempt fails the verification.
    After success, expiry, cancel or failure the check refuses with the status's code.
    `token` (a magic link's) names its verification and carries the secret itself."""
    if token:
        verification_id, code = links.unsign(token)
    expired = None
    with transaction.atomic():
        verification = _locked(organization, verification_id=verification_id, to=to)
        now = timezone.now()
        if verification.status in OPEN_STATUSES and verification.expires_at <= now:
            _end(verification, Status.EXPIRED, now=now)
            expired = verification
        elif verification.status not in OPEN_STATUSES:
            raise _refusal(verification)
        else:
            verification.attempts += 1
            valid = codes.matches(verification.pk, code or "", verification.code_hash)
            if valid:
                verification.verified_at = now
                _end(verification, Status.VERIFIED, now=now)
                fraud.record_verified(verification)
            elif verification.attempts >= verification.max_attempts:
                _end(verification, Status.FAILED, now=now)
            else:
                verification.save(update_fields=["attempts", "updated_at"])
            return verification, valid
    raise _refusal(expired)  # committed as expired first


def verification_cancel(*, verification: Verification,
                        principal: Principal | None = None) -> Verification:
    with transaction.atomic():
        row = _locked(verification.organization, verification_id=verification.pk, to=None)
        now = timezone.now()
        if row.status in OPEN_STATUSES and row.expires_at <= now:
            _end(row, Status.EXPIRED, now=now)
            expired = row
        elif row.status not in OPEN_STATUSES:
            raise _refusal(row)
        else:
            _end(row, Status.CANCELED, now=now, reason="canceled")
            return row
    raise _refusal(expired)


def verifications_expire_due(*, batch: int = 500) -> int:
    """Mark lapsed open verifications `expired` (beat sweep), a batch per transaction;
    then drop the fraud guard's buckets no window reads any more."""
    fraud.prune_buckets()
    total = 0
    while True:
        now = timezone.now()
        with transaction.atomic():
            rows = list(Verification.objects.dangerously_unscoped()
                        .filter(status__in=OPEN_STATUSES, expires_at__lte=now)
                        .select_related("organization").select_for_update(skip_locked=True,
                                                                           of=("self",))
                        .order_by("expires_at")[:batch])
            if not rows:
                return total
            Verification.objects.dangerously_unscoped().filter(
                pk__in=[r.pk for r in rows]).update(status=Status.EXPIRED, ended_at=now,
                                                    updated_at=now)
            for row in rows:
                row.status, row.ended_at = Status.EXPIRED, now
            emit_batch([_event(row) for row in rows])
        total += len(rows)
        if len(rows) < batch:
            return total


# --- Profiles ------------------------------------------------------------------------------


def profile_create(*, organization, principal: Principal | None, request=None,
                   **fields: Any) -> VerifyProfile:
    with transaction.atomic():
        profile = VerifyProfile.objects.create(organization=organization, **fields)
        audit_record(action="verify_profile.created", principal=principal, target=profile,
                     request=request)
    return profile


def profile_update(*, profile: VerifyProfile, principal: Principal | None, request=None,
                   **changes: Any) -> VerifyProfile:
    with transaction.atomic():
        for name, value in changes.items():
            setattr(profile, name, value)
        profile.save()
        audit_record(action="verify_profile.updated", principal=principal, target=profile,
                     request=request, metadata={"fields": sorted(changes)})
    return profile


def profile_delete(*, profile: VerifyProfile, principal: Principal | None,
                   request=None) -> None:
    with transaction.atomic():
        audit_record(action="verify_profile.deleted", principal=principal, target=profile,
                     request=request)
        profile.delete()
