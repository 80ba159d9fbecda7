"""The rich template shape: validation, positional placeholders, rendering, provider form.

Components (Document 2, 2.3, the WhatsApp rich shape), each type at most once:

- `HEADER`: `format` TEXT (default), IMAGE, VIDEO or DOCUMENT. TEXT needs `text` (at most
  60 characters, at most one placeholder); media formats carry no text, optionally a
  `media_url` (https) used when the template is sent.
- `BODY` (required): `text`, 1-1024 characters.
- `FOOTER`: `text`, 1-60 characters, no placeholders.
- `BUTTONS`: `buttons`, 1-10 items of `type` QUICK_REPLY (`text`), URL (`text`, `url`,
  http(s), at most one placeholder, at its end) or PHONE_NUMBER (`text`, `phone_number`
  in E.164); at most 2 URL and 1 PHONE_NUMBER buttons; labels 1-25 characters without
  placeholders.

Placeholders are positional `{{1}}`, `{{2}}`... shared by the whole template: a send's
`variables` object keyed `"1"`, `"2"` fills every occurrence of that number in any
component. The numbers used must run contiguously from 1: `{{1}} {{3}}` without `{{2}}`
is refused, naming the path of the component where the gap shows (`components.1.text`).
Any other `{{...}}` (named placeholders, `{{ }}`) is refused too.

Providers number placeholders per component (WhatsApp Cloud API), so
`provider_components` renumbers each component's placeholders 1..k in order of their
shared numbers, and `send_parameters` gives the matching per-component parameters.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable, Mapping
from typing import Any

from platform_core.errors import ValidationIssues

PLACEHOLDER = re.compile(r"\{\{(\d+)\}\}")
ANY_BRACES = re.compile(r"\{\{(.*?)\}\}")
E164 = re.compile(r"^\+[1-9]\d{6,14}$")

COMPONENT_TYPES = ("HEADER", "BODY", "FOOTER", "BUTTONS")
HEADER_FORMATS = ("TEXT", "IMAGE", "VIDEO", "DOCUMENT")
BUTTON_TYPES = ("QUICK_REPLY", "URL", "PHONE_NUMBER")

HEADER_TEXT_MAX = 60
BODY_TEXT_MAX = 1024
FOOTER_TEXT_MAX = 60
BUTTON_TEXT_MAX = 25
BUTTONS_MAX = 10
URL_BUTTONS_MAX = 2
PHONE_BUTTONS_MAX = 1
CONTENT_MAX = 10_000
MAX_PLACEHOLDER = 100


Issues = ValidationIssues  # "The request is not valid." when several


def placeholders_in(text: str) -> list[int]:
    """The placeholder numbers of `text` in order of appearance (repeats kept)."""
    return [int(n) for n in PLACEHOLDER.findall(text or "")]


def _check_braces(text: str, field: str, issues: Issues) -> None:
    for inner in ANY_BRACES.findall(text or ""):
        if not inner.isdigit():
            issues.add(field, f"Placeholder {{{{{inner}}}}} is not positional; use {{{{1}}}}, "
                              "{{2}}, ... .")
        elif int(inner) < 1 or int(inner) > MAX_PLACEHOLDER:
            issues.add(field, f"Placeholder numbers run from 1 to {MAX_PLACEHOLDER}.")


def check_contiguous(fields: Iterable[tuple[str, str]], issues: Issues) -> int:
    """Placeholders of all `(path, text)` pairs must be 1..n. Returns n (0 when none)."""
    first_seen: dict[int, str] = {}
    for path, text in fields:
        _check_braces(text, path, issues)
        for number in placeholders_in(text):
            if 1 <= number <= MAX_PLACEHOLDER:
                first_seen.setdefault(number, path)
    if not first_seen:
        return 0
    highest = max(first_seen)
    missing = [n for n in range(1, highest + 1) if n not in first_seen]
    if missing:
        # Name the component whose number lies beyond the first gap.
        beyond = min(n for n in first_seen if n > missing[0])
        gaps = ", ".join(f"{{{{{n}}}}}" for n in missing)
        issues.add(first_seen[beyond],
                   f"Placeholders must run contiguously from {{{{1}}}}: {gaps} missing "
                   f"before {{{{{beyond}}}}}.")
    return highest


def _text(value: Any, field: str, issues: Issues, *, maximum: int, required: bool = True
          ) -> str | None:
    if value is None or value == "":
        if required:
            issues.add(field, "This field is required.")
        return None
    if not isinstance(value, str):
        issues.add(field, "Must be a string.")
        return None
    if not value.strip():
        issues.add(field, "Must not be blank.")
        return None
    if len(value) > maximum:
        issues.add(field, f"At most {maximum} characters.")
        return None
    return value


def _https_url(value: Any, field: str, issues: Issues) -> str | None:
    if not isinstance(value, str) or not re.match(r"^https?://[^\s/$.?#][^\s]*$", value):
        issues.add(field, "A valid http(s) URL is required.")
        return None
    if len(value) > 2000:
        issues.add(field, "At most 2000 characters.")
        return None
    return value


def _no_placeholders(text: str | None, field: str, issues: Issues) -> None:
    if text and ANY_BRACES.search(text):
        issues.add(field, "Placeholders are not allowed here.")


def normalize_components(raw: Any, *, field: str = "components") -> tuple[list[dict], int]:
    """Validate the rich shape; answer the normalized components and the placeholder count.

    Raises VALIDATION_ERROR (422) listing every issue with its path.
    """
    issues = Issues()
    if not isinstance(raw, list) or not raw:
        issues.add(field, "A non-empty list of components is required.")
        issues.raise_if_any()
    normalized: list[dict] = []
    seen: dict[str, int] = {}
    texts: list[tuple[str, str]] = []
    for index, item in enumerate(raw):
        path = f"{field}.{index}"
        if not isinstance(item, dict):
            issues.add(path, "Each component is an object.")
            continue
        kind = str(item.get("type") or "").upper()
        if kind not in COMPONENT_TYPES:
            issues.add(f"{path}.type", f"type is one of {', '.join(COMPONENT_TYPES)}.")
            continue
        if kind in seen:
            issues.add(f"{path}.type", f"Only one {kind} component is allowed.")
            continue
        seen[kind] = index
        component: dict[str, Any] = {"type": kind}
        if kind == "HEADER":
            fmt = str(item.get("format") or "TEXT").upper()
            if fmt not in HEADER_FORMATS:
                issues.add(f"{path}.format", f"format is one of {', '.join(HEADER_FORMATS)}.")
                continue
            component["format"] = fmt
            if fmt == "TEXT":
                text = _text(item.get("text"), f"{path}.text", issues, maximum=HEADER_TEXT_MAX)
                if text is not None:
                    if len(set(placeholders_in(text))) > 1:
                        issues.add(f"{path}.text", "A text header takes at most one placeholder.")
                    component["text"] = text
                    texts.append((f"{path}.text", text))
            else:
                if item.get("text"):
                    issues.add(f"{path}.text", f"A {fmt} header has no text.")
                if item.get("media_url") is not None:
                    url = _https_url(item.get("media_url"), f"{path}.media_url", issues)
                    if url:
                        component["media_url"] = url
        elif kind == "BODY":
            text = _text(item.get("text"), f"{path}.text", issues, maximum=BODY_TEXT_MAX)
            if text is not None:
                component["text"] = text
                texts.append((f"{path}.text", text))
        elif kind == "FOOTER":
            text = _text(item.get("text"), f"{path}.text", issues, maximum=FOOTER_TEXT_MAX)
            _no_placeholders(text, f"{path}.text", issues)
            if text is not None:
                component["text"] = text
        else:
            component["buttons"] = _buttons(item.get("buttons"), f"{path}.buttons", issues,
                                            texts)
        if isinstance(item.get("example"), dict | list):
            component["example"] = item["example"]
        normalized.append(component)
    if "BODY" not in seen:
        issues.add(field, "A BODY component is required.")
    count = check_contiguous(texts, issues)
    issues.raise_if_any()
    return normalized, count


def _buttons(raw: Any, path: str, issues: Issues, texts: list[tuple[str, str]]) -> list[dict]:
    if not isinstance(raw, list) or not raw:
        issues.add(path, "A non-empty list of buttons is required.")
        return []
    if len(raw) > BUTTONS_MAX:
        issues.add(path, f"At most {BUTTONS_MAX} buttons.")
        return []
    buttons: list[dict] = []
    counts = {t: 0 for t in BUTTON_TYPES}
    for index, item in enumerate(raw):
        bpath = f"{path}.{index}"
        if not isinstance(item, dict):
            issues.add(bpath, "Each button is an object.")
            continue
        kind = str(item.get("type") or "").upper()
        if kind not in BUTTON_TYPES:
            issues.add(f"{bpath}.type", f"type is one of {', '.join(BUTTON_TYPES)}.")
            continue
        counts[kind] += 1
        text = _text(item.get("text"), f"{bpath}.text", issues, maximum=BUTTON_TEXT_MAX)
        _no_placeholders(text, f"{bpath}.text", issues)
        button: dict[str, Any] = {"type": kind, "text": text}
        if kind == "URL":
            url = _https_url(item.get("url"), f"{bpath}.url", issues)
            if url:
                numbers = placeholders_in(url)
                if len(numbers) > 1 or (numbers and not re.search(r"\{\{\d+\}\}$", url)):
                    issues.add(f"{bpath}.url",
                               "A URL button takes at most one placeholder, at the end.")
                button["url"] = url
                texts.append((f"{bpath}.url", url))
        elif kind == "PHONE_NUMBER":
            phone = item.get("phone_number")
            if not isinstance(phone, str) or not E164.match(phone):
                issues.add(f"{bpath}.phone_number", "An E.164 phone number is required.")
            else:
                button["phone_number"] = phone
        if isinstance(item.get("example"), list):
            button["example"] = item["example"]
        buttons.append(button)
    if counts["URL"] > URL_BUTTONS_MAX:
        issues.add(path, f"At most {URL_BUTTONS_MAX} URL buttons.")
    if counts["PHONE_NUMBER"] > PHONE_BUTTONS_MAX:
        issues.add(path, f"At most {PHONE_BUTTONS_MAX} PHONE_NUMBER button.")
    return buttons


def check_content(content: Any, subject: Any = None, *, content_field: str = "content",
                  subject_field: str = "subject", required: bool = True) -> int:
    """Validate a plain-content template (sms, mms, email); answer its placeholder count."""
    issues = Issues()
    text = _text(content, content_field, issues, maximum=CONTENT_MAX, required=required)
    fields = [(content_field, text)] if text else []
    if subject:
        subj = _text(subject, subject_field, issues, maximum=998, required=False)
        if subj:
            fields.insert(0, (subject_field, subj))
    count = check_contiguous(fields, issues)
    issues.raise_if_any()
    return count


# --- Rendering --------------------------------------------------------------------------


def substitute(text: str, values: Mapping[str, str]) -> str:
    return PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), text or "")


def render_components(components: list[dict], values: Mapping[str, str]) -> list[dict]:
    """The components with every placeholder replaced by its value."""
    rendered = copy.deepcopy(components)
    for component in rendered:
        component.pop("example", None)
        if "text" in component:
            component["text"] = substitute(component["text"], values)
        for button in component.get("buttons", []):
            button.pop("example", None)
            if "url" in button:
                button["url"] = substitute(button["url"], values)
    return rendered


def body_text(components: list[dict]) -> str:
    for component in components:
        if component.get("type") == "BODY":
            return component.get("text", "")
    return ""


def _renumber(text: str) -> tuple[str, list[int]]:
    """Per-component numbering: the shared numbers of `text` mapped to 1..k in order."""
    order: list[int] = []
    for number in placeholders_in(text):
        if number not in order:
            order.append(number)
    order.sort()
    mapping = {n: i + 1 for i, n in enumerate(order)}
    return PLACEHOLDER.sub(lambda m: f"{{{{{mapping[int(m.group(1))]}}}}}", text), order


def provider_components(components: list[dict]) -> list[dict]:
    """The WhatsApp Cloud API form (submission): per-component numbering and examples."""
    result: list[dict] = []
    for component in components:
        kind = component["type"]
        out: dict[str, Any] = {"type": kind}
        if kind == "HEADER":
            out["format"] = component.get("format", "TEXT")
            if out["format"] == "TEXT":
                text, order = _renumber(component["text"])
                out["text"] = text
                if order:
                    out["example"] = component.get("example") or {
                        "header_text": [f"sample {n}" for n in order]}
            elif component.get("example"):
                out["example"] = component["example"]
        elif kind == "BODY":
            text, order = _renumber(component["text"])
            out["text"] = text
            if order:
                out["example"] = component.get("example") or {
                    "body_text": [[f"sample {n}" for n in order]]}
        elif kind == "FOOTER":
            out["text"] = component["text"]
        else:
            buttons = []
            for button in component["buttons"]:
                item = {"type": button["type"], "text": button["text"]}
                if "url" in button:
                    url, order = _renumber(button["url"])
                    item["url"] = url
                    if order:
                        item["example"] = button.get("example") or [
                            PLACEHOLDER.sub("sample", button["url"])]
                if "phone_number" in button:
                    item["phone_number"] = button["phone_number"]
                buttons.append(item)
            out["buttons"] = buttons
        result.append(out)
    return result


def send_parameters(components: list[dict], values: Mapping[str, str]) -> list[dict]:
    """Per-component send parameters in the WhatsApp Cloud API form (`template.components`)."""
    result: list[dict] = []
    for component in components:
        kind = component["type"]
        if kind == "HEADER":
            fmt = component.get("format", "TEXT")
            if fmt == "TEXT":
                _text_out, order = _renumber(component.get("text", ""))
                if order:
                    result.append({"type": "header", "parameters": [
                        {"type": "text", "text": values[str(n)]} for n in order]})
            elif component.get("media_url"):
                media = fmt.lower()
                result.append({"type": "header", "parameters": [
                    {"type": media, media: {"link": component["media_url"]}}]})
        elif kind == "BODY":
            _text_out, order = _renumber(component.get("text", ""))
            if order:
                result.append({"type": "body", "parameters": [
                    {"type": "text", "text": values[str(n)]} for n in order]})
        elif kind == "BUTTONS":
            for index, button in enumerate(component["buttons"]):
                if button["type"] == "URL":
                    _url, order = _renumber(button.get("url", ""))
                    if order:
                        result.append({"type": "button", "sub_type": "url",
                                       "index": str(index), "parameters": [
                                           {"type": "text", "text": values[str(n)]}
                                           for n in order]})
    return result


def translatable_texts(components: list[dict]) -> list[str]:
    """Texts `localize` translates, in a fixed order: header text, body, footer, labels."""
    texts: list[str] = []
    for component in components:
        if component["type"] in ("HEADER", "BODY", "FOOTER") and component.get("text"):
            texts.append(component["text"])
        for button in component.get("buttons", []):
            texts.append(button["text"])
    return texts


def with_translations(components: list[dict], translated: list[str]) -> list[dict]:
    """`components` with the texts of `translatable_texts` replaced, in the same order."""
    result = copy.deepcopy(components)
    values = iter(translated)
    for component in result:
        component.pop("example", None)
        if component["type"] in ("HEADER", "BODY", "FOOTER") and component.get("text"):
            component["text"] = next(values)
        for button in component.get("buttons", []):
            button.pop("example", None)
            button["text"] = next(values)
    return result
