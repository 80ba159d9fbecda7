# ruff: noqa: S608 - table names come from the models; every value is a bound parameter
"""The usage rollup: AI usage summed per UTC quarter-hour (models.UsageRollup).

`refresh` (beat, every minute) re-rolls the quarter-hours from one hour before the
watermark up to the last quarter-hour that ended `SETTLE` ago, as one DELETE and one
INSERT ... SELECT ... GROUP BY over every organization. Re-rolling the last hour makes it
self-healing: a usage row committed a little after its `created_at` (metering stamps
`now()` inside a short transaction) is picked up by the next run. Readers never depend on
the rollup being current: what lies past the watermark is read from the usage rows.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db import connection, transaction
from django.utils import timezone

from agents.usage.models import AIUsage

from .models import RollupState, UsageRollup
from .sql import ROLLUP_STATE, as_datetime, floor_quarter, quarter_expr

SETTLE = timedelta(minutes=2)
REROLL = timedelta(hours=1)
MAX_STEP = timedelta(days=31)  # one run's span, so a first run over years stays bounded


def _first_usage() -> datetime | None:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT MIN(created_at) FROM {AIUsage._meta.db_table}")
        return as_datetime(cursor.fetchone()[0])


def roll(start: datetime, end: datetime) -> int:
    """Rebuild the rollup rows of [start, end) (quarter-hour bounds); answers rows written."""
    rollup, usage = UsageRollup._meta.db_table, AIUsage._meta.db_table
    ops = connection.ops
    low, high = ops.adapt_datetimefield_value(start), ops.adapt_datetimefield_value(end)
    bucket = quarter_expr("created_at", alias="default")
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {rollup} WHERE bucket >= %s AND bucket < %s", [low, high])
        cursor.execute(
            f"INSERT INTO {rollup} (organization_id, bucket, agent_id, model, channel, feature, "
            f"conversation_id, cost_cents, total_tokens, calls, first_at) "
            f"SELECT organization_id, {bucket}, agent_id, model, channel, feature, "
            f"conversation_id, SUM(cost_cents), SUM(total_tokens), COUNT(*), MIN(created_at) "
            f"FROM {usage} WHERE created_at >= %s AND created_at < %s "
            f"GROUP BY organization_id, {bucket}, agent_id, model, channel, feature, "
            f"conversation_id", [low, high])
        return cursor.rowcount


def refresh(now: datetime | None = None) -> datetime | None:
    """Advance the rollup; answers the new watermark (None while there is no usage)."""
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
        while start < target:
            step_end = min(target, start + MAX_STEP)
            roll(start, step_end)
            start = step_end
        state.rolled_until = max(target, state.rolled_until or target)
        state.save(update_fields=["rolled_until", "updated_at"])
        return state.rolled_until


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
        state.save(update_fields=["rolled_until", "updated_at"])
        start, target = floor_quarter(first), floor_quarter(now - SETTLE)
        while start < target:
            step_end = min(target, start + MAX_STEP)
            roll(start, step_end)
            start = step_end
        state.rolled_until = target
        state.save(update_fields=["rolled_until", "updated_at"])
        return target

