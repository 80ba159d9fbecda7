"""Balances computed by one SQL aggregation over the tracked events (no ledger).

Per event: the earn rules give `earned`; a redemption event debits `properties.points`;
an adjustment event credits (positive `points`) or debits (negative). Credits are the
lots that lapse `pointsExpiryDays` after they were earned; debits consume the oldest
lots first (FIFO), so a lot lapses only in the part no earlier debit consumed.

Expiry in closed form: with C_i the cumulative credits up to lot i (in earn order), e_i
its lapse time and D(t) the debits made before t, the points lapsed by time T are
`max(0, max over lots with e_i <= T of (C_i - D(e_i)))`. Proof sketch: FIFO keeps the
removed amount (debited + lapsed) a prefix of the lot sequence; a debit adds to it and a
lapse at e_i raises it to at least C_i, so removed(T) = D(T) + max(0, max(C_i - D(e_i))).
Both running sums are window functions over one timeline of lapse and debit rows, per
contact, so a member's whole history is one statement, and a page of members another.

On PostgreSQL times stay timestamps (cheap to sort); on the embedded SQLite they are
epoch seconds (`_Dialect` holds the few expressions that differ).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from django.db import connection

from platform_core.events.models import TrackedEvent

from .program import ADJUSTMENT_EVENT, REDEMPTION_EVENT, Program

NUMBER_RE = r"^-?[0-9]{1,18}(\.[0-9]+)?([eE][-+]?[0-9]{1,3})?$"
INTEGER_RE = r"^-?[0-9]{1,15}$"
POINTS_CAP = 1_000_000_000_000  # one event never earns more (keeps BIGINT casts safe)
EXPIRING_SOON_DAYS = 30
_ROUND_SQL = {"floor": "FLOOR", "round": "ROUND", "ceil": "CEILING"}


class _Dialect:
    def __init__(self) -> None:
        self.pg = connection.vendor == "postgresql"

    def prop_text(self, key: str, params: list[Any]) -> str:
        if self.pg:
            params.append(key)
            return "(props ->> %s)"
        params.append('$."' + key.replace('"', '\\"') + '"')
        return "json_extract(props, %s)"

    def _sqlite_typed(self, key: str, types: str, pattern: str, params: list[Any]) -> str:
        # json_extract turns JSON true into 1: the JSON type decides, not the text.
        path = '$."' + key.replace('"', '\\"') + '"'
        params.extend([types, path, path, path, pattern])
        return ("(instr(%s, json_type(props, %s)) > 0 OR (json_type(props, %s) = 'text' "
                "AND json_extract(props, %s) REGEXP %s))")

    def is_integer(self, key: str, params: list[Any]) -> str:
        """The property is a JSON integer, or a string of digits."""
        if not self.pg:
            return self._sqlite_typed(key, "integer", INTEGER_RE, params)
        return self.matches(self.prop_text(key, params), INTEGER_RE, params)

    def is_number(self, key: str, params: list[Any]) -> str:
        """The property is a JSON number, or a string holding one."""
        if not self.pg:
            return self._sqlite_typed(key, "integer,real", NUMBER_RE, params)
        params.extend([key, key, key, NUMBER_RE])
        # jsonb_typeof first: a JSON number (the common case) skips the regex.
        return ("(jsonb_typeof(props -> %s) = 'number' OR (jsonb_typeof(props -> %s) = "
                "'string' AND (props ->> %s) ~ %s))")

    def matches(self, expr: str, pattern: str, params: list[Any]) -> str:
        params.append(pattern)
        return f"{expr} ~ %s" if self.pg else f"{expr} REGEXP %s"

    def number(self, expr: str) -> str:
        return f"CAST({expr} AS NUMERIC)" if self.pg else f"CAST({expr} AS REAL)"

    def decimal_param(self, value: Any, params: list[Any]) -> str:
        params.append(Decimal(str(value)) if self.pg else float(value))
        return "CAST(%s AS NUMERIC)" if self.pg else "CAST(%s AS REAL)"

    def bytewise(self, column: str) -> str:
        """A tie-breaker sorted by bytes (ids are ASCII): cheaper than the locale's order."""
        return f'{column} COLLATE "C"' if self.pg else column

    def greatest(self, a: str, b: str) -> str:
        return f"GREATEST({a}, {b})" if self.pg else f"MAX({a}, {b})"

    def least(self, a: str, b: str) -> str:
        return f"LEAST({a}, {b})" if self.pg else f"MIN({a}, {b})"

    def moment(self, column: str) -> str:
        """A sortable time: the timestamp itself, or epoch seconds on SQLite."""
        if self.pg:
            return column
        return f"((julianday({column}) - 2440587.5) * 86400.0)"

    def moment_param(self, moment: datetime) -> Any:
        return moment if self.pg else moment.timestamp()

    def plus_seconds(self, expr: str) -> str:
        return f"({expr} + %s * INTERVAL '1 second')" if self.pg else f"({expr} + %s)"

    def json_param(self, value: dict[str, Any], params: list[Any]) -> str:
        params.append(json.dumps(value))
        return "CAST(%s AS jsonb)" if self.pg else "json(%s)"

    def time_param(self, moment: datetime, params: list[Any]) -> str:
        if self.pg:
            params.append(moment)
            return "CAST(%s AS timestamptz)"
        params.append(connection.ops.adapt_datetimefield_value(moment))
        return "%s"


@dataclass(frozen=True)
class SimEvent:
    """An event of a preview (never stored)."""

    name: str
    properties: dict[str, Any]
    occurred_at: datetime


@dataclass
class Totals:
    """The aggregate of one member's relevant events."""

    earned: int = 0
    credited: int = 0  # positive adjustments
    debited: int = 0  # negative adjustments, as a positive amount
    redeemed: int = 0
    expired: int = 0
    expiring_soon: int = 0
    redemptions: int = 0
    events: int = 0
    first_at: datetime | None = None
    last_at: datetime | None = None

    @property
    def lifetime(self) -> int:
        return self.earned + self.credited

    @property
    def available(self) -> int:
        return self.lifetime - self.debited - self.redeemed - self.expired


def _earn_sql(program: Program, d: _Dialect, params: list[Any]) -> str:
    parts = []
    for rule in program.earn_rules:
        params.append(rule["eventName"])
        if rule["type"] == "perEvent":
            params.append(int(rule["points"]))
            parts.append("CASE WHEN name = %s THEN %s ELSE 0 END")
            continue
        guard_params: list[Any] = []
        guard = d.is_number(rule["field"], guard_params)
        value_params: list[Any] = []
        value = d.number(d.prop_text(rule["field"], value_params))
        ppu = d.decimal_param(rule["pointsPerUnit"], value_params)
        cap_params: list[Any] = [POINTS_CAP]
        product = d.greatest(d.least(f"{value} * {ppu}", "%s"), "0")
        params.extend(guard_params + value_params + cap_params)
        rounding = _ROUND_SQL[rule.get("rounding") or "floor"]
        parts.append(f"CASE WHEN name = %s AND {guard} THEN "
                     f"CAST({rounding}({product}) AS BIGINT) ELSE 0 END")
    return " + ".join(parts) if parts else "0"


def _points_sql(event_name: str, d: _Dialect, params: list[Any]) -> str:
    params.append(event_name)
    inner: list[Any] = []
    guard = d.is_integer("points", inner)
    value_params: list[Any] = []
    value = d.prop_text("points", value_params)
    params.extend(inner + value_params)
    return f"CASE WHEN name = %s AND {guard} THEN CAST({value} AS BIGINT) ELSE 0 END"


def _stored_source(organization_id: str, contact_ids: list[str], names: list[str],
                   now: datetime, params: list[Any]) -> str:
    table = connection.ops.quote_name(TrackedEvent._meta.db_table)
    params.append(organization_id)
    params.extend(contact_ids)
    params.extend(names)
    params.append(now)
    ids = ", ".join(["%s"] * len(contact_ids))
    in_names = ", ".join(["%s"] * len(names))
    return (f"SELECT contact_id AS cid, id AS eid, occurred_at AS at, name, properties AS props "  # noqa: S608 - placeholders and fixed SQL only; values are parameters
            f"FROM {table} WHERE organization_id = %s AND contact_id IN ({ids}) "
            f"AND name IN ({in_names}) AND occurred_at <= %s")


def _sim_source(events: list[SimEvent], names: list[str], d: _Dialect,
                params: list[Any]) -> str:
    rows = []
    for index, event in enumerate(events):
        row = ["%s", "%s"]
        params.extend(["preview", f"{index:06d}"])
        row.append(d.time_param(event.occurred_at, params))
        params.append(event.name)
        row.append("%s")
        row.append(d.json_param(event.properties, params))
        rows.append("(" + ", ".join(row) + ")")
    in_names = ", ".join(["%s"] * len(names))
    params.extend(names)
    values = ", ".join(rows)
    if d.pg:
        table = f"(VALUES {values}) AS v(cid, eid, at, name, props)"
    else:  # SQLite names VALUES columns column1..column5
        table = ("(SELECT column1 AS cid, column2 AS eid, column3 AS at, column4 AS name, "  # noqa: S608
                 "column5 AS props FROM (VALUES " + values + ")) AS v")
    return f"SELECT * FROM {table} WHERE name IN ({in_names})"  # noqa: S608 - placeholders only


def _flows_cte(program: Program, source: str, source_params: list[Any], d: _Dialect,
               params: list[Any]) -> str:
    """`src` (the events), `pts` (their points) and `flows` (credit and debit per event)."""
    params.extend(source_params)
    earn = _earn_sql(program, d, params)
    adjust = _points_sql(ADJUSTMENT_EVENT, d, params)
    redeem = _points_sql(REDEMPTION_EVENT, d, params)
    moment = d.moment("at")
    return (
        f"src AS ({source}), "  # noqa: S608 - placeholders and fixed SQL only; values are parameters
        f"pts AS (SELECT cid, eid, at, name, {moment} AS ts, ({earn}) AS earned, "
        f"({adjust}) AS adj, ({redeem}) AS red FROM src), "
        f"flows AS (SELECT cid, eid, at, name, ts, earned, "
        f"{d.greatest('adj', '0')} AS credit_adj, {d.greatest('-adj', '0')} AS debit_adj, "
        f"{d.greatest('red', '0')} AS redeemed, "
        f"earned + {d.greatest('adj', '0')} AS credit, "
        f"{d.greatest('red', '0')} + {d.greatest('-adj', '0')} AS debit FROM pts)"
    )


def _lapse_cte(program: Program, now: datetime, d: _Dialect, params: list[Any]) -> str:
    if not program.points_expiry_days:
        return ("lapse AS (SELECT cid, CAST(NULL AS NUMERIC) AS expired_raw, "
                "CAST(NULL AS NUMERIC) AS soon_raw FROM flows WHERE 1 = 0)")
    cid, eid = d.bytewise("cid"), d.bytewise("eid")
    params.append(program.points_expiry_days * 86400)
    params.extend([d.moment_param(now),
                   d.moment_param(now + timedelta(days=EXPIRING_SOON_DAYS))])
    return (
        f"lots AS (SELECT cid, {d.plus_seconds('ts')} AS t, 0 AS k, eid, "  # noqa: S608
        f"SUM(credit) OVER (PARTITION BY {cid} ORDER BY ts, {eid} ROWS UNBOUNDED PRECEDING) "
        "AS cum, 0 AS debit FROM flows WHERE credit > 0), "
        "timeline AS (SELECT cid, t, k, eid, cum, debit FROM lots UNION ALL "
        "SELECT cid, ts AS t, 1 AS k, eid, NULL AS cum, debit FROM flows WHERE debit > 0), "
        f"run AS (SELECT cid, t, k, cum, SUM(debit) OVER (PARTITION BY {cid} ORDER BY t, k, "
        f"{eid} ROWS UNBOUNDED PRECEDING) AS cum_debit FROM timeline), "
        "lapse AS (SELECT cid, "
        "MAX(CASE WHEN k = 0 AND t <= %s THEN cum - cum_debit END) AS expired_raw, "
        "MAX(CASE WHEN k = 0 AND t <= %s THEN cum - cum_debit END) AS soon_raw "
        "FROM run GROUP BY cid)"
    )


def _aggregate(program: Program, source: str, source_params: list[Any], now: datetime,
               ) -> dict[str, Totals]:
    d = _Dialect()
    params: list[Any] = []
    flows = _flows_cte(program, source, source_params, d, params)
    lapse = _lapse_cte(program, now, d, params)
    # One GROUP BY over the events and the lapse rows together: no join, so a stale
    # row estimate can never turn it into a nested loop that re-runs the windows.
    sql = (
        f"WITH {flows}, {lapse} "  # noqa: S608 - fixed SQL; values are parameters
        "SELECT cid, SUM(earned), SUM(credit_adj), SUM(debit_adj), SUM(redeemed), "
        "SUM(is_redemption), SUM(n), MIN(at), MAX(at), MAX(expired_raw), MAX(soon_raw) "
        "FROM (SELECT cid, earned, credit_adj, debit_adj, redeemed, "
        "CASE WHEN name = %s THEN 1 ELSE 0 END AS is_redemption, 1 AS n, at, "
        "NULL AS expired_raw, NULL AS soon_raw FROM flows "
        "UNION ALL SELECT cid, 0, 0, 0, 0, 0, 0, NULL, expired_raw, soon_raw FROM lapse) u "
        "GROUP BY cid"
    )
    params.append(REDEMPTION_EVENT)
    out: dict[str, Totals] = {}
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        for row in cursor.fetchall():
            expired = max(0, int(row[9] or 0))
            soon = max(0, int(row[10] or 0))
            out[row[0]] = Totals(
                earned=int(row[1] or 0), credited=int(row[2] or 0), debited=int(row[3] or 0),
                redeemed=int(row[4] or 0), redemptions=int(row[5] or 0), events=int(row[6]),
                first_at=_as_datetime(row[7]), last_at=_as_datetime(row[8]),
                expired=expired, expiring_soon=max(0, soon - expired),
            )
    return out


def _as_datetime(value: Any) -> datetime | None:
    if value is None or isinstance(value, datetime):
        return value
    return connection.ops.convert_datetimefield_value(value, None, connection)


def totals_for_contacts(*, organization_id: str, program: Program, contact_ids: list[str],
                        now: datetime) -> dict[str, Totals]:
    """Totals per contact id (contacts without relevant events are absent)."""
    if not contact_ids:
        return {}
    params: list[Any] = []
    source = _stored_source(organization_id, contact_ids, program.relevant_event_names, now,
                            params)
    return _aggregate(program, source, params, now)


def totals_for_simulation(*, program: Program, events: list[SimEvent], now: datetime,
                          ) -> Totals:
    """The totals a list of events would give, computed by the same statement; no write."""
    if not events:
        return Totals()
    d = _Dialect()
    params: list[Any] = []
    source = _sim_source(events, program.relevant_event_names, d, params)
    return _aggregate(program, source, params, now).get("preview", Totals())


def simulation_points(*, program: Program, events: list[SimEvent]) -> list[dict[str, int]]:
    """Per simulated event, in order: points earned, credited and debited."""
    if not events:
        return []
    d = _Dialect()
    params: list[Any] = []
    source_params: list[Any] = []
    source = _sim_source(events, program.relevant_event_names, d, source_params)
    flows = _flows_cte(program, source, source_params, d, params)
    rows: dict[int, dict[str, int]] = {}
    with connection.cursor() as cursor:
        cursor.execute(f"WITH {flows} SELECT eid, earned, credit_adj, debit_adj, redeemed "  # noqa: S608 - placeholders and fixed SQL only; values are parameters
                       "FROM flows", params)
        for eid, earned, credit_adj, debit_adj, redeemed in cursor.fetchall():
            rows[int(eid)] = {"earned": int(earned), "credited": int(credit_adj),
                              "debited": int(debit_adj) + int(redeemed)}
    empty = {"earned": 0, "credited": 0, "debited": 0}
    return [rows.get(i, empty) for i in range(len(events))]
