"""The fraud guard against SMS pumping (on by default; limits in `conf.py`, overridable
per organization).

Three rules, checked for a whole batch with two aggregate queries:

1. Per recipient: at most `recipient_limit` sends in `recipient_window_seconds`
   (429 `VERIFY_RECIPIENT_LIMIT`).
2. Per destination prefix (country calling code and the first three national digits;
   `@domain` for email): at most `prefix_limit` sends in `prefix_window_seconds`
   (429 `VERIFY_PREFIX_LIMIT`). Sends earlier in the same batch count.
3. Conversion: a prefix with at least `conversion_min_sends` settled sends in the
   conversion window (verified, or older than the settle time) verifying less than
   `conversion_min_rate` of them is blocked (403 `VERIFY_PREFIX_BLOCKED`): pumped
   traffic is sent and never verified.
"""

from __future__ import annotations

from collections import Counter
from datetime import timedelta

import phonenumbers
from django.db.models import Count, Q
from django.utils import timezone

from platform_core.errors import APIError

from . import conf
from .models import Status, Verification


def destination_prefix(to: str) -> str:
    if "@" in to:
        return "@" + to.rsplit("@", 1)[1]
    try:
        number = phonenumbers.parse(to, None)
    except phonenumbers.NumberParseException:
        return to[:5]
    return f"+{number.country_code}{str(number.national_number)[:3]}"


def _blocked(prefix: str, sent: int, verified: int, limits: conf.Limits) -> APIError | None:
    if sent < limits.conversion_min_sends:
        return None
    rate = verified / sent
    if rate >= limits.conversion_min_rate:
        return None
    return APIError("VERIFY_PREFIX_BLOCKED", details={
        "prefix": prefix, "sent": sent, "verified": verified,
        "conversion_rate": round(rate, 4), "minimum_rate": limits.conversion_min_rate})


def check_many(organization, rows: list[tuple[str, str]]) -> dict[str, APIError]:
    """`rows` are (recipient, prefix) in submission order; answers the refused ones."""
    limits = conf.limits_for(organization.pk)
    if not limits.fraud_guard_enabled or not rows:
        return {}
    now = timezone.now()
    mine = Verification.objects.for_organization(organization)
    recipients = sorted({to for to, _ in rows})
    per_recipient = dict(
        mine.filter(to__in=recipients,
                    created_at__gte=now - timedelta(seconds=limits.recipient_window_seconds))
        .order_by().values_list("to").annotate(n=Count("id")))
    prefix_since = now - timedelta(seconds=limits.prefix_window_seconds)
    conversion_since = now - timedelta(seconds=conf.conversion_window_seconds())
    settled_before = now - timedelta(seconds=conf.conversion_settle_seconds())
    verified = Q(status=Status.VERIFIED)
    per_prefix = {
        row["destination_prefix"]: row
        for row in mine.filter(destination_prefix__in=sorted({p for _, p in rows}),
                               created_at__gte=min(prefix_since, conversion_since))
        .order_by().values("destination_prefix").annotate(
            recent=Count("id", filter=Q(created_at__gte=prefix_since)),
            settled=Count("id", filter=Q(created_at__gte=conversion_since)
                          & (Q(created_at__lte=settled_before) | verified)),
            verified=Count("id", filter=Q(created_at__gte=conversion_since) & verified))
    }
    refused: dict[str, APIError] = {}
    batch_prefix: Counter[str] = Counter()
    for to, prefix in rows:
        stats = per_prefix.get(prefix, {})
        blocked = _blocked(prefix, stats.get("settled", 0), stats.get("verified", 0), limits)
        if blocked is not None:
            refused[to] = blocked
        elif per_recipient.get(to, 0) >= limits.recipient_limit:
            refused[to] = _limited("VERIFY_RECIPIENT_LIMIT", limits.recipient_limit,
                                   limits.recipient_window_seconds, to=to)
        elif stats.get("recent", 0) + batch_prefix[prefix] >= limits.prefix_limit:
            refused[to] = _limited("VERIFY_PREFIX_LIMIT", limits.prefix_limit,
                                   limits.prefix_window_seconds, prefix=prefix)
        else:
            batch_prefix[prefix] += 1
    return refused


def _limited(code: str, limit: int, window: int, **detail: str) -> APIError:
    return APIError(code, details={"limit": limit, "window_seconds": window, **detail},
                    headers={"Retry-After": str(window)})
