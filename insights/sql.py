# ruff: noqa: S608 - table names come from the models; every value is a bound parameter
"""The SQL the insights figures share: the usage source (rollup + fresh rows), buckets in
the organization's zone, JSON fields of tracked events, and the cursor on the read alias.

PostgreSQL does everything in SQL. The embedded SQLite default has no time-zone database
in SQL: the same statements call three small Python functions registered on each SQLite
connection (`register_sqlite_functions`), so the queries stay the same on both.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from django.db import connections

from agents.usage.models import AIUsage

from .db import read_alias
from .models import RollupState, UsageRollup

QUARTER = timedelta(minutes=15)
EPOCH = datetime(2000, 1, 1, tzinfo=UTC)
ROLLUP_STATE = "usage"
SOURCE_COLUMNS = ("bucket, agent_id, model, channel, feature, conversation_id, cost_cents, "
                  "total_tokens, calls, first_at")


def vendor(alias: str | None = None) -> str:
    return connections[alias or read_alias()].vendor


def floor_quarter(moment: datetime) -> datetime:
    return EPOCH + ((moment - EPOCH) // QUARTER) * QUARTER


def ceil_quarter(moment: datetime) -> datetime:
    floored = floor_quarter(moment)
    return floored if floored == moment else floored + QUARTER


def db_time(value: datetime, alias: str | None = None) -> Any:
    return connections[alias or read_alias()].ops.adapt_datetimefield_value(value)


def as_datetime(value: Any) -> datetime | None:
    """A timestamp column as an aware UTC datetime (SQLite answers text)."""
    if value is None or isinstance(value, datetime):
        return value.astimezone(UTC) if isinstance(value, datetime) else None
    parsed = datetime.fromisoformat(str(value))
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


def as_date(value: Any) -> date:
    return value if isinstance(value, date) else date.fromisoformat(str(value)[:10])


def fetch(sql: str, params: list[Any]) -> list[tuple]:
    with connections[read_alias()].cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def quarter_expr(column: str, alias: str | None = None) -> str:
    if vendor(alias) == "postgresql":
        return f"date_bin('15 minutes', {column}, TIMESTAMPTZ '2000-01-01 00:00:00+00')"
    return f"insights_quarter({column})"


def local_bucket_expr(column: str, granularity: str) -> tuple[str, list[Any]]:
    """SQL of the organization-zone bucket of `column`: the local date (`day`) or the UTC
    instant the local hour starts (`hour`, distinct for the two hours of a fall-back).
    The caller appends `tz` once per `%s` placeholder (see `bucket_params`)."""
    if vendor() == "postgresql":
        if granularity == "day":
            return f"(({column}) AT TIME ZONE CAST(%s AS text))::date", ["tz"]
        local = f"(({column}) AT TIME ZONE CAST(%s AS text))"
        return f"(({column}) - ({local} - date_trunc('hour', {local})))", ["tz", "tz"]
    return f"insights_local_bucket({column}, %s, '{granularity}')", ["tz"]


def bucket_sql(column: str, granularity: str, tz: ZoneInfo) -> tuple[str, list[Any]]:
    sql, slots = local_bucket_expr(column, granularity)
    return sql, [tz.key for _ in slots]


def bucket_key(value: Any, granularity: str) -> Any:
    return as_date(value) if granularity == "day" else as_datetime(value)


def json_text(column: str, key: str) -> str:
    """A top-level JSON property as text (NULL when absent)."""
    if vendor() == "postgresql":
        return f"({column} ->> '{key}')"
    return f"CAST(json_extract({column}, '$.{key}') AS TEXT)"


def json_cents(column: str, key: str) -> str:
    """A top-level JSON property as integer cents when it is a non-negative JSON integer
    (up to 100,000,000,000), else NULL."""
    if vendor() == "postgresql":
        return (f"(CASE WHEN jsonb_typeof({column} -> '{key}') = 'number' "
                f"AND ({column} ->> '{key}') ~ '^[0-9]{{1,12}}$' "
                f"AND ({column} ->> '{key}')::bigint <= 100000000000 "
                f"THEN ({column} ->> '{key}')::bigint END)")
    return (f"(CASE WHEN json_type({column}, '$.{key}') = 'integer' "
            f"AND json_extract({column}, '$.{key}') BETWEEN 0 AND 100000000000 "
            f"THEN json_extract({column}, '$.{key}') END)")


def watermark() -> datetime | None:
    """How far the rollup reaches (read with the figures, on the same database)."""
    row = fetch(f"SELECT rolled_until FROM {RollupState._meta.db_table} WHERE name = %s",
                [ROLLUP_STATE])
    return as_datetime(row[0][0]) if row else None


def usage_source(organization_id: str, start: datetime, end: datetime,
                 rolled_until: datetime | None) -> tuple[str, list[Any]]:
    """A subquery of usage in [start, end) with the columns of `SOURCE_COLUMNS`: whole
    quarter-hours the rollup holds come from it, the edges and anything newer than the
    watermark from the usage rows themselves (their quarter-hour as `bucket`)."""
    rollup, usage = UsageRollup._meta.db_table, AIUsage._meta.db_table
    raw_select = (f"SELECT {quarter_expr('created_at')} AS bucket, agent_id, model, channel, "
                  f"feature, conversation_id, cost_cents, total_tokens, 1 AS calls, "
                  f"created_at AS first_at FROM {usage} WHERE organization_id = %s "
                  f"AND created_at >= %s AND created_at < %s")
    inner_start = ceil_quarter(start)
    inner_end = min(floor_quarter(end), rolled_until) if rolled_until else None
    if inner_end is None or inner_start >= inner_end:
        return raw_select, [organization_id, db_time(start), db_time(end)]
    parts, params = [f"SELECT {SOURCE_COLUMNS} FROM {rollup} WHERE organization_id = %s "
                     f"AND bucket >= %s AND bucket < %s"],\
        [organization_id, db_time(inner_start), db_time(inner_end)]
    for low, high in ((start, inner_start), (inner_end, end)):
        if low < high:
            parts.append(raw_select)
            params += [organization_id, db_time(low), db_time(high)]
    return " UNION ALL ".join(parts), params


# --- SQLite: the functions PostgreSQL has built in --------------------------------------


def _parse(text: str | None) -> datetime | None:
    if text is None:
        return None
    parsed = datetime.fromisoformat(str(text))
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


def _sqlite_text(moment: datetime) -> str:
    return moment.astimezone(UTC).replace(tzinfo=None).isoformat(sep=" ")


def _sqlite_quarter(text: str | None) -> str | None:
    moment = _parse(text)
    return None if moment is None else _sqlite_text(floor_quarter(moment))


def _sqlite_local_bucket(text: str | None, tz: str, granularity: str) -> str | None:
    from .window import hour_start

    moment = _parse(text)
    if moment is None:
        return None
    zone = ZoneInfo(tz)
    if granularity == "day":
        return moment.astimezone(zone).date().isoformat()
    return _sqlite_text(hour_start(moment, zone))


def register_sqlite_functions(sender, connection, **kwargs) -> None:
    if connection.vendor != "sqlite":
        return
    raw = connection.connection
    raw.create_function("insights_quarter", 1, _sqlite_quarter, deterministic=True)
    raw.create_function("insights_local_bucket", 3, _sqlite_local_bucket, deterministic=True)
