# ruff: noqa: S608 - table names come from the models; every value is a bound parameter
"""The usage rollups: AI usage per UTC quarter-hour (models.UsageRollup) and, from it, per
local day of each organization's zone (models.UsageDay).

`refresh` (beat, every minute) re-rolls the quarter-hours from one hour before the
watermark up to the last quarter-hour that ended `SETTLE` ago, as one DELETE and one
INSERT ... SELECT ... GROUP BY over every organization, then the local days those
quarter-hours touch (again for every organization at once). Re-rolling the last hour
makes it self-healing: a usage row committed a little after its `created_at` (metering
stamps `now()` inside a short transaction) is picked up by the next run. An organization
whose zone changed gets its days rebuilt in the new zone. Readers never depend on the
rollups being current: what lies past the watermark is read from the usage rows.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

from django.db import connection, transaction
from django.utils import timezone

from agents.usage.models import AIUsage
from platform_core.tenancy.models import Organization

from .models import DayRollupState, RollupState, UsageDay, UsageRollup
from .sql import (
    ROLLUP_STATE,
    as_datetime,
    floor_quarter,
    local_day_exprs,
    quarter_expr,
    started_expr,
)

SETTLE = timedelta(minutes=2)
REROLL = timedelta(hours=1)
MAX_STEP = timedelta(days=31)  # one run's span, so a first run over years stays bounded
MAX_OFFSET = timedelta(hours=15)  # beyond any zone's offset from UTC


def _first_usage() -> datetime | None:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT MIN(created_at) FROM {AIUsage._meta.db_table}")
        return as_datetime(cursor.fetchone()[0])


def roll(start: datetime, end: datetime) -> int:
    """Rebuild the quarter-hour rows of [start, end) (quarter bounds); answers rows written."""
    rollup, usage = UsageRollup._meta.db_table, AIUsage._meta.db_table
    ops = connection.ops
    low, high = ops.adapt_datetimefield_value(start), ops.adapt_datetimefield_value(end)
    bucket = quarter_expr("u.created_at", alias="default")
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {rollup} WHERE bucket >= %s AND bucket < %s", [low, high])
        cursor.execute(
            f"INSERT INTO {rollup} (organization_id, bucket, agent_id, model, channel, feature, "
            f"conversation_id, cost_cents, total_tokens, calls, conversations_started, "
            f"first_at) SELECT u.organization_id, {bucket}, u.agent_id, u.model, u.channel, "
            f"u.feature, u.conversation_id, SUM(u.cost_cents), SUM(u.total_tokens), COUNT(*), "
            f"SUM({started_expr('u')}), MIN(u.created_at) FROM {usage} u "
            f"WHERE u.created_at >= %s AND u.created_at < %s "
            f"GROUP BY u.organization_id, {bucket}, u.agent_id, u.model, u.channel, u.feature, "
            f"u.conversation_id", [low, high])
        return cursor.rowcount


def _insert_days(since: date, organization_id: str | None = None) -> None:
    """Insert the day rows from local day `since` on (all organizations whose day state
    is their zone, or one); the caller deleted what they replace."""
    day, midnight = local_day_exprs("r.bucket", "o.timezone")
    ops = connection.ops
    earliest = None if since <= date.min + timedelta(days=2) else (
        datetime(since.year, since.month, since.day, tzinfo=UTC) - MAX_OFFSET)
    where, params = [f"{day} >= %s"], [ops.adapt_datefield_value(since)]
    if earliest is not None:
        where.insert(0, "r.bucket >= %s")
        params.insert(0, ops.adapt_datetimefield_value(earliest))
    if organization_id:
        where.append("r.organization_id = %s")
        params.append(organization_id)
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {UsageDay._meta.db_table} (organization_id, tz, day, bucket, agent_id, "
            f"model, channel, feature, cost_cents, total_tokens, calls, conversations_started) "
            f"SELECT r.organization_id, o.timezone, {day}, MIN({midnight}), r.agent_id, r.model, "
            f"r.channel, r.feature, SUM(r.cost_cents), SUM(r.total_tokens), SUM(r.calls), "
            f"SUM(r.conversations_started) FROM {UsageRollup._meta.db_table} r "
            f"JOIN {Organization._meta.db_table} o ON o.id = r.organization_id "
            f"JOIN {DayRollupState._meta.db_table} s ON s.organization_id = r.organization_id "
            f"AND s.tz = o.timezone WHERE {' AND '.join(where)} "
            f"GROUP BY r.organization_id, o.timezone, {day}, r.agent_id, r.model, r.channel, "
            f"r.feature", params)


def _rebuild_changed_zones() -> None:
    """Organizations with quarter rows whose day rollup is missing or in another zone."""
    org, state = Organization._meta.db_table, DayRollupState._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT o.id, o.timezone FROM {org} o WHERE EXISTS (SELECT 1 FROM "
            f"{UsageRollup._meta.db_table} r WHERE r.organization_id = o.id) AND NOT EXISTS "
            f"(SELECT 1 FROM {state} s WHERE s.organization_id = o.id AND s.tz = o.timezone)")
        changed = cursor.fetchall()
    for organization_id, tz in changed:
        UsageDay.objects.dangerously_unscoped().filter(organization_id=organization_id).delete()
        DayRollupState.objects.dangerously_unscoped().filter(
            organization_id=organization_id).delete()
        if not _zone_known_to_database(tz):
            continue  # no day rows: its reads take the quarter-hours (still exact)
        DayRollupState.objects.dangerously_unscoped().create(organization_id=organization_id,
                                                             tz=tz)
        _insert_days(date.min, organization_id)


def _zone_known_to_database(tz: str) -> bool:
    if connection.vendor != "postgresql":
        return True  # SQLite converts with Python's zoneinfo
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_timezone_names WHERE name = %s", [tz])
        return cursor.fetchone() is not None


def roll_days(since: date) -> None:
    """Rebuild every organization's day rows from local day `since` on."""
    _rebuild_changed_zones()
    UsageDay.objects.dangerously_unscoped().filter(day__gte=since).delete()
    _insert_days(since)


def _advance(state: RollupState, start: datetime, target: datetime) -> datetime:
    first = start
    while start < target:
        step_end = min(target, start + MAX_STEP)
        roll(start, step_end)
        start = step_end
    state.rolled_until = max(target, state.rolled_until or target)
    state.save(update_fields=["rolled_until", "updated_at"])
    roll_days(first.date() - timedelta(days=1))
    return state.rolled_until


def refresh(now: datetime | None = None) -> datetime | None:
    """Advance the rollups; answers the new watermark (None while there is no usage)."""
    now = now or timezone.now()
    target = floor_quarter(now - SETTLE)
    with transaction.atomic():
        state, _ = RollupState.objects.select_for_update().get_or_create(name=ROLLUP_STATE)
        if state.rolled_until is None:
            first = _first_usage()
            if first is None:
                return None
            start = floor_quarter(first)
        else:
            start = floor_quarter(state.rolled_until - REROLL)
        return _advance(state, min(start, target), target)


def rebuild(since: datetime | None = None, now: datetime | None = None) -> datetime | None:
    """Roll everything up again from `since` (default: the first usage row): after usage
    rows were written with past timestamps (imports, the bench's seed)."""
    now = now or timezone.now()
    first = since or _first_usage()
    if first is None:
        return None
    with transaction.atomic():
        state, _ = RollupState.objects.select_for_update().get_or_create(name=ROLLUP_STATE)
        state.rolled_until = None
        return _advance(state, floor_quarter(first), floor_quarter(now - SETTLE))
