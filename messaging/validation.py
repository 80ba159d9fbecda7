"""Pre-send validation of a message (Document 1, section 7; Document 2, 4.4).

Every failure names the offending field in `error.details` (`field` and the documented
`issues[{field, message}]`), with the registered codes:

- `MISSING_REQUIRED_FIELD`: `channel`, `to`, one of `body` / `template_name` /
  `media_url`, an email's `subject` (unless a template supplies it).
- `INVALID_PHONE_NUMBER` / `INVALID_EMAIL`: the recipient, E.164 or a national number of
  the organization's `default_country` (normalized to E.164); emails lower-cased.
- `INVALID_FROM_NUMBER`: the sender: E.164 for phone channels (also a 5-6 digit short
  code or an alphanumeric sender id of 1-11 characters for SMS, an agent id for RCS), an
  email address for email.
- `INVALID_TEMPLATE`: a malformed template name, or one the templates family rejects.
- `MMS_NANP_ONLY`: MMS (or SMS with media, which is sent as MMS) to a non-+1 number.
- `VALIDATION_ERROR`: everything else that is malformed (channel, send_at, fallback...).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from email.utils import parseaddr
from typing import Any
from urllib.parse import urlsplit

import phonenumbers
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from contacts.normalize import parse_email, parse_phone
from platform_core.errors import APIError, validation_error
from platform_core.net import ssrf

from .models import CODE_CHANNELS, PHONE_CHANNELS, Channel

CHANNELS = tuple(c.value for c in Channel)
MAX_MEDIA = 10
MAX_FALLBACK = 5
SEND_AT_MIN = timedelta(minutes=1)
SEND_AT_MAX = timedelta(days=35)
# Clock skew tolerated on the 1-minute minimum (a client sending "now + 60 s").
SEND_AT_SKEW = timedelta(seconds=10)
FALLBACK_AFTER_DEFAULT = 60
FALLBACK_AFTER_MIN = 5
FALLBACK_AFTER_MAX = 24 * 3600
BODY_LIMITS = {
    Channel.SMS: 1600,
    Channel.MMS: 1600,
    Channel.WHATSAPP: 4096,
    Channel.RCS: 2000,
    Channel.VOICE: 4096,
    Channel.EMAIL: 200_000,
    Channel.VIBER: 1000,
    Channel.TELEGRAM: 8,
    Channel.FLASHCALL: 8,
}
_CODE_BODY = re.compile(r"[0-9]{4,8}")
# A flash call's caller id prefix: the code's digits complete it (E.164 is at most 15).
_FLASHCALL_PREFIX = re.compile(r"\+[1-9][0-9]{3,10}")
# A Viber service id / Telegram sender username.
_CHAT_SENDER = re.compile(r"[A-Za-z0-9_.@\-]{1,64}")
_ALPHANUMERIC_SENDER = re.compile(r"(?=.*[A-Za-z])[A-Za-z0-9 ]{1,11}")
_SHORT_CODE = re.compile(r"[0-9]{5,6}")
_RCS_AGENT = re.compile(r"[A-Za-z0-9_.@\-]{1,128}")
_TEMPLATE_NAME = re.compile(r"[A-Za-z0-9_.\-]{1,255}")
_LANGUAGE = re.compile(r"[A-Za-z]{2,3}([_-][A-Za-z0-9]{2,8}){0,3}")
_CHANNEL_PREFIX = re.compile(r"^(whatsapp|sms|rcs|tel):", re.IGNORECASE)


def _field_error(code: str, field: str, message: str, **extra: Any) -> APIError:
    return APIError(code, message, details={"field": field,
                                            "issues": [{"field": field, "message": message}],
                                            **extra})


def missing(fields: list[str], message: str | None = None) -> APIError:
    text = message or f"Missing required field: {', '.join(fields)}."
    return APIError(
        "MISSING_REQUIRED_FIELD", text,
        details={"field": fields[0], "fields": fields,
                 "issues": [{"field": f, "message": "This field is required."} for f in fields]},
    )


def check_channel(channel: str | None, *, field: str = "channel") -> str:
    if not channel:
        raise missing([field])
    if channel not in CHANNELS:
        raise validation_error(field, f"Unknown channel {channel!r}; use one of "
                                      f"{', '.join(CHANNELS)}.")
    return channel


def strip_channel_prefix(address: str) -> str:
    """`whatsapp:+1555...` (Twilio's addressing) is the number itself."""
    return _CHANNEL_PREFIX.sub("", (address or "").strip())


def normalize_recipient(channel: str, raw: str | None, *, default_country: str,
                        field: str = "to") -> str:
    if raw is None or not str(raw).strip():
        raise missing([field])
    text = strip_channel_prefix(str(raw))
    if channel == Channel.EMAIL:
        email = parse_email(parseaddr(text)[1] or text)
        if email is None:
            raise _field_error("INVALID_EMAIL", field, "Not a valid email address.")
        return email
    phone = parse_phone(text, default_country=default_country)
    if phone is None:
        raise _field_error(
            "INVALID_PHONE_NUMBER", field,
            "Not a valid phone number: use E.164 (+14155550123) or a national number of the "
            f"organization's country ({(default_country or 'US').upper()}).",
        )
    return phone


def normalize_sender(channel: str, raw: str, *, default_country: str,
                     field: str = "from") -> str:
    text = strip_channel_prefix(str(raw))
    if channel == Channel.EMAIL:
        email = parse_email(parseaddr(text)[1] or text)
        if email is None:
            raise _field_error("INVALID_FROM_NUMBER", field,
                               "The sender of an email must be a valid email address.")
        return email
    if channel in (Channel.SMS, Channel.MMS):
        if _SHORT_CODE.fullmatch(text):
            return text
        if channel == Channel.SMS and _ALPHANUMERIC_SENDER.fullmatch(text) \
                and not text.isdigit():
            return text
    if channel == Channel.FLASHCALL:  # a caller id range, never a whole number
        if _FLASHCALL_PREFIX.fullmatch(text):
            return text
        raise _field_error("INVALID_FROM_NUMBER", field, "The sender of a flash call is its "
                           "caller id range: + and 4-11 digits (the code completes it).")
    phone = parse_phone(text, default_country=default_country) if text else None
    if phone is not None:
        return phone
    if channel == Channel.RCS and _RCS_AGENT.fullmatch(text):
        return text
    if channel in (Channel.VIBER, Channel.TELEGRAM) and _CHAT_SENDER.fullmatch(text):
        return text
    raise _field_error(
        "INVALID_FROM_NUMBER", field,
        f"Not a valid {channel} sender: use an E.164 number"
        + (", a short code or an alphanumeric sender id" if channel == Channel.SMS else "")
        + (" or an RCS agent id" if channel == Channel.RCS else "") + ".",
    )


def is_nanp(e164: str) -> bool:
    try:
        return phonenumbers.parse(e164).country_code == 1
    except phonenumbers.NumberParseException:
        return False


def check_body(channel: str, body: str) -> None:
    limit = BODY_LIMITS[channel]
    if len(body) > limit:
        raise validation_error("body", f"The body of a {channel} message is at most {limit} "
                                       "characters.")


def check_code_body(channel: str, text: str) -> None:
    """Telegram (Telegram Gateway) and flash calls carry a verification code, not a text:
    the text handed to the provider is 4-8 digits."""
    if channel in CODE_CHANNELS and not _CODE_BODY.fullmatch(text or ""):
        raise validation_error("body", f"The body of a {channel} message is the 4-8 digit "
                                       "verification code it delivers.")


def check_template_shape(template_name: str | None, language: str | None,
                         variables: Any) -> None:
    if template_name is not None and not _TEMPLATE_NAME.fullmatch(template_name):
        raise _field_error("INVALID_TEMPLATE", "template_name",
                           "A template name is 1-255 letters, digits, '_', '-' or '.'.")
    if language is not None and not _LANGUAGE.fullmatch(language):
        raise validation_error("language", "Use a locale code such as en, en_US or pt-BR.")
    if variables is not None and (not isinstance(variables, dict) or not all(
        isinstance(k, str) and isinstance(v, str | int | float) and not isinstance(v, bool)
        for k, v in variables.items()
    )):
        raise validation_error(
            "variables", "variables is an object of strings keyed by placeholder "
                         '(for example {"1": "Ana"}).')


def url_ok(url: str) -> bool:
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname) and len(url) <= 2048


def normalize_media(organization, media: Any) -> list[str]:
    """`media_url`: one URL or a list; a `fil_` id of an uploaded file becomes its signed URL
    (the longest lifetime, 7 days: Document 2, 2.7 and 4.10)."""
    if media in (None, "", []):
        return []
    items = [media] if isinstance(media, str) else media
    if not isinstance(items, list) or not all(isinstance(i, str) and i for i in items):
        raise validation_error("media_url", "media_url is a URL or a list of URLs.")
    if len(items) > MAX_MEDIA:
        raise validation_error("media_url", f"At most {MAX_MEDIA} media URLs per message.")
    urls = []
    for item in items:
        if item.startswith("fil_"):
            urls.append(_file_url(organization, item))
        elif url_ok(item):
            urls.append(item)
        else:
            raise validation_error("media_url", f"{item[:100]!r} is not an http(s) URL or a "
                                                "file id.")
    return urls


def _file_url(organization, file_id: str) -> str:
    from platform_core.files.models import StoredFile
    from platform_core.files.signed_urls import MAX_TTL_MS, signed_url

    stored = StoredFile.objects.for_organization(organization).filter(pk=file_id).first()
    if stored is None:
        raise validation_error("media_url", f"No file {file_id} in this organization.")
    return signed_url(stored, ttl_ms=MAX_TTL_MS).url


def messaging_service(organization, service_id: str | None):
    """The organization's messaging service named by `messaging_service_id`, or None when
    none is named; an unknown id is a validation error on that field."""
    from .models import MessagingService

    if not service_id:
        return None
    service = MessagingService.objects.for_organization(organization).filter(
        pk=service_id).first()
    if service is None:
        raise validation_error("messaging_service_id", "No such messaging service.")
    return service


def check_callback_url(url: str | None, *, field: str = "status_callback") -> str | None:
    """Shape and literal-address check now; the full SSRF check (DNS) runs at delivery."""
    if not url:
        return None
    if not url_ok(url):
        raise validation_error(field, "Use an http(s) URL of at most 2048 characters.")
    try:
        ssrf.check_host(urlsplit(url).hostname or "")
    except ssrf.UnsafeTarget:
        raise validation_error(field, "The URL is not an allowed callback target: it is "
                                      "not a public address.") from None
    return url


def parse_send_at(raw: Any, *, now: datetime | None = None) -> datetime | None:
    if raw in (None, ""):
        return None
    try:
        value = raw if isinstance(raw, datetime) else (
            parse_datetime(raw) if isinstance(raw, str) else None)
    except ValueError:  # well formed but out of range (month 13...)
        value = None
    if value is None:
        raise validation_error("send_at", "send_at must be an ISO 8601 date-time.")
    if timezone.is_naive(value):
        value = timezone.make_aware(value, UTC)
    now = now or timezone.now()
    if value < now + SEND_AT_MIN - SEND_AT_SKEW:
        raise validation_error("send_at", "send_at must be at least 1 minute in the future.")
    if value > now + SEND_AT_MAX:
        raise validation_error("send_at", "send_at must be at most 35 days in the future.")
    return value


def check_fallback(channel: str, fallback: Any, after: Any) -> tuple[list[str], int]:
    if fallback in (None, []):
        chain: list[str] = []
    elif isinstance(fallback, str):
        chain = [fallback]
    elif isinstance(fallback, list) and all(isinstance(c, str) for c in fallback):
        chain = list(fallback)
    else:
        raise validation_error("fallback", "fallback is a list of channels.")
    if len(chain) > MAX_FALLBACK:
        raise validation_error("fallback", f"At most {MAX_FALLBACK} fallback channels.")
    seen = {channel}
    for item in chain:
        if item not in CHANNELS:
            raise validation_error("fallback", f"Unknown channel {item!r} in fallback.")
        if item in seen:
            raise validation_error("fallback", f"Channel {item!r} appears twice in the chain.")
        if (item in CODE_CHANNELS) != (channel in CODE_CHANNELS):
            raise validation_error(
                "fallback", f"{channel} and {item} do not carry the same content: a code "
                            "channel (telegram, flashcall) falls back to a code channel only.")
        if (item == Channel.EMAIL) != (channel == Channel.EMAIL):
            raise validation_error(
                "fallback", f"A {channel} recipient cannot be reached on {item}: a fallback "
                            "channel must address the same recipient.")
        seen.add(item)
    if after in (None, ""):
        seconds = FALLBACK_AFTER_DEFAULT
    else:
        try:
            seconds = int(after)
        except (TypeError, ValueError):
            raise validation_error("fallback_after_seconds", "Use a whole number of seconds.") \
                from None
        if isinstance(after, bool) or not FALLBACK_AFTER_MIN <= seconds <= FALLBACK_AFTER_MAX:
            raise validation_error(
                "fallback_after_seconds",
                f"fallback_after_seconds is {FALLBACK_AFTER_MIN} to {FALLBACK_AFTER_MAX}.")
    return chain, seconds


def is_phone_channel(channel: str) -> bool:
    return channel in PHONE_CHANNELS
