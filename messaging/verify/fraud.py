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

Rules 2 and 3 read the per-prefix rollup (`VerifyPrefixBucket`, 5-minute buckets counted
by the send and the successful check), never the verification rows, so a send costs the
same at any volume. A window's edge is a bucket's: a window counts the buckets that start
inside it, and a bucket counts against conversion once it ended `settle` seconds ago (its
verified ones at once). Rule 1 counts the recipient's own rows (a handful, indexed).
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timedelta

import phonenumbers
from django.db import connection
from django.db.models import Count, F, Q, Sum
from django.utils import timezone

from platform_core.errors import APIError

from . import conf
from .models import Verification, VerifyPrefixBucket

BUCKET = timedelta(seconds=VerifyPrefixBucket.BUCKET_SECONDS)


def bucket_start(when: datetime) -> datetime:
    seconds = int(when.timestamp())
    return datetime.fromtimestamp(seconds - seconds % VerifyPrefixBucket.BUCKET_SECONDS,
                                  tz=when.tzinfo or timezone.get_current_timezone())


def record_sends(organization, prefixes: list[str], *, now: datetime) -> None:
    """Count sends into their prefix buckets: one upsert for a batch (in the send's
    transaction, so a rolled-back send counts nothing)."""
    counts = Counter(p for p in prefixes if p)
    if not counts:
        return
    table = VerifyPrefixBucket._meta.db_table
    start = connection.ops.adapt_datetimefield_value(bucket_start(now))
    rows = sorted(counts.items())  # one order: concurrent batches never deadlock
    values = ", ".join(["(%s, %s, %s, %s, 0)"] * len(rows))
    params: list = []
    for prefix, n in rows:
        params += [organization.pk, prefix, start, n]
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} (organization_id, prefix, bucket_start, sent, verified) "  # noqa: S608 - names are ours
            f"VALUES {values} ON CONFLICT (organization_id, prefix, bucket_start) "
            f"DO UPDATE SET sent = {table}.sent + excluded.sent", params)


def record_verified(verification: Verification) -> None:
    """Count a verified code in the bucket of its send."""
    if verification.destination_prefix:
        VerifyPrefixBucket.objects.filter(
            organization_id=verification.organization_id,
            prefix=verification.destination_prefix,
            bucket_start=bucket_start(verification.created_at),
        ).update(verified=F("verified") + 1)


def prune_buckets(*, now: datetime | None = None) -> int:
    """Drop buckets older than every window that reads them (the expiry sweep calls it)."""
    now = now or timezone.now()
    horizon = max(conf.conversion_window_seconds(), conf.max_prefix_window_seconds())
    deleted, _ = VerifyPrefixBucket.objects.filter(
        bucket_start__lt=now - timedelta(seconds=horizon) - BUCKET).delete()
    return deleted


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
    prefix_since = bucket_start(now - timedelta(seconds=limits.prefix_window_seconds))
    conversion_since = bucket_start(now - timedelta(seconds=conf.conversion_window_seconds()))
    # A bucket is settled once its last send is `settle` seconds old.
    settled_before = now - timedelta(seconds=conf.conversion_settle_seconds()) - BUCKET
    in_conversion = Q(bucket_start__gte=conversion_since)
    per_prefix = {
        row["prefix"]: {k: v or 0 for k, v in row.items()}
        for row in VerifyPrefixBucket.objects.filter(
            organization_id=organization.pk, prefix__in=sorted({p for _, p in rows}),
            bucket_start__gte=min(prefix_since, conversion_since))
        .order_by().values("prefix").annotate(
            recent=Sum("sent", filter=Q(bucket_start__gte=prefix_since)),
            settled_sent=Sum("sent", filter=in_conversion
                             & Q(bucket_start__lte=settled_before)),
            fresh_verified=Sum("verified", filter=in_conversion
                               & Q(bucket_start__gt=settled_before)),
            verified=Sum("verified", filter=in_conversion))
    }
    for stats in per_prefix.values():
        stats["settled"] = stats["settled_sent"] + stats["fresh_verified"]
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
