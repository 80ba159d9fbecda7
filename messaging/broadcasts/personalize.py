"""Per-recipient values of a broadcast: `{{contact.<field>}}` placeholders.

A broadcast's template `variables`, `body` and `subject` may name fields of each
recipient's contact:

    {"1": "{{contact.first_name | there}}", "2": "{{contact.custom.order_id}}"}

Fields: `id`, `first_name`, `last_name`, `full_name`, `phone`, `email`, and
`custom.<key>` (alias `custom_fields.<key>`) for a custom field. After `|` comes the
value used when the contact has none. Anything else in the text is kept as written (the
template's own `{{1}}` placeholders are the templates family's business).
"""

from __future__ import annotations

import re
from typing import Any

from platform_core.errors import validation_error

PLACEHOLDER = re.compile(
    r"\{\{\s*contact\.([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_\-]+)?)\s*(?:\|\s*([^}]*?))?\s*\}\}")
PLAIN_FIELDS = frozenset({"id", "first_name", "last_name", "full_name", "phone", "email"})
CUSTOM_PREFIXES = ("custom.", "custom_fields.")
# The contact columns a broadcast's runner loads for the placeholders.
CONTACT_COLUMNS = ("id", "first_name", "last_name", "phone", "email", "custom_fields")


def _field_ok(name: str) -> bool:
    return name in PLAIN_FIELDS or (name.startswith(CUSTOM_PREFIXES)
                                    and len(name.split(".", 1)[1]) > 0)


def check(value: Any, *, field: str) -> None:
    """422 VALIDATION_ERROR naming `field` when a placeholder names no contact field."""
    if not isinstance(value, str):
        return
    for match in PLACEHOLDER.finditer(value):
        if not _field_ok(match.group(1)):
            raise validation_error(
                field, f"{{{{contact.{match.group(1)}}}}} is not a contact field; use "
                       f"{', '.join(sorted(PLAIN_FIELDS))} or custom.<key>.")


def uses_contact(*values: Any) -> bool:
    return any(isinstance(v, str) and PLACEHOLDER.search(v) for v in values)


def _value(contact: dict[str, Any], name: str) -> str:
    if name == "full_name":
        parts = (contact.get("first_name"), contact.get("last_name"))
        return " ".join(p for p in parts if p)
    if name.startswith(CUSTOM_PREFIXES):
        key = name.split(".", 1)[1]
        raw = (contact.get("custom_fields") or {}).get(key)
        return "" if raw is None or isinstance(raw, dict | list) else str(raw)
    raw = contact.get(name)
    return "" if raw is None else str(raw)


def render(text: str, contact: dict[str, Any] | None) -> str:
    """`text` with each `{{contact.x | default}}` replaced by this contact's value."""
    if not text or "{{" not in text:
        return text

    def replace(match: re.Match) -> str:
        value = _value(contact or {}, match.group(1))
        if not value.strip() and match.group(2) is not None:
            return match.group(2).strip()
        return value

    return PLACEHOLDER.sub(replace, text)


def render_variables(variables: dict[str, Any], contact: dict[str, Any] | None) -> dict:
    return {key: render(value, contact) if isinstance(value, str) else value
            for key, value in (variables or {}).items()}


def sample(variables: dict[str, Any]) -> dict:
    """The variables with every placeholder given a stand-in value: what create checks
    against the template (keys and approval) before any contact is known."""
    return {key: PLACEHOLDER.sub("x", value) if isinstance(value, str) else value
            for key, value in (variables or {}).items()}
