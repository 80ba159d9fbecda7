"""The one statement that stores an accepted outbound message.

An API send is the hot path of the platform (issue 6's benchmark: accepted sends per
second). Storing it used to take three statements, each built through the ORM on every
request: the opt-out check, the contact lookup and the INSERT. They are one statement,
compiled once per database and contact field (`platform_core/compiled_sql.py`):

    INSERT INTO messaging_message (<every concrete column>)
    SELECT %s, ..., COALESCE(%s, (<the contact with this phone | email>)), ..., %s
    WHERE NOT EXISTS (<an opt-out blocking this recipient and sender>)
    RETURNING contact_id

No row back means an opt-out blocks the send (`sending/accept.py` then loads it with
`blocking_opt_outs` for the error). The subqueries are the ORM's own SQL of
`blocking_opt_outs` and `contact_ids`, so each rule is written once. PostgreSQL and SQLite
(3.35+, for RETURNING) both run it.
"""

from __future__ import annotations

import operator
from collections import defaultdict
from collections.abc import Sequence
from functools import lru_cache, reduce

from django.db import connections, models, router
from django.db.models import Q, QuerySet

from platform_core.compiled_sql import CompiledSQL, compile_query, placeholder, slot
from platform_core.ids import PublicIdField

from .models import Channel, Message, OptOut

_SUBQUERY_SLOTS = {"org", "recipient"}


def contact_field(channel: str) -> str:
    """The contact field a recipient address of `channel` matches."""
    return "email" if channel == Channel.EMAIL else "phone"


def contact_ids(organization_id: str, field: str, recipient: str) -> QuerySet:
    """The id of the organization's contact with this phone or email (at most one)."""
    from contacts.models import Contact

    # Unique per organization among non-empty values. Compiled, the `<> ''` is written into
    # the SQL (compile_query), so even a generic (prepared) plan uses the partial unique index.
    return (Contact.objects.for_organization_id(organization_id).filter(**{field: recipient})
            .exclude(**{field: ""}).order_by().values("pk")[:1])


def blocking_opt_outs(organization_id: str, recipient: str, *, sender: str | None,
                      messaging_service_id: str | None) -> QuerySet:
    """Opt-outs that block a send to `recipient` from `sender` / through the service (the
    rule; `blocked_messages` applies it to a batch). They are per scope (the messaging service, the sender address, or all senders), not per
    channel: a STOP sent to a number also stops that number's WhatsApp and RCS messages."""
    scope = Q(sender=OptOut.ALL_SENDERS)
    if sender:
        scope |= Q(sender=sender)
    if messaging_service_id:
        scope |= Q(messaging_service_id=messaging_service_id)
    return (OptOut.objects.for_organization_id(organization_id).filter(recipient=recipient)
            .filter(scope).order_by("created_at"))


def _blocks(opt_out_sender: str, opt_out_service_id: str | None, *, sender: str | None,
            messaging_service_id: str | None) -> bool:
    """`blocking_opt_outs`'s scope rule for one opt-out row already read (its twin)."""
    return (opt_out_sender == OptOut.ALL_SENDERS
            or bool(sender) and opt_out_sender == sender
            or bool(messaging_service_id) and opt_out_service_id == messaging_service_id)


def blocked_messages(messages: Sequence[Message]) -> set[str]:
    """The ids of outbound `messages` (of any organizations) that an opt-out blocks now:
    one query for a send batch, `blocking_opt_outs`'s rule applied to each message."""
    if not messages:
        return set()
    wanted: dict[str, set[str]] = defaultdict(set)
    for message in messages:
        wanted[message.organization_id].add(message.to)
    rows = OptOut.objects.dangerously_unscoped().filter(reduce(operator.or_, (
        Q(organization_id=organization_id, recipient__in=sorted(recipients))
        for organization_id, recipients in wanted.items())))
    scopes: dict[tuple[str, str], list[tuple[str, str | None]]] = defaultdict(list)
    for organization_id, recipient, sender, service_id in rows.values_list(
            "organization_id", "recipient", "sender", "messaging_service_id"):
        scopes[(organization_id, recipient)].append((sender, service_id))
    return {m.pk for m in messages
            if any(_blocks(sender, service_id, sender=m.from_address or None,
                           messaging_service_id=m.messaging_service_id)
                   for sender, service_id in scopes.get((m.organization_id, m.to), ()))}


@lru_cache(maxsize=16)
def _contact_subquery(using: str, field: str) -> CompiledSQL:
    return compile_query(contact_ids(slot("org"), field, slot("recipient")), using=using,
                         expected=_SUBQUERY_SLOTS)


def contact_id_for(organization_id: str, channel: str, recipient: str) -> str | None:
    """The id of the organization's contact a `channel` message to/from `recipient` is
    about (compiled like the INSERT, so its generic plan uses the partial unique index)."""
    from contacts.models import Contact

    using = router.db_for_read(Contact)
    statement = _contact_subquery(using, contact_field(channel))
    with connections[using].cursor() as cursor:
        cursor.execute(statement.sql,
                       statement.params({"org": organization_id, "recipient": recipient}))
        row = cursor.fetchone()
    return row[0] if row else None


def _opt_out_subquery(using: str) -> CompiledSQL:
    # Both optional scopes are slots; an absent one is bound to NULL, which equals nothing.
    rows = blocking_opt_outs(slot("org"), slot("recipient"), sender=slot("sender"),
                             messaging_service_id=slot("service"))
    return compile_query(rows.order_by().values("pk")[:1], using=using,
                         expected=_SUBQUERY_SLOTS | {"sender", "service"})


@lru_cache(maxsize=16)
def _statement(using: str, field_of_contact: str) -> CompiledSQL:
    connection = connections[using]
    quote = connection.ops.quote_name
    fields = Message._meta.concrete_fields
    if any(hasattr(f, "get_placeholder") for f in fields):
        raise ValueError("a Message field needs its own placeholder; extend acceptance.py")
    values: list[str | CompiledSQL] = []
    for index, field in enumerate(fields):
        if index:
            values.append(", ")
        if field.attname == "contact_id":
            values += ["COALESCE(", placeholder(field.attname), ", (",
                       _contact_subquery(using, field_of_contact), "))"]
        else:
            values.append(placeholder(field.attname))
    table = quote(Message._meta.db_table)
    columns = ", ".join(quote(f.column) for f in fields)
    return CompiledSQL.join([
        f"INSERT INTO {table} ({columns}) SELECT ", *values,
        " WHERE NOT EXISTS (", _opt_out_subquery(using), ")",
        f" RETURNING {quote(Message._meta.get_field('contact_id').column)}",
    ])


# Fields whose database value is the Python value itself when it has one of these types
# (Django's own preparation is then the identity); the others go through Django.
_PLAIN_FIELDS = frozenset({models.CharField, models.TextField, models.URLField, PublicIdField,
                           models.BooleanField, models.PositiveIntegerField, models.ForeignKey})
_PLAIN_VALUES = frozenset({str, bool, int, type(None)})


@lru_cache(maxsize=1)
def _fields() -> tuple[tuple[models.Field, bool], ...]:
    return tuple((field, type(field) in _PLAIN_FIELDS and not getattr(field, "auto_now", False))
                 for field in Message._meta.concrete_fields)


def insert_unless_opted_out(message: Message) -> bool:
    """Store `message` (new, outbound) unless an opt-out blocks its recipient; fill in its
    contact (the organization's contact with that phone or email) when none was given.
    True when stored."""
    using = router.db_for_write(Message, instance=message)
    connection = connections[using]
    statement = _statement(using, contact_field(message.channel))
    values = {}
    for field, plain in _fields():
        value = getattr(message, field.attname) if plain else field.pre_save(message, True)
        if not (plain and type(value) in _PLAIN_VALUES):
            value = field.get_db_prep_save(value, connection)
        values[field.attname] = value
    values.update(org=message.organization_id, recipient=message.to,
                  sender=message.from_address or None,
                  service=message.messaging_service_id or None)
    with connection.cursor() as cursor:
        cursor.execute(statement.sql, statement.params(values))
        row = cursor.fetchone()
    if row is None:
        return False
    message.contact_id = row[0]
    message._state.adding = False
    message._state.db = using
    return True
