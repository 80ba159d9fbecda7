"""RCS capability: one number (`capability/{botId}/{phone}`) and a segment's reach
(`reach-scan`). Answers are cached per agent and number for
`RCS_CAPABILITY_CACHE_SECONDS` (default 300): a probe is cheap for Google but rate limited,
and reachability changes rarely within minutes. The reach scan reads the cache first and
probes the unknown numbers in one bulk call per 10,000 (Google's `users:batchGet`).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.utils import timezone

from contacts.segments.models import Segment
from contacts.segments.selectors import segment_members
from platform_core.errors import validation_error

from .models import RcsAgent
from .providers import provider_for

REACH_SCAN_MAX = 10_000


def _ttl() -> int:
    return int(getattr(settings, "RCS_CAPABILITY_CACHE_SECONDS", 300))


def _key(agent: RcsAgent, phone: str) -> str:
    return f"rcs:cap:{agent.organization_id}:{agent.pk}:{phone}"


def capability(*, agent: RcsAgent, phone: str) -> dict[str, Any]:
    cached = cache.get(_key(agent, phone))
    if cached is not None:
        return {**cached, "cached": True}
    found = provider_for(agent.organization).capability(agent, phone)
    answer = {"bot_id": agent.pk, "phone": phone, "rcs_enabled": found.rcs_enabled,
              "features": found.features, "checked_at": timezone.now().isoformat()}
    cache.set(_key(agent, phone), answer, _ttl())
    return {**answer, "cached": False}


def reach_scan(*, organization, segment_id: str, agent: RcsAgent) -> dict[str, Any]:
    segment = Segment.objects.for_organization(organization).filter(pk=segment_id).first()
    if segment is None:
        raise validation_error("segment_id", "No such segment in this account.")
    members = segment_members(segment)
    total = members.count()
    phones = list(members.exclude(phone="").exclude(phone__isnull=True).order_by("id")
                  .values_list("phone", flat=True)[:REACH_SCAN_MAX + 1])
    sampled = len(phones) > REACH_SCAN_MAX
    phones = list(dict.fromkeys(phones[:REACH_SCAN_MAX]))
    with_phone = (members.exclude(phone="").exclude(phone__isnull=True).count() if sampled
                  else len(phones))
    keys = {_key(agent, p): p for p in phones}
    known = {keys[k]: v["rcs_enabled"] for k, v in cache.get_many(list(keys)).items()}
    unknown = [p for p in phones if p not in known]
    if unknown:
        reachable = provider_for(organization).reachable(agent, unknown)
        now = timezone.now().isoformat()
        fresh = {p: p in reachable for p in unknown}
        cache.set_many({_key(agent, p): {"bot_id": agent.pk, "phone": p, "rcs_enabled": ok,
                                         "features": [], "checked_at": now}
                        for p, ok in fresh.items()}, _ttl())
        known.update(fresh)
    capable = sum(1 for ok in known.values() if ok)
    scanned = len(phones)
    estimate = round(capable * with_phone / scanned) if scanned else 0
    return {
        "segment_id": segment.pk, "bot_id": agent.pk, "members": total,
        "with_phone": with_phone, "scanned": scanned, "sampled": sampled,
        "from_cache": scanned - len(unknown), "probed": len(unknown),
        "by_status": {"capable": capable, "not_capable": scanned - capable,
                      "no_phone": total - with_phone},
        "estimated_reach": estimate,
        "reach_rate": round(capable / scanned, 4) if scanned else 0.0,
    }
