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
from .models import DayRollupState, RollupState, UsageDay, UsageRollup

QUARTER = timedelta(minutes=15)
EPOCH = datetime(2000, 1, 1, tzinfo=UTC)
ROLLUP_STATE = "usage"
SOURCE_COLUMNS = ("bucket, agent_id, model, channel, feature, conversation_id, cost_cents, "
                  "total_tokens, calls, conversations_started, first_at")


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


def local_day_exprs(column: str, tz_column: str) -> tuple[str, str]:
    """(local date, its local midnight as an instant) of `column` in the zone named by the
    column `tz_column` (the day rollup's build)."""
    if vendor("default") == "postgresql":
        day = f"(({column}) AT TIME ZONE {tz_column})::date"
        return day, f"(({day})::timestamp AT TIME ZONE {tz_column})"
    day = f"insights_local_bucket({column}, {tz_column}, 'day')"
    return day, f"insights_local_midnight({day}, {tz_column})"


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


def started_expr(alias: str = "u") -> str:
    """1 when the usage row is the first ever of its conversation (ties broken by id)."""
    usage = AIUsage._meta.db_table
    return (f"(CASE WHEN {alias}.conversation_id <> '' AND NOT EXISTS (SELECT 1 FROM {usage} p "
            f"WHERE p.organization_id = {alias}.organization_id "
            f"AND p.conversation_id = {alias}.conversation_id AND (p.created_at < "
            f"{alias}.created_at OR (p.created_at = {alias}.created_at AND p.id < {alias}.id))) "
            f"THEN 1 ELSE 0 END)")


def rollup_state(organization) -> tuple[datetime | None, str | None]:
    """(the watermark, the zone the organization's day rollup is built in), one query."""
    row = fetch(f"SELECT (SELECT rolled_until FROM {RollupState._meta.db_table} WHERE name = %s), "
                f"(SELECT tz FROM {DayRollupState._meta.db_table} WHERE organization_id = %s)",
                [ROLLUP_STATE, organization.pk])
    return as_datetime(row[0][0]), row[0][1]


def watermark() -> datetime | None:
    """How far the rollup reaches (read with the figures, on the same database)."""
    row = fetch(f"SELECT rolled_until FROM {RollupState._meta.db_table} WHERE name = %s",
                [ROLLUP_STATE])
    return as_datetime(row[0][0]) if row else None


def _quarters_and_rows(organization_id: str, start: datetime, end: datetime,
                       rolled_until: datetime | None) -> tuple[list[str], list[Any]]:
    rollup, usage = UsageRollup._meta.db_table, AIUsage._meta.db_table
    raw_select = (f"SELECT {quarter_expr('u.created_at')} AS bucket, u.agent_id, u.model, "
                  f"u.channel, u.feature, u.conversation_id, u.cost_cents, u.total_tokens, "
                  f"1 AS calls, {started_expr('u')} AS conversations_started, "
                  f"u.created_at AS first_at FROM {usage} u WHERE u.organization_id = %s "
                  f"AND u.created_at >= %s AND u.created_at < %s")
    inner_start = ceil_quarter(start)
    inner_end = min(floor_quarter(end), rolled_until) if rolled_until else None
    if inner_end is None or inner_start >= inner_end:
        return [raw_select], [organization_id, db_time(start), db_time(end)]
    parts = [f"SELECT {SOURCE_COLUMNS} FROM {rollup} WHERE organization_id = %s "
             f"AND bucket >= %s AND bucket < %s"]
    params = [organization_id, db_time(inner_start), db_time(inner_end)]
    for low, high in ((start, inner_start), (inner_end, end)):
        if low < high:
            parts.append(raw_select)
            params += [organization_id, db_time(low), db_time(high)]
    return parts, params


def usage_source(organization, start: datetime, end: datetime, *, days: bool = True
                 ) -> tuple[str, list[Any]]:
    """A subquery of usage in [start, end) with the columns of `SOURCE_COLUMNS`: whole local
    days from the day rollup (when `days`; it has no conversation ids), whole quarter-hours
    from the quarter rollup, the edges and anything newer than the watermark from the usage
    rows themselves (their quarter-hour as `bucket`)."""
    from .window import local_midnight, org_zone

    rolled_until, day_tz = rollup_state(organization)
    tz = org_zone(organization)
    parts: list[str] = []
    params: list[Any] = []
    spans = [(start, end)]
    if days and rolled_until and day_tz and day_tz == organization.timezone == tz.key:
        first = start.astimezone(tz).date()
        if local_midnight(first, tz) < start:
            first += timedelta(days=1)
        last = min(end, rolled_until).astimezone(tz).date()
        if first < last:
            parts.append(f"SELECT bucket, agent_id, model, channel, feature, '' AS "
                         f"conversation_id, cost_cents, total_tokens, calls, "
                         f"conversations_started, bucket AS first_at FROM "
                         f"{UsageDay._meta.db_table} WHERE organization_id = %s AND tz = %s "
                         f"AND day >= %s AND day < %s")
            ops = connections[read_alias()].ops
            params += [organization.pk, tz.key, ops.adapt_datefield_value(first),
                       ops.adapt_datefield_value(last)]
            spans = [(start, local_midnight(first, tz)), (local_midnight(last, tz), end)]
    for low, high in spans:
        if low < high:
            more, more_params = _quarters_and_rows(organization.pk, low, high, rolled_until)
            parts += more
            params += more_params
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


def _sqlite_local_midnight(day: str | None, tz: str) -> str | None:
    from .window import local_midnight

    if day is None:
        return None
    return _sqlite_text(local_midnight(date.fromisoformat(str(day)[:10]), ZoneInfo(tz)))


def register_sqlite_functions(sender, connection, **kwargs) -> None:
    if connection.vendor != "sqlite":
        return
    raw = connection.connection
    raw.create_function("insights_quarter", 1, _sqlite_quarter, deterministic=True)
    raw.create_function("insights_local_bucket", 3, _sqlite_local_bucket, deterministic=True)
    raw.create_function("insights_local_midnight", 2, _sqlite_local_midnight,
                        deterministic=True)
