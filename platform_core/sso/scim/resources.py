"""Reading SCIM request bodies (Users, Groups) into what the services take, and
`attributes` / `excludedAttributes` (RFC 7644 3.4.2.5), which django-scim2 does not apply."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ValidationError
from django.core.validators import validate_email

from .errors import ScimError, invalid_value
from .patch import AttrSpec
from .schemas import GROUP_SCHEMA, USER_SCHEMA

USER_SPECS = [
    AttrSpec("userName"),
    AttrSpec("externalId"),
    AttrSpec("name", sub=("formatted", "familyName", "givenName")),
    AttrSpec("displayName"),
    AttrSpec("emails", multi=True, sub=("value", "type", "primary")),
    AttrSpec("active"),
    AttrSpec("groups", multi=True, sub=("value", "$ref", "display"), read_only=True),
]
GROUP_SPECS = [
    AttrSpec("displayName"),
    AttrSpec("externalId"),
    AttrSpec("members", multi=True, sub=("value", "$ref", "type", "display")),
]


def _canonical_keys(body: dict[str, Any], specs: list[AttrSpec], schema: str) -> dict[str, Any]:
    """Top-level keys in their canonical case; URN-prefixed core keys unprefixed."""
    names = {spec.name.lower(): spec.name for spec in specs}
    out: dict[str, Any] = {}
    for key, value in body.items():
        key = str(key)
        if key.lower().startswith(schema.lower() + ":"):
            key = key[len(schema) + 1 :]
        canonical = names.get(key.lower())
        if canonical is not None:
            out[canonical] = value
    return out


def _opt_str(value: Any, field: str, max_length: int) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise invalid_value(f"{field} must be a string.")
    value = value.strip()
    if len(value) > max_length:
        raise invalid_value(f"{field} is longer than {max_length} characters.")
    return value or None


def _opt_bool(value: Any, field: str) -> bool | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"  # some IdPs send "False" as a string
    raise invalid_value(f"{field} must be a boolean.")


def _is_email(value: str) -> bool:
    try:
        validate_email(value)
    except ValidationError:
        return False
    return True


# --- Users -----------------------------------------------------------------------------------


@dataclass
class UserData:
    user_name: str
    external_id: str | None
    given_name: str | None
    family_name: str | None
    formatted_name: str | None
    display_name: str | None
    emails: list[dict[str, Any]]
    active: bool | None

    @property
    def primary_email(self) -> str:
        chosen = next((e for e in self.emails if e.get("primary") is True), None)
        chosen = chosen or (self.emails[0] if self.emails else None)
        if chosen is not None:
            return chosen["value"].strip().lower()
        return self.user_name.strip().lower()

    @property
    def person_name(self) -> str:
        return (
            self.display_name
            or self.formatted_name
            or " ".join(p for p in (self.given_name, self.family_name) if p)
            or ""
        )[:200]


def read_user(body: Any) -> UserData:
    if not isinstance(body, dict):
        raise ScimError(400, "The body must be a User object.", "invalidSyntax")
    doc = _canonical_keys(body, USER_SPECS, USER_SCHEMA)
    user_name = _opt_str(doc.get("userName"), "userName", 512)
    if not user_name:
        raise invalid_value("userName is required.")
    name = doc.get("name") or {}
    if not isinstance(name, dict):
        raise invalid_value("name must be an object.")
    name = {k.lower(): v for k, v in name.items()}
    raw_emails = doc.get("emails") or []
    if isinstance(raw_emails, dict):
        raw_emails = [raw_emails]
    if not isinstance(raw_emails, list):
        raise invalid_value("emails must be a list.")
    emails: list[dict[str, Any]] = []
    for item in raw_emails:
        if not isinstance(item, dict):
            raise invalid_value("Each emails value must be an object.")
        lowered = {str(k).lower(): v for k, v in item.items()}
        value = _opt_str(lowered.get("value"), "emails.value", 254)
        if not value or not _is_email(value):
            raise invalid_value(f"emails.value {value!r} is not an email address.")
        entry: dict[str, Any] = {"value": value}
        if lowered.get("type") is not None:
            entry["type"] = _opt_str(lowered.get("type"), "emails.type", 40)
        primary = _opt_bool(lowered.get("primary"), "emails.primary")
        if primary is not None:
            entry["primary"] = primary
        emails.append(entry)
    if sum(1 for e in emails if e.get("primary") is True) > 1:
        raise invalid_value("Only one email may be primary.")
    data = UserData(
        user_name=user_name,
        external_id=_opt_str(doc.get("externalId"), "externalId", 512),
        given_name=_opt_str(name.get("givenname"), "name.givenName", 200),
        family_name=_opt_str(name.get("familyname"), "name.familyName", 200),
        formatted_name=_opt_str(name.get("formatted"), "name.formatted", 400),
        display_name=_opt_str(doc.get("displayName"), "displayName", 400),
        emails=emails,
        active=_opt_bool(doc.get("active"), "active"),
    )
    if not emails and not _is_email(user_name):
        raise invalid_value(
            "A user needs an email address: give emails, or an email address as userName."
        )
    return data


# --- Groups ----------------------------------------------------------------------------------


@dataclass
class GroupData:
    display_name: str
    external_id: str | None
    member_ids: list[str]


def read_group(body: Any) -> GroupData:
    if not isinstance(body, dict):
        raise ScimError(400, "The body must be a Group object.", "invalidSyntax")
    doc = _canonical_keys(body, GROUP_SPECS, GROUP_SCHEMA)
    display_name = _opt_str(doc.get("displayName"), "displayName", 400)
    if not display_name:
        raise invalid_value("displayName is required.")
    members = doc.get("members") or []
    if not isinstance(members, list):
        raise invalid_value("members must be a list.")
    ids: list[str] = []
    for member in members:
        if not isinstance(member, dict):
            raise invalid_value("Each member must be an object.")
        lowered = {str(k).lower(): v for k, v in member.items()}
        value = lowered.get("value")
        if not value and isinstance(lowered.get("$ref"), str):
            value = lowered["$ref"].rstrip("/").rsplit("/", 1)[-1]
        if not isinstance(value, str) or not value:
            raise invalid_value("Each member needs a value (the user id).")
        member_type = lowered.get("type")
        if member_type not in (None, "User", "user"):
            raise invalid_value("Only users can be group members.")
        if value not in ids:
            ids.append(value)
    return GroupData(
        display_name=display_name,
        external_id=_opt_str(doc.get("externalId"), "externalId", 512),
        member_ids=ids,
    )


# --- attributes / excludedAttributes -------------------------------------------------------


def _names(param: str | list[str] | None, schema: str) -> list[tuple[str, str | None]]:
    if not param:
        return []
    parts = param if isinstance(param, list) else str(param).split(",")
    out = []
    for part in parts:
        part = str(part).strip()
        if part.lower().startswith(schema.lower() + ":"):
            part = part[len(schema) + 1 :]
        if not part:
            continue
        attr, _, sub = part.partition(".")
        out.append((attr.lower(), sub.lower() or None))
    return out


def select_attributes(
    doc: dict[str, Any], *, schema: str, attributes=None, excluded=None
) -> dict[str, Any]:
    """RFC 7644 3.4.2.5: `id` and `schemas` are always returned."""
    include = _names(attributes, schema)
    exclude = _names(excluded, schema)
    always = {"id", "schemas"}
    if include:
        wanted: dict[str, set[str] | None] = {}
        for attr, sub in include:
            if sub is None:
                wanted[attr] = None
            elif wanted.get(attr, set()) is not None:
                wanted.setdefault(attr, set()).add(sub)
        out = {}
        for key, value in doc.items():
            lowered = key.lower()
            if lowered in always:
                out[key] = value
            elif lowered in wanted:
                subs = wanted[lowered]
                if subs is None:
                    out[key] = value
                elif isinstance(value, dict):
                    picked = {k: v for k, v in value.items() if k.lower() in subs}
                    if picked:
                        out[key] = picked
                elif isinstance(value, list):
                    picked_list = [
                        {k: v for k, v in i.items() if k.lower() in subs}
                        for i in value
                        if isinstance(i, dict)
                    ]
                    if any(picked_list):
                        out[key] = picked_list
        return out
    if exclude:
        out = dict(doc)
        for attr, sub in exclude:
            for key in list(out):
                if key.lower() != attr or key.lower() in always:
                    continue
                if sub is None:
                    del out[key]
                elif isinstance(out[key], dict):
                    out[key] = {k: v for k, v in out[key].items() if k.lower() != sub}
        return out
    return doc
