"""Validation of a flow JSON definition (Meta's Flow JSON), before it reaches Meta.

What Meta checks first, we check here and answer 422 VALIDATION_ERROR naming the path:
`version` a string such as "6.0"; `screens` a non-empty list (at most 50) of objects with
an upper-case `id` (letters, digits, underscores; unique; not `SUCCESS`, reserved), a
`layout` `{"type": "SingleColumnLayout", "children": [...]}` whose children are objects
with a `type`; at least one screen `terminal: true`; `routing_model` (optional) maps screen
ids to lists of known screen ids. A component with a `name` is a field of its screen
(what the funnel counts, see selectors.flow_funnel).
"""

from __future__ import annotations

import re
from typing import Any

from platform_core.errors import APIError

_SCREEN_ID = re.compile(r"^[A-Z][A-Z0-9_]{0,63}$")
MAX_SCREENS = 50
MAX_BYTES = 100_000


def _fail(issues: list[dict[str, str]]) -> APIError:
    return APIError("VALIDATION_ERROR", issues[0]["message"], details={"issues": issues})


def screen_fields(screen: dict[str, Any]) -> list[str]:
    """The `name`s of a screen's input components (nested forms included)."""
    names: list[str] = []

    def walk(children: Any) -> None:
        for child in children if isinstance(children, list) else []:
            if isinstance(child, dict):
                if isinstance(child.get("name"), str) and child.get("type") != "Form":
                    names.append(child["name"])
                walk(child.get("children"))

    walk((screen.get("layout") or {}).get("children"))
    return names


def validate(definition: Any, *, field: str = "flow_json") -> dict[str, Any]:
    import json

    issues: list[dict[str, str]] = []
    if not isinstance(definition, dict):
        raise _fail([{"field": field, "message": "The flow JSON is an object."}])
    if len(json.dumps(definition)) > MAX_BYTES:
        raise _fail([{"field": field, "message": "The flow JSON is larger than 100 KB."}])
    version = definition.get("version")
    if not isinstance(version, str) or not re.match(r"^\d+\.\d+$", version):
        issues.append({"field": f"{field}.version", "message": 'version is a string like "6.0".'})
    screens = definition.get("screens")
    if not isinstance(screens, list) or not screens:
        issues.append({"field": f"{field}.screens", "message": "screens is a non-empty list."})
        raise _fail(issues)
    if len(screens) > MAX_SCREENS:
        issues.append({"field": f"{field}.screens",
                       "message": f"At most {MAX_SCREENS} screens."})
    ids: list[str] = []
    terminal = False
    for i, screen in enumerate(screens):
        path = f"{field}.screens[{i}]"
        if not isinstance(screen, dict):
            issues.append({"field": path, "message": "A screen is an object."})
            continue
        sid = screen.get("id")
        if not isinstance(sid, str) or not _SCREEN_ID.match(sid) or sid == "SUCCESS":
            issues.append({"field": f"{path}.id", "message": "A screen id is upper-case "
                           "letters, digits and underscores (SUCCESS is reserved)."})
        elif sid in ids:
            issues.append({"field": f"{path}.id", "message": f"Duplicate screen id {sid}."})
        else:
            ids.append(sid)
        layout = screen.get("layout")
        if not isinstance(layout, dict) or layout.get("type") != "SingleColumnLayout" or \
                not isinstance(layout.get("children"), list):
            issues.append({"field": f"{path}.layout", "message": 'layout is {"type": '
                           '"SingleColumnLayout", "children": [...]}.'})
        else:
            for j, child in enumerate(layout["children"]):
                if not isinstance(child, dict) or not isinstance(child.get("type"), str):
                    issues.append({"field": f"{path}.layout.children[{j}]",
                                   "message": "A component is an object with a type."})
        if screen.get("terminal") is True:
            terminal = True
    if not terminal:
        issues.append({"field": f"{field}.screens",
                       "message": "At least one screen must be terminal."})
    routing = definition.get("routing_model")
    if routing is not None:
        if not isinstance(routing, dict):
            issues.append({"field": f"{field}.routing_model", "message": "An object."})
        else:
            for source, targets in routing.items():
                if source not in ids or not isinstance(targets, list) or any(
                        t not in ids for t in targets):
                    issues.append({"field": f"{field}.routing_model.{source}",
                                   "message": "Routes name known screen ids."})
    if issues:
        raise _fail(issues)
    return definition
