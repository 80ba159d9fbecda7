"""The query conventions of every insights read (Document 3, 4.4 and 8).

`from`/`to` are ISO 8601 instants with an offset, `from` before `to`, the window at most
365 days; no bound means the last 30 days (7 for hourly series), one bound is back-filled
(or forward-filled) to a 30-day window. Buckets are the organization's billing time zone
(`Organization.timezone`). Every bad parameter is listed in one 422 `details.issues`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from django.utils import timezone
from django.utils.dateparse import parse_datetime

from platform_core.errors import ValidationIssues

MAX_WINDOW = timedelta(days=365)
MAX_HOURLY_WINDOW = timedelta(days=14)
DEFAULT_WINDOW = timedelta(days=30)
DEFAULT_HOURLY_WINDOW = timedelta(days=7)
GRANULARITIES = ("day", "hour")


@dataclass(frozen=True)
class Window:
    start: datetime  # inclusive, UTC
    end: datetime  # exclusive, UTC
    tz: ZoneInfo
    granularity: str = "day"

    def as_dict(self) -> dict[str, Any]:
        return {"from": iso(self.start, self.tz), "to": iso(self.end, self.tz),
                "timezone": self.tz.key}


def iso(moment: datetime, tz: ZoneInfo) -> str:
    """An instant in the organization's zone with its offset (a bucket's or bound's label)."""
    return moment.astimezone(tz).isoformat()


def org_zone(organization) -> ZoneInfo:
    try:
        return ZoneInfo(organization.timezone or "UTC")
    except (ZoneInfoNotFoundError, ValueError):
        return ZoneInfo("UTC")


class Issues(ValidationIssues):
    def __init__(self) -> None:
        super().__init__("The query is not valid.")


def _instant(params, name: str, issues: Issues) -> datetime | None:
    raw = params.get(name)
    if raw is None or raw == "":
        return None
    try:
        value = parse_datetime(raw.strip().replace(" ", "+"))  # a `+` unescaped in a URL
    except ValueError:
        value = None
    if value is None or value.tzinfo is None:
        issues.add(name, f"`{name}` must be an ISO 8601 date-time with an offset, "
                         "for example 2026-01-31T00:00:00+01:00.")
        return None
    return value.astimezone(UTC)


def integer(params, name: str, *, default: int, low: int, high: int, issues: Issues) -> int:
    raw = params.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except (TypeError, ValueError):
        value = None
    if value is None or not low <= value <= high:
        issues.add(name, f"`{name}` must be an integer from {low} to {high}.")
        return default
    return value


def choice(params, name: str, options: tuple[str, ...], *, default: str,
           issues: Issues) -> str:
    raw = params.get(name)
    if raw is None or raw == "":
        return default
    if raw not in options:
        issues.add(name, f"`{name}` must be one of: {', '.join(options)}.")
        return default
    return raw


def parse_window(params, organization, issues: Issues, *, granular: bool = False) -> Window:
    """The window of a read; problems go to `issues` (the caller raises them together)."""
    granularity = (choice(params, "granularity", GRANULARITIES, default="day", issues=issues)
                   if granular else "day")
    start, end = _instant(params, "from", issues), _instant(params, "to", issues)
    span = DEFAULT_HOURLY_WINDOW if granularity == "hour" else DEFAULT_WINDOW
    if start is None and end is None:
        end = timezone.now()
        start = end - span
    elif start is None:
        start = end - DEFAULT_WINDOW
    elif end is None:
        end = start + DEFAULT_WINDOW
    if start >= end and "from" not in _fields(issues) and "to" not in _fields(issues):
        issues.add("from", "`from` must be earlier than `to`.")
    elif end - start > MAX_WINDOW:
        issues.add("to", "The window is at most 365 days.")
    elif granularity == "hour" and end - start > MAX_HOURLY_WINDOW:
        issues.add("granularity", "Hourly buckets cover at most 14 days; use `day`.")
    return Window(start=start, end=end, tz=org_zone(organization), granularity=granularity)


def _fields(issues: Issues) -> set[str]:
    return {item["field"] for item in issues.items}


# --- buckets in the organization's zone ------------------------------------------------


def local_midnight(day: date, tz: ZoneInfo) -> datetime:
    """The first instant of `day` in `tz` (as UTC)."""
    return datetime(day.year, day.month, day.day, tzinfo=tz).astimezone(UTC)


def hour_start(moment: datetime, tz: ZoneInfo) -> datetime:
    """The start of the local hour holding `moment` (as UTC); the two hours of a DST
    fall-back stay distinct because it is computed from the instant, not the wall time."""
    local = moment.astimezone(tz)
    return (moment - timedelta(minutes=local.minute, seconds=local.second,
                               microseconds=local.microsecond)).astimezone(UTC)


def bucket_keys(window: Window) -> list[Any]:
    """Every bucket of the window, ascending: local dates for `day`, UTC instants of
    local hour starts for `hour` (the keys the SQL groups by)."""
    if window.granularity == "day":
        first = window.start.astimezone(window.tz).date()
        last = (window.end - timedelta(microseconds=1)).astimezone(window.tz).date()
        return [first + timedelta(days=n) for n in range((last - first).days + 1)]
    keys, moment = [], hour_start(window.start, window.tz)
    while moment < window.end:
        keys.append(moment)
        moment = hour_start(moment + timedelta(hours=1), window.tz)
    return keys


def bucket_label(key: Any, tz: ZoneInfo) -> str:
    if isinstance(key, datetime):
        return iso(key, tz)
    return iso(local_midnight(key, tz), tz)
