"""Writes of the contacts family: contacts, merges, lists and list memberships.

Every write is atomic, writes its audit row and emits its event in the same transaction.

`contact_count` of a list stays exact under concurrency: memberships are inserted with
`INSERT ... ON CONFLICT DO NOTHING RETURNING` and deleted with `DELETE ... RETURNING`, so
each statement reports exactly the rows it changed, and the count moves by that number
through an `F()` update in the same transaction. Two concurrent adds of the same contact
serialize on the unique index: the second inserts nothing and changes nothing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from django.db import IntegrityError, connection, transaction
from django.db.models import F, Q
from django.utils import timezone

from platform_core.audit.services import audit_record
from platform_core.errors import APIError, validation_error
from platform_core.events.bus import emit
from platform_core.events.models import TrackedEvent
from platform_core.identity.principal import Principal

from .models import Contact, ContactList, ListMembership
from .normalize import (
    MAX_CUSTOM_FIELDS,
    MAX_TAGS,
    clean_custom_fields,
    clean_tags,
    normalize_email,
    normalize_phone,
)
from .payloads import contact_data
from .selectors import resolve_contact

BULK_ADD_MAX = 1000
_INSERT_CHUNK = 200  # rows per INSERT (4 parameters each; SQLite caps parameters)


# --- Contacts -------------------------------------------------------------------------------


def _clean_identity(organization, *, phone: str | None, email: str | None) -> dict[str, str]:
    cleaned: dict[str, str] = {}
    if phone is not None:
        cleaned["phone"] = (
            normalize_phone(phone, default_country=organization.default_country)
            if phone.strip() else ""
        )
    if email is not None:
        cleaned["email"] = normalize_email(email) if email.strip() else ""
    return cleaned


def _duplicate_error(field: str, existing_id: str | None) -> APIError:
    details: dict[str, Any] = {"field": field}
    if existing_id:
        details["contact_id"] = existing_id
    return APIError(
        "ALREADY_EXISTS", f"A contact with this {field} already exists.", details=details
    )


def _check_unique(organization, *, phone: str, email: str, exclude_pk: str | None) -> None:
    condition = Q()
    if phone:
        condition |= Q(phone=phone)
    if email:
        condition |= Q(email=email)
    if not condition:
        return
    rows = Contact.objects.for_organization(organization).filter(condition)
    if exclude_pk:
        rows = rows.exclude(pk=exclude_pk)
    for pk, found_phone, found_email in rows.values_list("pk", "phone", "email")[:2]:
        if phone and found_phone == phone:
            raise _duplicate_error("phone", pk)
        if email and found_email == email:
            raise _duplicate_error("email", pk)


def _save_unique(contact: Contact, **kwargs: Any) -> None:
    """Save in a savepoint; a unique-constraint race answers 409 naming the field."""
    try:
        with transaction.atomic():
            contact.save(**kwargs)
    except IntegrityError as exc:
        text = str(exc)
        field = "phone" if "uniq_phone" in text or ".phone" in text else (
            "email" if "uniq_email" in text or ".email" in text else None
        )
        if field is None:
            raise
        raise _duplicate_error(field, None) from None


def _link_tracked_events(contact: Contact) -> int:
    """Attach the unlinked tracked events of this contact's email or phone to it.

    Event ingestion (platform_core.events.services.find_contact_id) links an event to an
    existing contact by equal email, then phone; this is the other direction, for events
    recorded before the contact (or its new email or phone) existed.
    """
    condition = Q()
    if contact.email:
        condition |= Q(contact_email=contact.email)
    if contact.phone:
        condition |= Q(contact_phone=contact.phone)
    if not condition:
        return 0
    return (
        TrackedEvent.objects.for_organization(contact.organization)
        .filter(contact_id__isnull=True)
        .filter(condition)
        .update(contact_id=contact.pk)
    )


def contact_create(
    *,
    organization,
    principal: Principal | None,
    first_name: str = "",
    last_name: str = "",
    phone: str | None = None,
    email: str | None = None,
    custom_fields: dict | None = None,
    tags: list[str] | None = None,
    request=None,
) -> Contact:
    identity = _clean_identity(organization, phone=phone or "", email=email or "")
    contact = Contact(
        organization=organization,
        first_name=(first_name or "").strip(),
        last_name=(last_name or "").strip(),
        custom_fields=clean_custom_fields(custom_fields or {}, allow_null=False),
        tags=clean_tags(tags or []),
        **identity,
    )
    with transaction.atomic():
        _check_unique(organization, phone=contact.phone, email=contact.email, exclude_pk=None)
        _save_unique(contact, force_insert=True)
        _link_tracked_events(contact)
        audit_record(action="contact.created", organization=organization, principal=principal,
                     target=contact, request=request)
        emit(organization=organization, type="contact.created",
             data={"contact": contact_data(contact)})
    return contact


_UPDATABLE = ("first_name", "last_name", "phone", "email", "custom_fields", "tags")


def contact_update(
    *, contact: Contact, principal: Principal | None, request=None, **changes: Any
) -> Contact:
    """PATCH semantics: absent fields unchanged; `phone`/`email` null or "" clears;
    `tags` replaces the list; `custom_fields` merges key by key and a null value removes
    the key."""
    unknown = set(changes) - set(_UPDATABLE)
    if unknown:
        raise TypeError(f"unknown contact fields {sorted(unknown)}")
    organization = contact.organization
    new: dict[str, Any] = {}
    for name in ("first_name", "last_name"):
        if name in changes:
            new[name] = (changes[name] or "").strip()
    new.update(_clean_identity(
        organization,
        phone=(changes["phone"] or "") if "phone" in changes else None,
        email=(changes["email"] or "") if "email" in changes else None,
    ))
    if "tags" in changes:
        new["tags"] = clean_tags(changes["tags"] or [])
    if "custom_fields" in changes:
        patch = clean_custom_fields(changes["custom_fields"] or {}, allow_null=True)
        merged = dict(contact.custom_fields or {})
        for key, value in patch.items():
            if value is None:
                merged.pop(key, None)
            else:
                merged[key] = value
        if len(merged) > MAX_CUSTOM_FIELDS:
            raise validation_error("custom_fields",
                                   f"At most {MAX_CUSTOM_FIELDS} custom fields per contact.")
        new["custom_fields"] = merged
    changed = sorted(name for name, value in new.items() if getattr(contact, name) != value)
    if not changed:
        return contact
    with transaction.atomic():
        if "phone" in changed or "email" in changed:
            _check_unique(organization, phone=new.get("phone", "") if "phone" in changed else "",
                          email=new.get("email", "") if "email" in changed else "",
                          exclude_pk=contact.pk)
        for name in changed:
            setattr(contact, name, new[name])
        _save_unique(contact)
        if "phone" in changed or "email" in changed:
            _link_tracked_events(contact)
        audit_record(action="contact.updated", principal=principal, organization=organization,
                     target=contact, request=request, metadata={"changed": changed})
        emit(organization=organization, type="contact.updated",
             data={"contact": contact_data(contact), "changed_fields": changed})
    return contact


def contact_delete(*, contact: Contact, principal: Principal | None, request=None) -> None:
    """Delete the contact; its lists' counts drop and its tracked events become unlinked."""
    organization = contact.organization
    with transaction.atomic():
        removed = _delete_memberships(organization=organization, contact_id=contact.pk)
        _adjust_counts(Counter({list_id: -1 for list_id, _added in removed}))
        TrackedEvent.objects.for_organization(organization).filter(
            contact_id=contact.pk
        ).update(contact_id=None)
        snapshot = contact_data(contact)
        audit_record(action="contact.deleted", principal=principal, organization=organization,
                     target=contact, request=request)
        emit(organization=organization, type="contact.deleted",
             data={"id": contact.pk, "contact": snapshot})
        contact.delete()


def contact_merge(
    *, target: Contact, source_id: str, principal: Principal | None, request=None
) -> Contact:
    """Merge the duplicate `source_id` into `target`, then delete the source; atomic.

    Moves list memberships (lists holding both keep one row, counts stay exact), tracked
    events, tags (union, target's first) and custom fields (target wins on conflicting
    keys); empty names, phone and email of the target are filled from the source.
    """
    organization = target.organization
    if source_id == target.pk:
        raise validation_error("source_id", "A contact cannot be merged into itself.")
    with transaction.atomic():
        locked = {
            c.pk: c
            for c in Contact.objects.for_organization(organization)
            .select_for_update()
            .filter(pk__in=[target.pk, source_id])
            .order_by("pk")
        }
        if target.pk not in locked:
            raise APIError("NOT_FOUND")
        if source_id not in locked:
            raise APIError("NOT_FOUND", "No contact with this source_id.",
                           details={"field": "source_id"})
        target, source = locked[target.pk], locked[source_id]

        removed = _delete_memberships(organization=organization, contact_id=source.pk)
        inserted = _insert_memberships(
            organization=organization,
            rows=[(target.pk, list_id, added_at) for list_id, added_at in removed],
        )
        deltas = Counter({list_id: -1 for list_id, _ in removed})
        deltas.update({list_id: 1 for _cid, list_id in inserted})
        _adjust_counts(deltas)
        moved_events = TrackedEvent.objects.for_organization(organization).filter(
            contact_id=source.pk
        ).update(contact_id=target.pk)

        target.tags = list(dict.fromkeys([*target.tags, *source.tags]))[:MAX_TAGS]
        target.custom_fields = {**(source.custom_fields or {}), **(target.custom_fields or {})}
        for name in ("first_name", "last_name", "phone", "email"):
            if not getattr(target, name) and getattr(source, name):
                setattr(target, name, getattr(source, name))
        snapshot = contact_data(source)
        source.delete()  # first: its phone and email may move to the target
        target.save()
        _link_tracked_events(target)

        metadata = {"source_id": source_id, "lists_moved": len(removed),
                    "tracked_events_moved": moved_events}
        audit_record(action="contact.merged", principal=principal, organization=organization,
                     target=target, request=request, metadata=metadata)
        emit(organization=organization, type="contact.merged",
             data={"contact": contact_data(target), "merged_contact": snapshot, **metadata})
        emit(organization=organization, type="contact.deleted",
             data={"id": source_id, "contact": snapshot, "merged_into": target.pk})
    return target


# --- Memberships (raw SQL: the statements report exactly the rows they changed) -------------
# Only the quoted table name is interpolated; every value is a parameter.


def _membership_table() -> str:
    return connection.ops.quote_name(ListMembership._meta.db_table)


def _insert_memberships(
    *, organization, rows: Iterable[tuple[str, str, datetime]]
) -> list[tuple[str, str]]:
    """Insert (contact_id, list_id, added_at) rows, skipping existing pairs; returns the
    (contact_id, list_id) pairs actually inserted."""
    rows = list(rows)
    inserted: list[tuple[str, str]] = []
    table = _membership_table()
    adapt = connection.ops.adapt_datetimefield_value
    for start in range(0, len(rows), _INSERT_CHUNK):
        chunk = rows[start:start + _INSERT_CHUNK]
        values = ", ".join(["(%s, %s, %s, %s)"] * len(chunk))
        params: list[Any] = []
        for contact_id, list_id, added_at in chunk:
            params += [organization.pk, contact_id, list_id, adapt(added_at)]
        sql = (
            f"INSERT INTO {table} (organization_id, contact_id, contact_list_id, added_at) "  # noqa: S608
            f"VALUES {values} ON CONFLICT (contact_list_id, contact_id) DO NOTHING "
            "RETURNING contact_id, contact_list_id"
        )
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            inserted += [(row[0], row[1]) for row in cursor.fetchall()]
    return inserted


def _delete_memberships(
    *, organization, contact_id: str, list_id: str | None = None
) -> list[tuple[str, datetime]]:
    """Delete the contact's memberships (of one list, or all); returns (list_id, added_at)."""
    sql = (
        f"DELETE FROM {_membership_table()} WHERE organization_id = %s AND contact_id = %s"  # noqa: S608
    )
    params: list[Any] = [organization.pk, contact_id]
    if list_id is not None:
        sql += " AND contact_list_id = %s"
        params.append(list_id)
    sql += " RETURNING contact_list_id, added_at"
    converter = ListMembership._meta.get_field("added_at")
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    return [(row[0], _to_datetime(converter, row[1])) for row in rows]


def _to_datetime(field, value) -> datetime:
    if isinstance(value, datetime):
        return value if timezone.is_aware(value) else timezone.make_aware(value, UTC)
    # SQLite hands back text.
    for converter in connection.ops.get_db_converters(field):
        value = converter(value, field, connection)
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    return value if timezone.is_aware(value) else timezone.make_aware(value, UTC)


def _adjust_counts(deltas: Counter) -> None:
    """Move each list's cached count by its delta, in list-id order (no lock cycles)."""
    for list_id in sorted(deltas):
        delta = deltas[list_id]
        if delta:
            ContactList._base_manager.filter(pk=list_id).update(
                contact_count=F("contact_count") + delta
            )


# --- Lists ----------------------------------------------------------------------------------


def _list_audit(action: str, contact_list: ContactList, principal, request, **metadata) -> None:
    audit_record(action=action, principal=principal, organization=contact_list.organization,
                 target=contact_list, request=request, metadata=metadata or None)


def list_create(
    *, organization, principal: Principal | None, name: str, description: str | None = None,
    request=None,
) -> ContactList:
    contact_list = ContactList(organization=organization, name=name, description=description)
    with transaction.atomic():
        contact_list.save(force_insert=True)
        _list_audit("contact_list.created", contact_list, principal, request)
    return contact_list


def list_update(
    *, contact_list: ContactList, principal: Principal | None, request=None, **changes: Any
) -> ContactList:
    changed = sorted(k for k, v in changes.items() if getattr(contact_list, k) != v)
    if not changed:
        return contact_list
    with transaction.atomic():
        for name in changed:
            setattr(contact_list, name, changes[name])
        # Never write the cached count from a possibly stale instance.
        contact_list.save(update_fields=[*changed, "updated_at"])
        _list_audit("contact_list.updated", contact_list, principal, request, changed=changed)
    return contact_list


def list_delete(*, contact_list: ContactList, principal: Principal | None, request=None) -> None:
    with transaction.atomic():
        _list_audit("contact_list.deleted", contact_list, principal, request,
                    name=contact_list.name)
        contact_list.delete()


def list_duplicate(
    *, contact_list: ContactList, principal: Principal | None, name: str | None = None,
    request=None,
) -> ContactList:
    """A new list with the same description and members (added now)."""
    organization = contact_list.organization
    name = name or f"{contact_list.name} (copy)"[:255]
    copy = ContactList(organization=organization, name=name,
                       description=contact_list.description)
    now = timezone.now()
    table = _membership_table()
    with transaction.atomic():
        copy.save(force_insert=True)
        with connection.cursor() as cursor:
            cursor.execute(
                f"INSERT INTO {table} (organization_id, contact_id, contact_list_id, added_at) "  # noqa: S608
                f"SELECT organization_id, contact_id, %s, %s FROM {table} "
                "WHERE organization_id = %s AND contact_list_id = %s",
                [copy.pk, connection.ops.adapt_datetimefield_value(now), organization.pk,
                 contact_list.pk],
            )
            copied = cursor.rowcount
        ContactList._base_manager.filter(pk=copy.pk).update(contact_count=copied)
        copy.contact_count = copied
        _list_audit("contact_list.duplicated", copy, principal, request,
                    source_list_id=contact_list.pk, members=copied)
    return copy


def list_member_add(
    *, contact_list: ContactList, identifier: str, principal: Principal | None, request=None
) -> tuple[Contact, bool]:
    """Add the contact an identifier names; returns (contact, created). Already a member:
    nothing is written."""
    organization = contact_list.organization
    contact = resolve_contact(organization=organization, identifier=identifier)
    if contact is None:
        raise APIError("CONTACT_NOT_FOUND_FOR_IDENTIFIER", details={"identifier": identifier})
    with transaction.atomic():
        inserted = _insert_memberships(
            organization=organization, rows=[(contact.pk, contact_list.pk, timezone.now())]
        )
        if inserted:
            _adjust_counts(Counter({contact_list.pk: len(inserted)}))
            _list_audit("contact_list.member_added", contact_list, principal, request,
                        contact_id=contact.pk)
    return contact, bool(inserted)


def list_members_bulk_add(
    *, contact_list: ContactList, contact_ids: list[str], principal: Principal | None,
    request=None,
) -> tuple[int, list[str]]:
    """Add up to 1000 contacts by id; returns (newly added count, failed ids). Ids unknown
    in this organization fail; contacts already on the list are neither added nor failed."""
    if len(contact_ids) > BULK_ADD_MAX:
        raise validation_error("contact_ids", f"At most {BULK_ADD_MAX} contact_ids per call.")
    organization = contact_list.organization
    wanted = list(dict.fromkeys(contact_ids))
    known = set(
        Contact.objects.for_organization(organization)
        .filter(pk__in=wanted)
        .values_list("pk", flat=True)
    )
    failed = [cid for cid in wanted if cid not in known]
    now = timezone.now()
    with transaction.atomic():
        inserted = _insert_memberships(
            organization=organization,
            rows=[(cid, contact_list.pk, now) for cid in wanted if cid in known],
        )
        if inserted:
            _adjust_counts(Counter({contact_list.pk: len(inserted)}))
        _list_audit("contact_list.members_bulk_added", contact_list, principal, request,
                    requested=len(wanted), added=len(inserted), failed=len(failed))
    return len(inserted), failed


def list_member_remove(
    *, contact_list: ContactList, contact_id: str, principal: Principal | None, request=None
) -> None:
    """Remove one member; 404 NOT_FOUND when the contact is not on the list."""
    organization = contact_list.organization
    with transaction.atomic():
        removed = _delete_memberships(organization=organization, contact_id=contact_id,
                                      list_id=contact_list.pk)
        if not removed:
            raise APIError("NOT_FOUND", "This contact is not a member of the list.")
        _adjust_counts(Counter({contact_list.pk: -len(removed)}))
        _list_audit("contact_list.member_removed", contact_list, principal, request,
                    contact_id=contact_id)
