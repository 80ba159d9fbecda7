# ruff: noqa: S608 - table names come from the models; every value is a bound parameter
"""Cost economics (Document 3, 4.4 `/cost-economics`): what the window's traffic costs at
the organization's rates (configured, else the platform default).

- sms, whatsapp: per message; billable messages are outbound ones that left the platform
  (`sent`, `delivered`, `undelivered`) and inbound ones (`received`), by `created_at`.
- voice, video: per minute; each call or video recording (`recordings`, kinds `call` and
  `video`) counts its duration rounded up to the whole minute, as carriers bill.
- ai: per 1,000 tokens of AI usage (`ai_per_1000_tokens_cents`); cost rounded half up.

`per_unit_cost_cents` is the channel's cost per unit (message, minute, 1,000 tokens), two
decimals, null when the channel had no usage.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.conf import settings

from messaging.models import Message
from recordings.models import Recording

from .. import sql
from ..models import InsightsSettings
from ..services import COST_RATE_FIELDS
from ..window import Window
from .common import ratio, round_half_up

PLATFORM_DEFAULT_RATES = {
    "sms_per_message_cents": 1,
    "whatsapp_per_message_cents": 1,
    "voice_per_minute_cents": 2,
    "video_per_minute_cents": 1,
    "ai_per_1000_tokens_cents": 1,
}
BILLABLE_STATUSES = ("sent", "delivered", "undelivered", "received")


def default_rates() -> dict[str, int]:
    return {**PLATFORM_DEFAULT_RATES, **getattr(settings, "INSIGHTS_DEFAULT_COST_RATES", {})}


def cost_config(organization) -> dict[str, Any]:
    row = InsightsSettings.objects.for_organization(organization).first()
    stored = dict(row.cost_rates or {}) if row else {}
    defaults = default_rates()
    return {
        "config": {f: stored.get(f) for f in COST_RATE_FIELDS},
        "rates": {f: {"cents": stored.get(f, defaults[f]),
                      "source": "configured" if f in stored else "default",
                      "default_cents": defaults[f]} for f in COST_RATE_FIELDS},
        "currency": organization.currency,
        "updated_at": row.updated_at if row else None,
    }


def cost_economics(organization, window: Window) -> dict[str, Any]:
    config = cost_config(organization)
    rates = {f: v["cents"] for f, v in config["rates"].items()}
    low, high = sql.db_time(window.start), sql.db_time(window.end)
    statuses = ", ".join("%s" for _ in BILLABLE_STATUSES)
    messages = sql.fetch(
        f"SELECT channel, COUNT(*) FROM {Message._meta.db_table} WHERE organization_id = %s "
        f"AND created_at >= %s AND created_at < %s AND channel IN ('sms', 'whatsapp') "
        f"AND status IN ({statuses}) GROUP BY channel",
        [organization.pk, low, high, *BILLABLE_STATUSES])
    minutes = sql.fetch(
        f"SELECT kind, COALESCE(SUM((COALESCE(duration_seconds, 0) + 59) / 60), 0) "
        f"FROM {Recording._meta.db_table} WHERE organization_id = %s AND created_at >= %s "
        f"AND created_at < %s GROUP BY kind", [organization.pk, low, high])
    source, params = sql.usage_source(organization, window.start, window.end)
    tokens = int(sql.fetch(f"SELECT COALESCE(SUM(s.total_tokens), 0) FROM ({source}) s",
                           params)[0][0])
    counts = {channel: int(n) for channel, n in messages}
    durations = {kind: int(m) for kind, m in minutes}
    channels = []
    for channel, unit, volume, rate_field, divisor in (
            ("sms", "message", counts.get("sms", 0), "sms_per_message_cents", 1),
            ("whatsapp", "message", counts.get("whatsapp", 0), "whatsapp_per_message_cents", 1),
            ("voice", "minute", durations.get("call", 0), "voice_per_minute_cents", 1),
            ("video", "minute", durations.get("video", 0), "video_per_minute_cents", 1),
            ("ai", "1000_tokens", tokens, "ai_per_1000_tokens_cents", 1000)):
        cost = round_half_up(Decimal(volume * rates[rate_field]) / divisor) if volume else 0
        channels.append({"channel": channel, "unit": unit, "volume": volume,
                         "rate_cents": rates[rate_field], "cost_cents": cost,
                         "per_unit_cost_cents": ratio(cost * divisor, volume)
                         if volume else None})
    return {
        **window.as_dict(), "currency": organization.currency,
        "config": config["config"], "rates": config["rates"], "channels": channels,
        "totals": {"cost_cents": sum(c["cost_cents"] for c in channels),
                   "message_volume": counts.get("sms", 0) + counts.get("whatsapp", 0),
                   "voice_minutes": durations.get("call", 0),
                   "video_minutes": durations.get("video", 0),
                   "ai_tokens": tokens},
    }
