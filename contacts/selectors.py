"""Reads of the contacts family: the `q` search language, identifier resolution, list
statistics and the custom-field key set of an export.

Other families (segments, messaging) reuse `contact_q`, `tag_q`, `resolve_contact` and
`custom_field_keys`; their signatures are stable.

`q` (Document 2, 4.1): words separated by spaces, all of which must match (AND).
  - `email:x@y` exact address; `email:*@domain` (or any `*` glob) pattern;
  - `tag:vip` the contact carries the tag (exact, case-sensitive);
  - `phone:<number>` the number in any form (E.164 or national); a partial number such as
    `phone:+1415` matches by prefix, `phone:5550` by digits;
  - `name:<fragment>` first or last name contains the fragment;
  - a value may be quoted: `tag:"big spender"`;
  - the remaining free text: a phone in any form (only digits, spaces, `+ ( ) - .`), an
    email (contains `@`), else name fragments: each word in first name, last name or email.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import timedelta

from django.core.exceptions import EmptyResultSet
from django.db import connection
from django.db.models import Count, Q, QuerySet
from django.db.models.expressions import RawSQL
from django.utils import timezone

from platform_core.errors import validation_error

from .models import Contact, ContactList, ListMembership
from .normalize import looks_like_phone, parse_email, parse_phone, phone_digits

Q_MAX_LENGTH = 500
DSL_KEYS = ("email", "tag", "phone", "name")
_DSL = re.compile(r'(?<!\S)(email|tag|phone|name):("(?P<quoted>[^"]*)"|(?P<bare>\S*))',
                  re.IGNORECASE)


def _q_error(message: str):
    return validation_error("q", message, status=400)


def tag_q(tag: str, *, prefix: str = "") -> Q:
    """Contacts carrying `tag` (a GIN-indexed containment on PostgreSQL)."""
    if connection.vendor == "postgresql":
        return Q(**{f"{prefix}tags__contains": [tag]})
    # SQLite (embedded mode) has no JSON containment: look through the array elements.
    table = connection.ops.quote_name(Contact._meta.db_table)
    return Q(**{f"{prefix}pk__in": RawSQL(  # noqa: S611 (the tag is a parameter)
        f"SELECT c.id FROM {table} c, json_each(c.tags) t WHERE t.value = %s",  # noqa: S608
        [tag],
    )})


def _email_q(value: str, prefix: str) -> Q:
    value = value.lower()
    field = f"{prefix}email"
    if "*" not in value:
        return Q(**{field: value})
    parts = value.split("*")
    if not any(parts):
        return ~Q(**{field: ""})
    if value.count("*") == 1 and value.startswith("*"):
        return Q(**{f"{field}__endswith": parts[1]})
    if value.count("*") == 1 and value.endswith("*"):
        return Q(**{f"{field}__startswith": parts[0]})
    pattern = "^" + ".*".join(re.escape(p) for p in parts) + "$"
    return Q(**{f"{field}__regex": pattern})


def _phone_q(value: str, prefix: str, default_country: str, *, partial_ok: bool) -> Q:
    field = f"{prefix}phone"
    e164 = parse_phone(value, default_country=default_country)
    digits = phone_digits(value)
    if e164:
        return Q(**{field: e164}) | Q(**{f"{field}__contains": digits})
    if not digits or not partial_ok:
        raise _q_error("phone: needs a phone number or its digits.")
    if value.strip().startswith("+"):
        return Q(**{f"{field}__startswith": "+" + digits})
    return Q(**{f"{field}__contains": digits})


def _name_q(text: str, prefix: str, *, with_email: bool) -> Q:
    condition = Q()
    for word in text.split():
        word_q = Q(**{f"{prefix}first_name__icontains": word}) | Q(
            **{f"{prefix}last_name__icontains": word}
        )
        if with_email:
            word_q |= Q(**{f"{prefix}email__icontains": word.lower()})
        condition &= word_q
    return condition


def _free_text_q(text: str, prefix: str, default_country: str) -> Q:
    if looks_like_phone(text):
        return _phone_q(text, prefix, default_country, partial_ok=True)
    if "@" in text and " " not in text:
        email = parse_email(text)
        if email:
            return Q(**{f"{prefix}email": email})
        return Q(**{f"{prefix}email__contains": text.lower()})
    return _name_q(text, prefix, with_email=True)


def contact_q(q: str | None, *, organization, prefix: str = "") -> Q:
    """The condition `q` describes; `prefix` (e.g. "contact__") reaches a related contact.

    Raises 400 VALIDATION_ERROR (field `q`) for an over-long query or an empty DSL value.
    """
    text = (q or "").strip()
    if not text:
        return Q()
    if len(text) > Q_MAX_LENGTH:
        raise _q_error(f"q is at most {Q_MAX_LENGTH} characters.")
    default_country = organization.default_country
    condition = Q()
    for match in _DSL.finditer(text):
        key = match.group(1).lower()
        value = match.group("quoted") if match.group("quoted") is not None else match.group("bare")
        value = (value or "").strip()
        if not value:
            raise _q_error(f"{key}: needs a value, e.g. {key}:{_EXAMPLES[key]}.")
        if key == "email":
            condition &= _email_q(value, prefix)
        elif key == "tag":
            condition &= tag_q(value, prefix=prefix)
        elif key == "phone":
            condition &= _phone_q(value, prefix, default_country, partial_ok=True)
        else:
            condition &= _name_q(value, prefix, with_email=False)
    rest = " ".join(_DSL.sub(" ", text).split())
    if rest:
        condition &= _free_text_q(rest, prefix, default_country)
    return condition


_EXAMPLES = {"email": "*@example.com", "tag": "vip", "phone": "+14155550123", "name": "ann"}


def contacts_filtered(
    queryset: QuerySet,
    *,
    organization,
    q: str | None = None,
    tags: Iterable[str] = (),
    list_id: str | None = None,
    ids: Iterable[str] | None = None,
) -> QuerySet:
    """Contacts matching every given filter (the export body and the list `q`)."""
    condition = contact_q(q, organization=organization)
    for tag in tags:
        condition &= tag_q(tag)
    if list_id:
        condition &= Q(memberships__contact_list_id=list_id)
    if ids is not None:
        condition &= Q(pk__in=list(ids))
    return queryset.filter(condition)


def resolve_contact(*, organization, identifier: str) -> Contact | None:
    """A contact by id (`cnt_...`), email or phone (E.164 or national); one query."""
    text = (identifier or "").strip()
    if not text:
        return None
    contacts = Contact.objects.for_organization(organization)
    if text.startswith("cnt_"):
        return contacts.filter(pk=text).first()
    if "@" in text:
        email = parse_email(text)
        return contacts.filter(email=email).first() if email else None
    phone = parse_phone(text, default_country=organization.default_country)
    return contacts.filter(phone=phone).first() if phone else None


def custom_field_keys(queryset: QuerySet) -> list[str]:
    """Every custom-field key used by the rows of `queryset`, sorted; one query."""
    # The inner SQL is Django's own, its values stay parameters.
    inner = queryset.order_by().values("custom_fields")
    try:
        sql, params = inner.query.sql_with_params()
    except EmptyResultSet:  # a filter that can match nothing (`id__in=[]`): no keys
        return []
    if connection.vendor == "postgresql":
        outer = (
            "SELECT DISTINCT k FROM (SELECT jsonb_object_keys(s.custom_fields) AS k "  # noqa: S608
            f"FROM ({sql}) s WHERE jsonb_typeof(s.custom_fields) = 'object') keys"
        )
    else:
        outer = f"SELECT DISTINCT j.key FROM ({sql}) s, json_each(s.custom_fields) j"  # noqa: S608
    with connection.cursor() as cursor:
        cursor.execute(outer, params)
        return sorted(row[0] for row in cursor.fetchall())


def list_stats(contact_list: ContactList) -> dict:
    """Counts of one list's members; one aggregate query (`contact_count` is the cache)."""
    now = timezone.now()
    rows = ListMembership.objects.for_organization(contact_list.organization).filter(
        contact_list=contact_list
    ).aggregate(
        with_phone=Count("pk", filter=~Q(contact__phone="")),
        with_email=Count("pk", filter=~Q(contact__email="")),
        without_phone_or_email=Count("pk", filter=Q(contact__phone="", contact__email="")),
        added_last_7_days=Count("pk", filter=Q(added_at__gte=now - timedelta(days=7))),
        added_last_30_days=Count("pk", filter=Q(added_at__gte=now - timedelta(days=30))),
    )
    return {"list_id": contact_list.pk, "contact_count": contact_list.contact_count, **rows}


def tracked_events_of(contact: Contact, *, limit: int = 50) -> list:
    """The contact's latest tracked events (`POST /events/track`), newest first; one query
    on the (organization, contact_id, ...) index. Read by the dashboard's timeline."""
    from platform_core.events.models import TrackedEvent

    return list(
        TrackedEvent.objects.for_organization(contact.organization)
        .filter(contact_id=contact.pk).order_by("-occurred_at")[:limit]
    )
