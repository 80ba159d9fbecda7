"""Validation of interactive message content, before anything is stored (Document 2, 4.5
and 8): reply buttons (1-3, each `id` and `title`) or a list menu (`button` and 1-10
`sections` of 1-10 `rows`), plus the product and product-list shapes of the catalog sends.
Every limit answers 422 VALIDATION_ERROR naming the field. The result is the Cloud API's
`interactive` object, which the WhatsApp adapter sends as is.
"""

from __future__ import annotations

from typing import Any

from platform_core.errors import APIError

MAX_BUTTONS = 3
MAX_SECTIONS = 10
MAX_ROWS = 10
MAX_LIST_PRODUCTS = 30
BODY_MAX = 1024
HEADER_MAX = 60
FOOTER_MAX = 60
BUTTON_TITLE_MAX = 20
BUTTON_ID_MAX = 256
LIST_BUTTON_MAX = 20
SECTION_TITLE_MAX = 24
ROW_ID_MAX = 200
ROW_TITLE_MAX = 24
ROW_DESCRIPTION_MAX = 72


def invalid(field: str, message: str) -> APIError:
    return APIError("VALIDATION_ERROR", message,
                    details={"issues": [{"field": field, "message": message}]})


def text(value: Any, field: str, limit: int, *, required: bool = True) -> str | None:
    if value is None or value == "":
        if required:
            raise invalid(field, f"{field} is required.")
        return None
    if not isinstance(value, str) or not value.strip():
        raise invalid(field, f"{field} is a non-empty string.")
    if len(value) > limit:
        raise invalid(field, f"{field} is at most {limit} characters.")
    return value


def envelope(body: Any, header: Any, footer: Any, *, body_required: bool = True
             ) -> dict[str, Any]:
    """`body`, optional text `header` and `footer` of an interactive message."""
    out: dict[str, Any] = {}
    body_text = text(body, "body", BODY_MAX, required=body_required)
    if body_text:
        out["body"] = {"text": body_text}
    header_text = text(header, "header", HEADER_MAX, required=False)
    if header_text:
        out["header"] = {"type": "text", "text": header_text}
    footer_text = text(footer, "footer", FOOTER_MAX, required=False)
    if footer_text:
        out["footer"] = {"text": footer_text}
    return out


def _buttons(buttons: Any) -> dict[str, Any]:
    if not isinstance(buttons, list) or not buttons:
        raise invalid("action.buttons", "buttons is a non-empty list.")
    if len(buttons) > MAX_BUTTONS:
        raise invalid("action.buttons", f"At most {MAX_BUTTONS} reply buttons.")
    ids: set[str] = set()
    titles: set[str] = set()
    out = []
    for i, button in enumerate(buttons):
        path = f"action.buttons[{i}]"
        if not isinstance(button, dict):
            raise invalid(path, 'A button is {"id", "title"}.')
        bid = text(button.get("id"), f"{path}.id", BUTTON_ID_MAX)
        title = text(button.get("title"), f"{path}.title", BUTTON_TITLE_MAX)
        if bid in ids:
            raise invalid(f"{path}.id", "Button ids are unique.")
        if title in titles:
            raise invalid(f"{path}.title", "Button titles are unique.")
        ids.add(bid)
        titles.add(title)
        out.append({"type": "reply", "reply": {"id": bid, "title": title}})
    return {"buttons": out}


def _list(action: dict[str, Any]) -> dict[str, Any]:
    button = text(action.get("button"), "action.button", LIST_BUTTON_MAX)
    sections = action.get("sections")
    if not isinstance(sections, list) or not sections:
        raise invalid("action.sections", "sections is a non-empty list.")
    if len(sections) > MAX_SECTIONS:
        raise invalid("action.sections", f"At most {MAX_SECTIONS} sections.")
    row_ids: set[str] = set()
    out = []
    for i, section in enumerate(sections):
        path = f"action.sections[{i}]"
        if not isinstance(section, dict):
            raise invalid(path, 'A section is {"title", "rows"}.')
        title = text(section.get("title"), f"{path}.title", SECTION_TITLE_MAX,
                     required=len(sections) > 1)
        rows = section.get("rows")
        if not isinstance(rows, list) or not rows:
            raise invalid(f"{path}.rows", "rows is a non-empty list.")
        if len(rows) > MAX_ROWS:
            raise invalid(f"{path}.rows", f"At most {MAX_ROWS} rows per section.")
        clean_rows = []
        for j, row in enumerate(rows):
            rpath = f"{path}.rows[{j}]"
            if not isinstance(row, dict):
                raise invalid(rpath, 'A row is {"id", "title", "description"?}.')
            rid = text(row.get("id"), f"{rpath}.id", ROW_ID_MAX)
            if rid in row_ids:
                raise invalid(f"{rpath}.id", "Row ids are unique across sections.")
            row_ids.add(rid)
            clean = {"id": rid, "title": text(row.get("title"), f"{rpath}.title",
                                              ROW_TITLE_MAX)}
            description = text(row.get("description"), f"{rpath}.description",
                               ROW_DESCRIPTION_MAX, required=False)
            if description:
                clean["description"] = description
            clean_rows.append(clean)
        item: dict[str, Any] = {"rows": clean_rows}
        if title:
            item["title"] = title
        out.append(item)
    return {"button": button, "sections": out}


def reply_action(action: Any) -> tuple[str, dict[str, Any]]:
    """("button" | "list", the Cloud API action) of a send-interactive `action`."""
    if not isinstance(action, dict):
        raise invalid("action", 'action is {"buttons": [...]} or {"button", "sections"}.')
    has_buttons = "buttons" in action
    has_list = "sections" in action or "button" in action
    if has_buttons and has_list:
        raise invalid("action", "Give either buttons or a list (button and sections), "
                                "not both.")
    if has_buttons:
        return "button", _buttons(action.get("buttons"))
    if has_list:
        return "list", _list(action)
    raise invalid("action", 'action is {"buttons": [...]} or {"button", "sections"}.')
