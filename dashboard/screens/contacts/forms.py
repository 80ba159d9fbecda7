"""Form text <-> the shapes the contacts and segments services take. Only the reshaping
lives here; every rule (lengths, keys, operators) stays in the services, which answer the
errors the screens show."""

from __future__ import annotations

import json
from typing import Any

from django.http import QueryDict

from contacts.segments import filters as segment_filters
from platform_core.errors import validation_error

MAX_RULE_ROWS = 20
FIELD_SUGGESTIONS = ["first_name", "last_name", "email", "phone", "tags", "list_id",
                     "created_at", "updated_at", "custom_fields.", "event."]
NO_VALUE = ("exists", "not_exists")


def split_tags(text: str) -> list[str]:
    return [tag.strip() for tag in (text or "").split(",") if tag.strip()]


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def custom_fields_text(fields: dict | None) -> str:
    """One `key: value` line per custom field."""
    return "\n".join(f"{key}: {_shown(value)}" for key, value in (fields or {}).items())


def custom_fields_patch(current: dict | None, text: str) -> dict[str, Any]:
    """The API's PATCH body for `custom_fields` from the edited lines: changed keys with
    their text, removed keys as null; an unchanged number or boolean keeps its type."""
    current = current or {}
    edited: dict[str, Any] = {}
    for number, line in enumerate((text or "").splitlines(), start=1):
        if not line.strip():
            continue
        key, sep, value = line.partition(":")
        if not sep or not key.strip():
            raise validation_error("custom_fields",
                                   f"Line {number}: write each field as `key: value`.")
        key, value = key.strip(), value.strip()
        edited[key] = current[key] if key in current and _shown(current[key]) == value else value
    patch: dict[str, Any] = {key: None for key in current if key not in edited}
    patch.update(edited)
    return patch


# --- Segment filter builder ---------------------------------------------------------------


def _value(field: str, operator: str, raw: str) -> Any:
    raw = raw.strip()
    if operator == "in":
        items = [part.strip() for part in raw.split(",") if part.strip()]
        return [_scalar(field, item) for item in items]
    return _scalar(field, raw)


def _scalar(field: str, raw: str) -> Any:
    """Event counts are numbers; `N days ago` a relative time; else the text itself
    (custom fields compare as stored: an imported value is text)."""
    if field.startswith("event."):
        try:
            return int(raw)
        except ValueError:
            pass
    if field in segment_filters.TIME_FIELDS and raw.endswith(" days ago"):
        number = raw.removesuffix(" days ago").strip()
        if number.isdigit():
            return {"days_ago": int(number)}
    return raw


def tree_from_form(data: QueryDict) -> dict[str, Any]:
    """The filter tree of the segment form: the JSON text when given (any nesting),
    otherwise the rows of the builder (`field`, `operator`, `value` repeated) joined by
    `op`. Rows without a field are skipped; validation is `parse_filters`'s."""
    advanced = (data.get("filters_json") or "").strip()
    if advanced:
        try:
            return json.loads(advanced)
        except ValueError as exc:
            raise validation_error("filters_json", f"Not valid JSON: {exc}.") from None
    rules = []
    fields, operators, values = (data.getlist(name) for name in ("field", "operator", "value"))
    for field, operator, raw in list(zip(fields, operators, values, strict=False))[:MAX_RULE_ROWS]:
        field = field.strip()
        if not field:
            continue
        rule: dict[str, Any] = {"field": field, "operator": operator}
        if operator not in NO_VALUE:
            rule["value"] = _value(field, operator, raw)
        rules.append(rule)
    return {"op": data.get("op") if data.get("op") in ("and", "or") else "and", "rules": rules}


def rows_from_tree(tree: Any) -> tuple[str, list[dict[str, str]], str]:
    """(op, builder rows, JSON text): a flat tree fills the builder; a nested one (or any
    shape the builder cannot show) is edited as JSON."""
    if not isinstance(tree, dict):
        return "and", [], ""
    rules = tree.get("rules") or []
    flat = all(isinstance(r, dict) and "field" in r and not isinstance(r.get("value"), dict)
               and "window_days" not in r for r in rules)
    if not flat:
        return tree.get("op", "and"), [], json.dumps(tree, indent=2)
    rows = []
    for rule in rules:
        value = rule.get("value", "")
        text = ", ".join(_shown(v) for v in value) if isinstance(value, list) else _shown(value)
        rows.append({"field": rule["field"], "operator": rule.get("operator", "eq"),
                     "value": text})
    return tree.get("op", "and"), rows, ""
