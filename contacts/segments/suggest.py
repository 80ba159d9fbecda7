"""Segment suggestions from what the organization's data shows (Document 2, 2.2 and 4.2).

The signals: tracked-event volume (the top event names of the last 30 days), the most
common tags, and engagement (contacts who clicked a tracked link in the last 30 days, and
the tags they share). Each candidate is a persistable filter tree; all candidates are
counted in ONE aggregate query, and those matching nothing are dropped and reported as
`llm_dropped_count`. Nothing is stored.

The AI engine of the agents issue will replace the candidate generation
(`SEGMENTS_SUGGEST_ENGINE`, a dotted path to an object with `candidates(organization)`);
the counting and dropping stay here.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Protocol

from django.conf import settings
from django.db import connection
from django.db.models import Count, Q
from django.utils import timezone
from django.utils.module_loading import import_string

from contacts.models import Contact
from messaging.links.models import LinkClick
from platform_core.events.models import TrackedEvent

from . import filters as segment_filters

DEFAULT_LIMIT = 5
MAX_LIMIT = 8
SIGNAL_DAYS = 30
TOP_EVENTS = 3
TOP_TAGS = 3
TAG_SAMPLE = 5000  # contacts read for tag frequency where the database cannot unnest


class SuggestFailed(Exception):
    """The engine failed (502 AI_SUGGEST_FAILED)."""


@dataclass
class Suggestion:
    name: str
    description: str
    rationale: str
    filters: dict[str, Any]
    matched_count: int = field(default=0)

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description,
                "rationale": self.rationale, "filters": self.filters,
                "matched_count": self.matched_count}


class SuggestEngine(Protocol):
    def candidates(self, organization) -> list[Suggestion]: ...


def suggest_segments(organization, *, limit: int = DEFAULT_LIMIT) -> dict[str, Any]:
    """`{suggestions: [...], llm_dropped_count}`: up to `limit` (1-8) non-empty ideas."""
    limit = max(1, min(limit, MAX_LIMIT))
    path = getattr(settings, "SEGMENTS_SUGGEST_ENGINE", "")
    engine: SuggestEngine = import_string(path)() if path else SignalSuggestEngine()
    try:
        candidates = engine.candidates(organization)
    except SuggestFailed:
        raise
    except Exception as exc:  # an engine's failure is the suggestion service's 502
        raise SuggestFailed(str(exc)) from exc
    valid: list[tuple[Suggestion, Q]] = []
    for candidate in candidates:
        try:
            q = segment_filters.compile_filters(candidate.filters, organization=organization)
        except Exception:  # noqa: S112  an engine's malformed tree is dropped, not answered
            continue
        valid.append((candidate, q))
    counts: dict[str, int] = {}
    if valid:
        counts = Contact.objects.for_organization(organization).aggregate(**{
            f"c{i}": Count("pk", filter=q) for i, (_, q) in enumerate(valid)
        })
    kept: list[Suggestion] = []
    dropped = len(candidates) - len(valid)
    for i, (candidate, _) in enumerate(valid):
        candidate.matched_count = counts.get(f"c{i}") or 0
        if candidate.matched_count == 0:
            dropped += 1
        else:
            kept.append(candidate)
    return {"suggestions": [s.as_dict() for s in kept[:limit]], "llm_dropped_count": dropped}


# --- The signal-based engine -------------------------------------------------------------


def _top_events(organization, since) -> list[tuple[str, int, int]]:
    """(name, events, distinct contacts) of the most tracked events linked to contacts."""
    rows = (
        TrackedEvent.objects.for_organization(organization)
        .filter(occurred_at__gte=since, contact_id__isnull=False)
        .values("name")
        .annotate(events=Count("pk"), contacts=Count("contact_id", distinct=True))
        .order_by("-events", "name")[:TOP_EVENTS]
    )
    return [(r["name"], r["events"], r["contacts"]) for r in rows]


def _count_tags(tag_lists) -> list[tuple[str, int]]:
    counter: Counter[str] = Counter()
    for tags in tag_lists:
        counter.update(t for t in (tags or []) if isinstance(t, str))
    return sorted(counter.items(), key=lambda kv: (-kv[1], kv[0]))


def _top_tags_sql(organization, *, within: tuple[str, list] | None,
                  limit: int) -> list[tuple[str, int]]:
    """PostgreSQL: unnest the tag arrays and count in the database, optionally only for the
    contacts whose ids `within` (a SQL subquery and its parameters) selects."""
    where, params = "c.organization_id = %s", [organization.pk]
    if within is not None:
        where += f" AND c.id IN ({within[0]})"
        params += within[1]
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT tag, COUNT(*) AS n FROM {Contact._meta.db_table} AS c "  # noqa: S608
            "CROSS JOIN LATERAL jsonb_array_elements_text(c.tags) AS tag "
            f"WHERE {where} AND jsonb_typeof(c.tags) = 'array' "
            "GROUP BY tag ORDER BY n DESC, tag LIMIT %s",
            [*params, limit],
        )
        return [(tag, n) for tag, n in cursor.fetchall()]


def _top_tags(organization, limit: int = TOP_TAGS) -> list[tuple[str, int]]:
    """The organization's most common tags (the newest contacts' where SQL cannot unnest)."""
    if connection.vendor == "postgresql":
        return _top_tags_sql(organization, within=None, limit=limit)
    contacts = Contact.objects.for_organization(organization).order_by("-id")
    return _count_tags(contacts.values_list("tags", flat=True)[:TAG_SAMPLE])[:limit]


def _clicker_signal(organization, since) -> tuple[int, list[tuple[str, int]]]:
    """How many contacts clicked a link since `since`, and their two most common tags."""
    clickers = (
        LinkClick.objects.for_organization(organization)
        .filter(clicked_at__gte=since, contact_id__isnull=False)
        .values("contact_id").distinct()
    )
    total = clickers.count()
    if not total:
        return 0, []
    if connection.vendor == "postgresql":
        within = clickers.query.sql_with_params()
        return total, _top_tags_sql(organization, within=within, limit=2)
    ids = list(clickers.values_list("contact_id", flat=True)[:TAG_SAMPLE])
    tags = Contact.objects.for_organization(organization).filter(pk__in=ids)
    return total, _count_tags(tags.values_list("tags", flat=True))[:2]


def _title(name: str) -> str:
    return re.sub(r"[_.:-]+", " ", name).strip().capitalize() or name


class SignalSuggestEngine:
    """Candidates from event volume, tags and click engagement, most specific first."""

    def candidates(self, organization) -> list[Suggestion]:
        now = timezone.now()
        since = now - timedelta(days=SIGNAL_DAYS)
        out: list[Suggestion] = []
        events = _top_events(organization, since)
        tags = _top_tags(organization)
        clickers, clicker_tags = _clicker_signal(organization, since)

        for name, count, people in events:
            field_name = f"event.{name}.count"
            per_contact = max(count // max(people, 1), 1)
            threshold = max(per_contact, 2)
            out.append(Suggestion(
                name=f"Frequent {_title(name).lower()}",
                description=f"Contacts who did {name} at least {threshold} times in the last "
                            f"{SIGNAL_DAYS} days.",
                rationale=f"{name} is among the most tracked events: {count} in the last "
                          f"{SIGNAL_DAYS} days across {people} contacts "
                          f"(about {per_contact} each).",
                filters={"op": "and", "rules": [{"field": field_name, "operator": "gte",
                                                 "value": threshold,
                                                 "window_days": SIGNAL_DAYS}]},
            ))
            out.append(Suggestion(
                name=f"Lapsed {_title(name).lower()}",
                description=f"Did {name} in the last 90 days but not in the last "
                            f"{SIGNAL_DAYS}.",
                rationale=f"{people} contacts did {name} recently; those who stopped are a "
                          "win-back audience.",
                filters={"op": "and", "rules": [
                    {"field": field_name, "operator": "exists", "window_days": 90},
                    {"field": field_name, "operator": "not_exists",
                     "window_days": SIGNAL_DAYS},
                ]},
            ))

        for tag, n in clicker_tags:
            out.append(Suggestion(
                name=f"Like recent clickers: {tag}",
                description=f"Contacts tagged {tag}, the tag most common among recent "
                            "clickers.",
                rationale=f"{clickers} contacts clicked a tracked link in the last "
                          f"{SIGNAL_DAYS} days and {n} of them carry the tag {tag}.",
                filters={"op": "and", "rules": [{"field": "tags", "operator": "eq",
                                                 "value": tag}]},
            ))

        for tag, n in tags:
            if any(tag == t for t, _ in clicker_tags):
                continue
            out.append(Suggestion(
                name=f"Tagged {tag}",
                description=f"Every contact tagged {tag}.",
                rationale=f"{tag} is one of the organization's most used tags ({n} contacts).",
                filters={"op": "and", "rules": [{"field": "tags", "operator": "eq",
                                                 "value": tag}]},
            ))
            if events:
                top = events[0][0]
                out.append(Suggestion(
                    name=f"{tag} without {_title(top).lower()}",
                    description=f"Tagged {tag} and no {top} in the last {SIGNAL_DAYS} days.",
                    rationale=f"{tag} contacts who have gone quiet on {top}, the most "
                              "tracked event.",
                    filters={"op": "and", "rules": [
                        {"field": "tags", "operator": "eq", "value": tag},
                        {"field": f"event.{top}.count", "operator": "not_exists",
                         "window_days": SIGNAL_DAYS},
                    ]},
                ))

        out.append(Suggestion(
            name="New contacts",
            description=f"Contacts added in the last {SIGNAL_DAYS} days.",
            rationale="New contacts respond best to a welcome sequence.",
            filters={"op": "and", "rules": [{"field": "created_at", "operator": "gte",
                                             "value": {"days_ago": SIGNAL_DAYS}}]},
        ))
        out.append(Suggestion(
            name="Reachable on email and phone",
            description="Contacts with both an email address and a phone number.",
            rationale="They can be reached on every channel, for multi-channel campaigns.",
            filters={"op": "and", "rules": [{"field": "email", "operator": "exists"},
                                            {"field": "phone", "operator": "exists"}]},
        ))
        out.append(Suggestion(
            name="No tags yet",
            description="Contacts without any tag.",
            rationale="Untagged contacts are the ones to enrich or survey first.",
            filters={"op": "and", "rules": [{"field": "tags", "operator": "not_exists"}]},
        ))
        return out
