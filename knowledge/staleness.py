"""The staleness scorecard (Document 3, 2.2 and 4.3), computed in one SQL statement.

Age counts from `last_verified_at`, else `updated_at`. A document is `fresh` below its
threshold, `stale` at or above it and `critical` at twice it or with no timestamp; the
document's own `staleness_threshold_days` wins over the request's default. Totals cover
every document scanned; `attention_required` (stale and critical) is oldest first (no
timestamp counts as oldest; ties by id) and capped by `limit`.

The statement: the tenant-scoped document queryset (age and threshold annotated) as a CTE,
a bucket per row, then the totals row LEFT JOINed to the capped attention rows, so one
round trip answers both, even when nothing needs attention. Plain SQL that PostgreSQL and
SQLite both run; only the age expression differs per vendor.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from django.db import connection
from django.db.models import DateTimeField, F, FloatField, Func, Value
from django.db.models.functions import Coalesce
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from .models import Document, KnowledgeBase

DAY_SECONDS = 86400
DEFAULT_THRESHOLD_DAYS = 90
MAX_LIMIT = 1000
ITEM_FIELDS = ("id", "name", "type", "status", "last_verified_at", "last_cited_at",
               "updated_at")


class AgeSeconds(Func):
    """Seconds from `stamp` to `now` (NULL when `stamp` is NULL)."""

    output_field = FloatField()

    def __init__(self, stamp, now: datetime) -> None:
        super().__init__(Value(now, output_field=DateTimeField()), stamp)

    def as_postgresql(self, compiler, connection, **extra):
        return self.as_sql(compiler, connection, template="EXTRACT(EPOCH FROM (%(expressions)s))",
                           arg_joiner=" - ", **extra)

    def as_sqlite(self, compiler, connection, **extra):
        return self.as_sql(compiler, connection,
                           template="ROUND((julianday(%(expressions)s)) * 86400.0, 3)",
                           arg_joiner=") - julianday(", **extra)


_SQL = """
WITH d AS ({inner}),
b AS (
  SELECT d.*, CASE
    WHEN d.age_seconds IS NULL OR d.age_seconds >= 2 * d.threshold_days * 86400 THEN 'critical'
    WHEN d.age_seconds >= d.threshold_days * 86400 THEN 'stale'
    ELSE 'fresh' END AS bucket
  FROM d
)
SELECT t.fresh, t.stale, t.critical, t.scanned, t.never_verified,
       {item_columns}, a.threshold_days, a.age_seconds, a.bucket
FROM (
  SELECT COALESCE(SUM(CASE WHEN bucket = 'fresh' THEN 1 ELSE 0 END), 0) AS fresh,
         COALESCE(SUM(CASE WHEN bucket = 'stale' THEN 1 ELSE 0 END), 0) AS stale,
         COALESCE(SUM(CASE WHEN bucket = 'critical' THEN 1 ELSE 0 END), 0) AS critical,
         COUNT(*) AS scanned,
         COALESCE(SUM(CASE WHEN last_verified_at IS NULL THEN 1 ELSE 0 END), 0)
           AS never_verified
  FROM b
) t
LEFT JOIN (
  SELECT * FROM b WHERE bucket <> 'fresh'
  ORDER BY (age_seconds IS NULL) DESC, age_seconds DESC, id LIMIT %s
) a ON 1 = 1
ORDER BY (a.age_seconds IS NULL) DESC, a.age_seconds DESC, a.id
"""


def _as_datetime(value: Any) -> datetime | None:
    """Raw rows carry datetimes (PostgreSQL) or ISO strings (SQLite)."""
    if value is None or isinstance(value, datetime):
        return value
    parsed = parse_datetime(str(value))
    if parsed is not None and parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed


def scorecard(*, knowledge_base: KnowledgeBase | None = None,
              default_threshold_days: int = DEFAULT_THRESHOLD_DAYS,
              limit: int = MAX_LIMIT) -> dict[str, Any]:
    """The scorecard of one base, or of every document of the current organization when
    `knowledge_base` is None (`/ai/kb/staleness`)."""
    now = timezone.now()
    documents = Document.objects.all()  # tenant-scoped by the manager
    if knowledge_base is not None:
        documents = documents.filter(knowledge_base=knowledge_base)
    inner = documents.order_by().annotate(
        threshold_days=Coalesce(F("staleness_threshold_days"), Value(default_threshold_days)),
        age_seconds=AgeSeconds(Coalesce(F("last_verified_at"), F("updated_at")), now),
    ).values(*ITEM_FIELDS, "threshold_days", "age_seconds")
    inner_sql, params = inner.query.sql_with_params()
    sql = _SQL.format(inner=inner_sql, item_columns=", ".join(f"a.{f}" for f in ITEM_FIELDS))
    with connection.cursor() as cursor:
        cursor.execute(sql, [*params, limit])
        rows = cursor.fetchall()
    fresh, stale, critical, scanned, never_verified = (int(v or 0) for v in rows[0][:5])
    attention = []
    for row in rows:
        item = dict(zip(ITEM_FIELDS, row[5:5 + len(ITEM_FIELDS)], strict=True))
        if item["id"] is None:
            continue  # the totals row alone: nothing needs attention
        threshold, age, bucket = row[5 + len(ITEM_FIELDS):]
        for name in ("last_verified_at", "last_cited_at", "updated_at"):
            item[name] = _as_datetime(item[name])
        attention.append({**item, "bucket": bucket, "threshold_days": int(threshold),
                          "age_days": None if age is None else int(float(age) // DAY_SECONDS)})
    return {"knowledge_base_id": knowledge_base.pk if knowledge_base else None,
            "totals": {"fresh": fresh, "stale": stale, "critical": critical,
                       "documents_scanned": scanned, "never_verified": never_verified},
            "attention_required": attention,
            "default_threshold_days": default_threshold_days, "scanned_at": now}
