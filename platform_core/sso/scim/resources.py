"""Users and Groups as SCIM documents: reading request bodies, writing representations,
`attributes` / `excludedAttributes`, and the `filter` parameter as a Django Q."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db.models import Q
from scim2_filter_parser import ast as scim_ast
from scim2_filter_parser.lexer import SCIMLexer
from scim2_filter_parser.parser import SCIMParser
from scim2_filter_parser.transpilers.django_q_object import Transpiler

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


def user_location(base_url: str, user_id: str) -> str:
    return f"{base_url}/Users/{user_id}"


def group_location(base_url: str, group_id: str) -> str:
    return f"{base_url}/Groups/{group_id}"


def _iso(value) -> str:
    return value.isoformat().replace("+00:00", "Z")


def user_document(link, *, base_url: str, is_member: bool) -> dict[str, Any]:
    """The representation of a ScimUser (with `groups` prefetched)."""
    doc: dict[str, Any] = {"schemas": [USER_SCHEMA], "id": link.user_id}
    if link.external_id:
        doc["externalId"] = link.external_id
    doc["userName"] = link.user_name
    name = {
        k: v
        for k, v in (
            ("formatted", link.formatted_name),
            ("familyName", link.family_name),
            ("givenName", link.given_name),
        )
        if v
    }
    if name:
        doc["name"] = name
    if link.display_name:
        doc["displayName"] = link.display_name
    if link.emails:
        doc["emails"] = link.emails
    if link.active is not None:
        # What the person has: access is the membership (removed while deactivated).
        doc["active"] = is_member
    groups = [
        {"value": g.pk, "$ref": group_location(base_url, g.pk), "display": g.display_name}
        for g in sorted(link.groups.all(), key=lambda g: g.created_at)
    ]
    if groups:
        doc["groups"] = groups
    doc["meta"] = {
        "resourceType": "User",
        "created": _iso(link.created_at),
        "lastModified": _iso(link.updated_at),
        "location": user_location(base_url, link.user_id),
    }
    return doc


def user_writable_document(link) -> dict[str, Any]:
    """What PATCH operates on: the writable attributes as stored."""
    return {
        "userName": link.user_name,
        "externalId": link.external_id,
        "name": {
            k: v
            for k, v in (
                ("formatted", link.formatted_name),
                ("familyName", link.family_name),
                ("givenName", link.given_name),
            )
            if v
        }
        or None,
        "displayName": link.display_name,
        "emails": list(link.emails or []),
        "active": link.active,
    }


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


def group_document(group, *, base_url: str) -> dict[str, Any]:
    """The representation of a ScimGroup (with `members` prefetched)."""
    doc: dict[str, Any] = {"schemas": [GROUP_SCHEMA], "id": group.pk}
    if group.external_id:
        doc["externalId"] = group.external_id
    doc["displayName"] = group.display_name
    members = [
        {"value": m.user_id, "$ref": user_location(base_url, m.user_id), "type": "User"}
        for m in sorted(group.members.all(), key=lambda m: m.created_at)
    ]
    if members:
        doc["members"] = members
    doc["meta"] = {
        "resourceType": "Group",
        "created": _iso(group.created_at),
        "lastModified": _iso(group.updated_at),
        "location": group_location(base_url, group.pk),
    }
    return doc


def group_writable_document(group) -> dict[str, Any]:
    return {
        "displayName": group.display_name,
        "externalId": group.external_id,
        "members": [
            {"value": m.user_id, "type": "User"}
            for m in sorted(group.members.all(), key=lambda m: m.created_at)
        ],
    }


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


# --- filter --------------------------------------------------------------------------------

USER_FILTER_MAP = {
    ("username", None, None): "user_name",
    ("externalid", None, None): "external_id",
    ("id", None, None): "user_id",
    ("displayname", None, None): "display_name",
    ("name", "givenname", None): "given_name",
    ("name", "familyname", None): "family_name",
    ("name", "formatted", None): "formatted_name",
    ("emails", None, None): "user__email",
    ("emails", "value", None): "user__email",
    ("active", None, None): "active",
    ("meta", "created", None): "created_at",
    ("meta", "lastmodified", None): "updated_at",
}
GROUP_FILTER_MAP = {
    ("displayname", None, None): "display_name",
    ("externalid", None, None): "external_id",
    ("id", None, None): "id",
    ("members", None, None): "members__user_id",
    ("members", "value", None): "members__user_id",
    ("meta", "created", None): "created_at",
    ("meta", "lastmodified", None): "updated_at",
}


def _invalid_filter(detail: str) -> ScimError:
    return ScimError(400, detail, "invalidFilter")


class _StrictTranspiler(Transpiler):
    """The library's Q transpiler, refusing (instead of dropping) attributes it cannot map."""

    def __init__(self, attr_map, schema: str) -> None:
        super().__init__(attr_map)
        self.schema = schema.lower()

    def visit_AttrExpr(self, node):
        if isinstance(node.attr_path.attr_name, scim_ast.Filter):
            raise _invalid_filter("Value filters inside filter are not supported here.")
        return super().visit_AttrExpr(node)

    def visit_AttrPath(self, node):
        if node.uri and node.uri.lower().rstrip(":") != self.schema:
            raise _invalid_filter(f"Unknown schema {node.uri} in filter.")
        sub = node.sub_attr.value.lower() if node.sub_attr else None
        key = (str(node.attr_name).lower(), sub, None)
        if key not in self.attr_map:
            name = node.attr_name + (f".{node.sub_attr.value}" if node.sub_attr else "")
            raise _invalid_filter(f"Filtering on {name} is not supported.")
        return self.attr_map[key]


def filter_q(text: str, attr_map: dict, schema: str) -> Q:
    try:
        tree = SCIMParser().parse(SCIMLexer().tokenize(text))
    except Exception as exc:
        raise _invalid_filter(f"Cannot read the filter: {exc}") from None
    if tree is None:
        raise _invalid_filter("Cannot read the filter.")
    try:
        query = _StrictTranspiler(attr_map, schema).transpile(tree)
    except ScimError:
        raise
    except Exception as exc:
        raise _invalid_filter(f"Cannot apply the filter: {exc}") from None
    return query if query is not None else Q()
