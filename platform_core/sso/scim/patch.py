"""PATCH (RFC 7644 section 3.5.2) applied to a resource's JSON document.

The resource is turned into its document of writable attributes, the operations are
applied here, and the result is saved exactly as a PUT of that document would be, so both
paths validate alike. Attribute names are case-insensitive; a path may carry the schema URN
prefix, a value filter (`emails[type eq "work"].value`, `members[value eq "usr_…"]`) and a
sub-attribute. Attributes this server does not know are ignored (identity providers send
extension attributes freely); read-only ones are refused.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from typing import Any

from .errors import ScimError


@dataclass(frozen=True)
class AttrSpec:
    name: str
    multi: bool = False
    sub: tuple[str, ...] = ()
    read_only: bool = False
    key: str = "value"  # identity of a multi-valued item (for add de-duplication)
    extra: dict = field(default_factory=dict)

    @property
    def complex(self) -> bool:
        return bool(self.sub)

    def canonical_sub(self, name: str) -> str | None:
        for sub in self.sub:
            if sub.lower() == name.lower():
                return sub
        return None


def _bad_path(detail: str) -> ScimError:
    return ScimError(400, detail, "invalidPath")


def _no_target(detail: str) -> ScimError:
    return ScimError(400, detail, "noTarget")


_PATH_RE = re.compile(
    r"^(?P<attr>[A-Za-z$][\w$-]*)(?:\[(?P<filter>.+)\])?(?:\.(?P<sub>[A-Za-z$][\w$-]*))?$"
)
_COND_RE = re.compile(
    r"\s*(?P<attr>[A-Za-z$][\w$-]*)\s+(?P<op>eq|ne|co|sw|ew|pr)"
    r'(?:\s+(?P<value>"(?:[^"\\]|\\.)*"|true|false|null|-?\d+(?:\.\d+)?))?\s*',
    re.I,
)


def _parse_filter(text: str) -> list[list[tuple[str, str, Any]]]:
    """A value filter as OR-of-ANDs of (sub, op, value); enough for what IdPs send."""
    groups: list[list[tuple[str, str, Any]]] = [[]]
    rest = text.strip()
    while rest:
        match = _COND_RE.match(rest)
        if not match:
            raise ScimError(400, f"Cannot read the value filter {text!r}.", "invalidFilter")
        raw = match.group("value")
        value: Any = None
        if raw is not None:
            if raw.startswith('"'):
                value = re.sub(r"\\(.)", r"\1", raw[1:-1])
            elif raw.lower() in ("true", "false"):
                value = raw.lower() == "true"
            elif raw.lower() != "null":
                value = float(raw) if "." in raw else int(raw)
        elif match.group("op").lower() != "pr":
            raise ScimError(400, f"Cannot read the value filter {text!r}.", "invalidFilter")
        groups[-1].append((match.group("attr"), match.group("op").lower(), value))
        rest = rest[match.end() :]
        joiner = re.match(r"(and|or)\s+", rest, re.I)
        if joiner:
            if joiner.group(1).lower() == "or":
                groups.append([])
            rest = rest[joiner.end() :]
        elif rest:
            raise ScimError(400, f"Cannot read the value filter {text!r}.", "invalidFilter")
    return groups


def _matches(item: Any, groups: list[list[tuple[str, str, Any]]]) -> bool:
    if not isinstance(item, dict):
        return False
    lowered = {str(k).lower(): v for k, v in item.items()}

    def test(attr: str, op: str, value: Any) -> bool:
        actual = lowered.get(attr.lower())
        if op == "pr":
            return actual not in (None, "", [])
        if isinstance(actual, str) and isinstance(value, str):
            actual_s, value_s = actual.casefold(), value.casefold()
            return {
                "eq": actual_s == value_s,
                "ne": actual_s != value_s,
                "co": value_s in actual_s,
                "sw": actual_s.startswith(value_s),
                "ew": actual_s.endswith(value_s),
            }[op]
        if op == "eq":
            return actual == value
        if op == "ne":
            return actual != value
        return False

    return any(all(test(*cond) for cond in group) for group in groups)


def _strip_urn(path: str, schema_urn: str) -> str:
    if path.lower().startswith(schema_urn.lower() + ":"):
        return path[len(schema_urn) + 1 :]
    return path


class Patcher:
    def __init__(self, specs: list[AttrSpec], schema_urn: str) -> None:
        self.specs = {spec.name.lower(): spec for spec in specs}
        self.schema_urn = schema_urn

    def apply(self, document: dict[str, Any], body: Any) -> dict[str, Any]:
        if not isinstance(body, dict):
            raise ScimError(400, "The PATCH body must be a PatchOp object.", "invalidSyntax")
        operations = body.get("Operations") or body.get("operations")
        if not isinstance(operations, list) or not operations:
            raise ScimError(400, "A PatchOp needs a non-empty Operations list.", "invalidSyntax")
        doc = copy.deepcopy(document)
        for operation in operations:
            if not isinstance(operation, dict):
                raise ScimError(400, "Each operation must be an object.", "invalidSyntax")
            op = str(operation.get("op", "")).lower()
            if op not in ("add", "replace", "remove"):
                raise ScimError(400, f"Unknown PATCH op {operation.get('op')!r}.", "invalidSyntax")
            path = operation.get("path")
            value = operation.get("value")
            if path in (None, ""):
                if op == "remove":
                    raise _no_target("remove needs a path.")
                if not isinstance(value, dict):
                    raise ScimError(
                        400, f"{op} without a path needs an object value.", "invalidValue"
                    )
                for key, item in value.items():
                    self._apply_path(doc, op, str(key), item)
            else:
                if not isinstance(path, str):
                    raise _bad_path("path must be a string.")
                self._apply_path(doc, op, path, value)
        return doc

    def _apply_path(self, doc: dict, op: str, path: str, value: Any) -> None:
        path = _strip_urn(path.strip(), self.schema_urn)
        if path.lower().startswith("urn:"):
            return  # an extension this server does not implement
        match = _PATH_RE.match(path)
        if not match:
            raise _bad_path(f"Cannot read the path {path!r}.")
        spec = self.specs.get(match.group("attr").lower())
        if spec is None:
            if match.group("attr").lower() in ("id", "meta", "schemas"):
                raise ScimError(400, f"{match.group('attr')} is read-only.", "mutability")
            return  # unknown attribute: ignored
        if spec.read_only:
            raise ScimError(400, f"{spec.name} is read-only.", "mutability")
        sub = match.group("sub")
        if sub is not None:
            canonical = spec.canonical_sub(sub)
            if canonical is None:
                raise _bad_path(f"{spec.name} has no sub-attribute {sub!r}.")
            sub = canonical
        filter_text = match.group("filter")
        if filter_text is not None:
            if not spec.multi:
                raise _bad_path(f"{spec.name} is not multi-valued; it takes no filter.")
            self._apply_filtered(doc, op, spec, _parse_filter(filter_text), sub, value)
            return
        if sub is not None:
            if spec.multi:
                raise _bad_path(
                    f"Name the {spec.name} value to change with a filter, like "
                    f'{spec.name}[type eq "work"].{sub}.'
                )
            current = dict(doc.get(spec.name) or {})
            if op == "remove":
                current.pop(sub, None)
            else:
                current[sub] = value
            doc[spec.name] = current or None
            return
        if op == "remove":
            if spec.multi and value not in (None, [], {}):
                # Remove the listed values (how several IdPs remove group members).
                items = value if isinstance(value, list) else [value]
                keys = {str(self._key(spec, i)).casefold() for i in items}
                doc[spec.name] = [
                    i
                    for i in doc.get(spec.name) or []
                    if str(self._key(spec, i)).casefold() not in keys
                ]
            else:
                doc[spec.name] = [] if spec.multi else None
            return
        if spec.multi:
            items = value if isinstance(value, list) else [value]
            items = [self._canonical_item(spec, i) for i in items if i is not None]
            if op == "add":
                existing = list(doc.get(spec.name) or [])
                seen = {str(self._key(spec, i)).casefold() for i in existing}
                for item in items:
                    key = str(self._key(spec, item)).casefold()
                    if key not in seen or self._key(spec, item) is None:
                        existing.append(item)
                        seen.add(key)
                doc[spec.name] = existing
            else:
                doc[spec.name] = items
            return
        if spec.complex:
            if value is None:
                doc[spec.name] = None
                return
            if not isinstance(value, dict):
                raise ScimError(400, f"{spec.name} takes an object.", "invalidValue")
            merged = dict(doc.get(spec.name) or {})
            merged.update(self._canonical_item(spec, value))
            doc[spec.name] = merged
            return
        doc[spec.name] = value

    def _apply_filtered(
        self, doc: dict, op: str, spec: AttrSpec, groups, sub: str | None, value: Any
    ) -> None:
        items = list(doc.get(spec.name) or [])
        hits = [i for i, item in enumerate(items) if _matches(item, groups)]
        if not hits:
            if op == "remove":
                return
            raise _no_target(f"No {spec.name} value matches the filter.")
        if op == "remove":
            if sub is None:
                items = [item for i, item in enumerate(items) if i not in hits]
            else:
                for i in hits:
                    items[i] = {k: v for k, v in items[i].items() if k != sub}
        else:
            for i in hits:
                if sub is not None:
                    items[i] = {**items[i], sub: value}
                elif isinstance(value, dict):
                    items[i] = {**items[i], **self._canonical_item(spec, value)}
                else:
                    raise ScimError(400, f"{spec.name} values are objects.", "invalidValue")
        doc[spec.name] = items

    def _canonical_item(self, spec: AttrSpec, item: Any) -> Any:
        if not spec.complex or not isinstance(item, dict):
            return item
        out = {}
        for key, val in item.items():
            canonical = spec.canonical_sub(str(key))
            if canonical is not None:
                out[canonical] = val
        return out

    @staticmethod
    def _key(spec: AttrSpec, item: Any) -> Any:
        if isinstance(item, dict):
            lowered = {str(k).lower(): v for k, v in item.items()}
            return lowered.get(spec.key.lower())
        return item
