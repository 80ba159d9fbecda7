"""The segment filter tree (0-conventions.md section 5), validated and compiled to SQL.

    {"op": "and" | "or", "rules": [ {field, operator, value[, window_days]} | nested tree ]}

`parse_filters` checks a tree and answers 422 VALIDATION_ERROR with one issue per fault,
each naming its path (`filters.rules.1.operator`). `compile_filters` turns a parsed tree
into one `Q` over `contacts.Contact`: list membership and event counts are correlated
`EXISTS` / `COUNT` subqueries, so a segment is always a single SQL statement and no row
is ever filtered in Python.

Fields and what each operator means:

- `first_name`, `last_name`, `email`, `phone` (text): `eq`/`neq`/`in` compare whole
  values (names case-insensitively, emails lower-cased, phones normalized to E.164 with
  the organization's default country), `contains`/`starts_with` match fragments
  case-insensitively, `exists`/`not_exists` test for a non-empty value.
- `created_at`, `updated_at` (time): `eq`/`neq` (a date means that whole UTC day),
  `gt`/`gte`/`lt`/`lte`; the value is an ISO 8601 date or date-time, or
  `{"days_ago": N}` (relative, so a saved segment rolls forward on refresh).
- `custom_fields.<key>` (JSON value): `eq`/`neq`/`in` compare JSON values,
  `contains`/`starts_with` the value's text, `gt`/`gte`/`lt`/`lte` compare numbers with
  numbers and strings with strings (values of another JSON type never match),
  `exists`/`not_exists` test the key.
- `tags`: `eq`/`neq` (has / has not the tag), `in` (has any), `contains`/`starts_with`
  (some tag contains / starts with the fragment), `exists`/`not_exists` (any tag at all).
- `list_id`: `eq`/`neq`/`in` membership of the given list(s), `exists`/`not_exists`
  membership of any list.
- `event.<name>.count`: how many tracked events of that name the contact has (within
  `window_days`, 1-3650, when given; all time otherwise), compared with `eq`, `neq`,
  `gt`, `gte`, `lt`, `lte`, `in`; `exists`/`not_exists` mean at least one / none.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import Any

import phonenumbers
from django.db import connection
from django.db.models import (
    CharField,
    Count,
    Exists,
    Func,
    IntegerField,
    JSONField,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    TextField,
    Value,
)
from django.db.models.fields.json import (
    KeyTransform,
    KeyTransformExact,
    KeyTransformGt,
    KeyTransformGte,
    KeyTransformIContains,
    KeyTransformIStartsWith,
    KeyTransformLt,
    KeyTransformLte,
)
from django.db.models.functions import Cast, Coalesce
from django.db.models.lookups import (
    Exact,
    GreaterThan,
    GreaterThanOrEqual,
    IContains,
    In,
    LessThan,
    LessThanOrEqual,
)
from django.utils import timezone

from contacts.models import Contact, ListMembership
from platform_core.errors import ValidationIssues
from platform_core.events.models import TrackedEvent

MAX_DEPTH = 5  # the top-level tree is depth 1
MAX_RULES = 100  # leaf rules in one tree
MAX_IN_VALUES = 1000
MAX_TEXT = 1000
MAX_WINDOW_DAYS = 3650
MAX_DAYS_AGO = 36500

OPERATORS = (
    "eq", "neq", "contains", "starts_with", "in", "gt", "gte", "lt", "lte", "exists",
    "not_exists",
)
TEXT_FIELDS = ("first_name", "last_name", "email", "phone")
TIME_FIELDS = ("created_at", "updated_at")
FIELDS_HELP = (
    "first_name, last_name, email, phone, created_at, updated_at, custom_fields.<key>, "
    "tags, list_id, event.<name>.count"
)

_ALLOWED = {
    "text": {"eq", "neq", "contains", "starts_with", "in", "exists", "not_exists"},
    "time": {"eq", "neq", "gt", "gte", "lt", "lte", "exists", "not_exists"},
    "custom": set(OPERATORS),
    "tags": {"eq", "neq", "contains", "starts_with", "in", "exists", "not_exists"},
    "list": {"eq", "neq", "in", "exists", "not_exists"},
    "event": {"eq", "neq", "gt", "gte", "lt", "lte", "in", "exists", "not_exists"},
}
_CUSTOM_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$")
_EVENT_FIELD = re.compile(r"^event\.(?P<name>.{1,200})\.count$")
_NO_VALUE = ("exists", "not_exists")
_COMPARISONS = {"gt": GreaterThan, "gte": GreaterThanOrEqual, "lt": LessThan,
                "lte": LessThanOrEqual}


@dataclass(frozen=True)
class Rule:
    path: str
    kind: str  # text, time, custom, tags, list, event
    field: str  # the contact column, or the custom key / event name
    operator: str
    value: Any = None
    window_days: int | None = None


@dataclass(frozen=True)
class Group:
    op: str
    children: tuple[Rule | Group, ...]


# --- Parsing -----------------------------------------------------------------------------


def parse_filters(tree: Any, *, path: str = "filters") -> Group:
    """A validated tree, or 422 VALIDATION_ERROR listing every fault with its path."""
    issues = ValidationIssues("The filter is not valid.")
    counter = [0]
    group = _parse_group(tree, path, 1, issues, counter)
    if counter[0] > MAX_RULES:
        issues.add(path, f"A filter may hold at most {MAX_RULES} rules.")
    issues.raise_if_any()
    assert group is not None
    return group


def _parse_group(tree: Any, path: str, depth: int, issues: ValidationIssues, counter: list[int]):
    if not isinstance(tree, dict):
        issues.add(path, 'A filter is an object {"op": "and"|"or", "rules": [...]}.')
        return None
    unknown = sorted(set(tree) - {"op", "rules"})
    if unknown:
        issues.add(f"{path}.{unknown[0]}", f"Unknown key `{unknown[0]}` in a filter group.")
    op = tree.get("op")
    if op not in ("and", "or"):
        issues.add(f"{path}.op", 'op must be "and" or "or".')
    rules = tree.get("rules")
    if not isinstance(rules, list):
        issues.add(f"{path}.rules", "rules must be a list of rules or nested filters.")
        return None
    if not rules and depth > 1:
        issues.add(f"{path}.rules", "A nested filter needs at least one rule.")
    children = []
    for index, item in enumerate(rules):
        item_path = f"{path}.rules.{index}"
        if isinstance(item, dict) and ("op" in item or "rules" in item) and "field" not in item:
            if depth >= MAX_DEPTH:
                issues.add(item_path, f"Filters nest at most {MAX_DEPTH} levels deep.")
                continue
            child = _parse_group(item, item_path, depth + 1, issues, counter)
        else:
            counter[0] += 1
            child = _parse_rule(item, item_path, issues)
        if child is not None:
            children.append(child)
    return Group(op=op if op in ("and", "or") else "and", children=tuple(children))


def _field_kind(field: Any) -> tuple[str, str] | None:
    if not isinstance(field, str):
        return None
    if field in TEXT_FIELDS:
        return "text", field
    if field in TIME_FIELDS:
        return "time", field
    if field == "tags":
        return "tags", field
    if field == "list_id":
        return "list", field
    if field.startswith("custom_fields."):
        key = field[len("custom_fields."):]
        return ("custom", key) if _CUSTOM_KEY.match(key) else None
    match = _EVENT_FIELD.match(field)
    if match and match.group("name").strip():
        return "event", match.group("name")
    return None


def _parse_rule(item: Any, path: str, issues: ValidationIssues) -> Rule | None:
    if not isinstance(item, dict):
        issues.add(path, "A rule is an object {field, operator, value}.")
        return None
    before = len(issues.items)
    unknown = sorted(set(item) - {"field", "operator", "value", "window_days"})
    if unknown:
        issues.add(f"{path}.{unknown[0]}", f"Unknown key `{unknown[0]}` in a rule.")
    kind_field = _field_kind(item.get("field"))
    if kind_field is None:
        issues.add(f"{path}.field", f"Unknown field; use one of {FIELDS_HELP}.")
    operator = item.get("operator")
    if operator not in OPERATORS:
        issues.add(f"{path}.operator",
                   f"Unknown operator; use one of {', '.join(OPERATORS)}.")
    if kind_field is None or operator not in OPERATORS:
        return None
    kind, field = kind_field
    if operator not in _ALLOWED[kind]:
        issues.add(f"{path}.operator",
                   f"`{operator}` does not apply to {item['field']}; use one of "
                   f"{', '.join(o for o in OPERATORS if o in _ALLOWED[kind])}.")
        return None
    window_days = item.get("window_days")
    if "window_days" in item and kind != "event":
        issues.add(f"{path}.window_days", "window_days applies to event.<name>.count only.")
    elif window_days is not None and (
        not _is_int(window_days) or not 1 <= window_days <= MAX_WINDOW_DAYS
    ):
        issues.add(f"{path}.window_days",
                   f"window_days must be an integer from 1 to {MAX_WINDOW_DAYS}.")
    value = item.get("value")
    if operator in _NO_VALUE:
        value = None
    else:
        value = _check_value(kind, operator, value, f"{path}.value", issues)
    if len(issues.items) > before:
        return None
    return Rule(path=path, kind=kind, field=field, operator=operator, value=value,
                window_days=window_days)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_value(kind: str, operator: str, value: Any, path: str, issues: ValidationIssues) -> Any:
    if operator == "in":
        if not isinstance(value, list) or not value:
            issues.add(path, "`in` needs a non-empty list of values.")
            return None
        if len(value) > MAX_IN_VALUES:
            issues.add(path, f"`in` takes at most {MAX_IN_VALUES} values.")
            return None
        checked = [_check_scalar(kind, "eq", v, f"{path}.{i}", issues)
                   for i, v in enumerate(value)]
        return checked
    return _check_scalar(kind, operator, value, path, issues)


def _check_scalar(kind: str, operator: str, value: Any, path: str, issues: ValidationIssues) -> Any:
    if kind in ("text", "tags", "list"):
        if not isinstance(value, str) or not value.strip():
            issues.add(path, "The value must be a non-empty string.")
            return None
        if len(value) > MAX_TEXT:
            issues.add(path, f"The value is at most {MAX_TEXT} characters.")
            return None
        if kind == "tags" and operator in ("contains", "starts_with") and (
            '"' in value or "\\" in value
        ):
            issues.add(path, "A tag fragment cannot contain quotes or backslashes.")
            return None
        return value
    if kind == "time":
        moment = parse_moment(value)
        if moment is None:
            issues.add(path, 'The value must be an ISO 8601 date or date-time, or '
                             f'{{"days_ago": N}} with N from 0 to {MAX_DAYS_AGO}.')
        return value
    if kind == "event":
        if not _is_int(value) or value < 0:
            issues.add(path, "An event count is compared with a whole number (0 or more).")
        return value
    # custom field: a JSON scalar; text operators need text, comparisons a number or text.
    if operator in ("contains", "starts_with"):
        if not isinstance(value, str) or not value:
            issues.add(path, "The value must be a non-empty string.")
    elif operator in _COMPARISONS:
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            issues.add(path, "Comparisons take a number or a string.")
    elif value is not None and (
        isinstance(value, dict | list) or not isinstance(value, str | int | float | bool)
    ):
        issues.add(path, "The value must be a string, number, boolean or null.")
    elif isinstance(value, str) and len(value) > MAX_TEXT:
        issues.add(path, f"The value is at most {MAX_TEXT} characters.")
    return value


def parse_moment(value: Any) -> tuple[str, dt.datetime | dt.date] | None:
    """("date", date) for a calendar day, ("moment", aware datetime) otherwise."""
    if isinstance(value, dict):
        if set(value) != {"days_ago"} or not _is_int(value["days_ago"]):
            return None
        days = value["days_ago"]
        if not 0 <= days <= MAX_DAYS_AGO:
            return None
        return "moment", timezone.now() - dt.timedelta(days=days)
    if not isinstance(value, str) or not value or len(value) > 40:
        return None
    text = value.strip()
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        try:
            return "date", dt.date.fromisoformat(text)
        except ValueError:
            return None
    try:
        moment = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if timezone.is_naive(moment):
        moment = moment.replace(tzinfo=dt.UTC)
    return "moment", moment


# --- Compiling ---------------------------------------------------------------------------


def compile_filters(tree: Any, *, organization) -> Q:
    """One Q over Contact for a raw (unparsed) or parsed tree."""
    group = tree if isinstance(tree, Group) else parse_filters(tree)
    return _compile_group(group, organization)


def contacts_matching(tree: Any, *, organization) -> QuerySet:
    """The organization's contacts matching `tree`: one SQL statement, unordered."""
    q = compile_filters(tree, organization=organization)
    return Contact.objects.for_organization(organization).filter(q).order_by()


def _compile_group(group: Group, organization) -> Q:
    parts = [
        _compile_group(child, organization) if isinstance(child, Group)
        else _compile_rule(child, organization)
        for child in group.children
    ]
    if not parts:
        return Q()
    return Q(*parts, _connector=Q.OR if group.op == "or" else Q.AND)


def _compile_rule(rule: Rule, organization) -> Q:
    return {
        "text": _text_rule,
        "time": _time_rule,
        "custom": _custom_rule,
        "tags": _tags_rule,
        "list": _list_rule,
        "event": _event_rule,
    }[rule.kind](rule, organization)


def _postgres() -> bool:
    return connection.vendor == "postgresql"


# text ------------------------------------------------------------------------------------

_PHONE_PUNCTUATION = re.compile(r"[\s().\-/]")


def _normalize_phone(raw: str, organization) -> str:
    country = (getattr(organization, "default_country", "") or "US").upper()
    try:
        number = phonenumbers.parse(raw.strip(), country)
    except phonenumbers.NumberParseException:
        return raw.strip()
    if not phonenumbers.is_possible_number(number):
        return raw.strip()
    return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)


def _text_value(field: str, value: str, organization) -> str:
    if field == "email":
        return value.strip().lower()
    if field == "phone":
        return _normalize_phone(value, organization)
    return value.strip()


def _text_equals(field: str, value: str, organization) -> Q:
    if field in ("email", "phone"):  # stored normalized: an exact, indexable match
        return Q(**{field: _text_value(field, value, organization)})
    return Q(**{f"{field}__iexact": _text_value(field, value, organization)})


def _text_rule(rule: Rule, organization) -> Q:
    field, op, value = rule.field, rule.operator, rule.value
    if op == "exists":
        return ~Q(**{field: ""}) & Q(**{f"{field}__isnull": False})
    if op == "not_exists":
        return Q(**{field: ""}) | Q(**{f"{field}__isnull": True})
    if op == "in":
        if field in ("email", "phone"):
            return Q(**{f"{field}__in": [_text_value(field, v, organization) for v in value]})
        return Q(*[_text_equals(field, v, organization) for v in value], _connector=Q.OR)
    if op in ("contains", "starts_with"):
        fragment = value.strip()
        if field == "phone":
            fragment = _PHONE_PUNCTUATION.sub("", fragment)
        lookup = "icontains" if op == "contains" else "istartswith"
        return Q(**{f"{field}__{lookup}": fragment})
    equals = _text_equals(field, value, organization)
    return ~equals if op == "neq" else equals


# time ------------------------------------------------------------------------------------


def _day_bounds(day: dt.date) -> tuple[dt.datetime, dt.datetime]:
    start = dt.datetime.combine(day, dt.time.min, tzinfo=dt.UTC)
    return start, start + dt.timedelta(days=1)


def _time_rule(rule: Rule, organization) -> Q:
    field, op = rule.field, rule.operator
    if op == "exists":
        return Q(**{f"{field}__isnull": False})
    if op == "not_exists":
        return Q(**{f"{field}__isnull": True})
    parsed = parse_moment(rule.value)
    assert parsed is not None  # checked by parse_filters
    kind, moment = parsed
    if kind == "date":
        start, end = _day_bounds(moment)  # type: ignore[arg-type]
        within = Q(**{f"{field}__gte": start, f"{field}__lt": end})
        return {
            "eq": within,
            "neq": ~within,
            "gt": Q(**{f"{field}__gte": end}),
            "gte": Q(**{f"{field}__gte": start}),
            "lt": Q(**{f"{field}__lt": start}),
            "lte": Q(**{f"{field}__lt": end}),
        }[op]
    exact = Q(**{field: moment})
    if op == "eq":
        return exact
    if op == "neq":
        return ~exact
    return Q(**{f"{field}__{op}": moment})


# custom fields ---------------------------------------------------------------------------


class _JSONTypeOf(Func):
    """The JSON type of `custom_fields -> key`, with PostgreSQL's names ('number',
    'string', ...) on every backend."""

    output_field = CharField()

    def __init__(self, key: str) -> None:
        super().__init__(KeyTransform(key, "custom_fields"))
        self.key = key

    def as_postgresql(self, compiler, conn, **extra):
        return super().as_sql(compiler, conn, function="jsonb_typeof", **extra)

    def as_sqlite(self, compiler, conn, **extra):
        # json_type() answers integer/real/text: fold them to the PostgreSQL names.
        column_sql, column_params = compiler.compile(self.source_expressions[0].lhs)
        path = f'$."{self.key}"'
        sql = (
            f"CASE json_type({column_sql}, %s) WHEN 'integer' THEN 'number' "
            "WHEN 'real' THEN 'number' WHEN 'text' THEN 'string' "
            f"ELSE json_type({column_sql}, %s) END"
        )
        return sql, (*column_params, path, *column_params, path)


def _custom_equals(key: str, value: Any) -> Q:
    if _postgres():
        # `custom_fields @> {"key": value}`: served by the GIN index.
        return Q(custom_fields__contains={key: value})
    return Q(KeyTransformExact(KeyTransform(key, "custom_fields"),
                               Value(value, output_field=JSONField())))


_CUSTOM_COMPARISONS = {"gt": KeyTransformGt, "gte": KeyTransformGte, "lt": KeyTransformLt,
                       "lte": KeyTransformLte}


def _custom_rule(rule: Rule, organization) -> Q:
    key, op, value = rule.field, rule.operator, rule.value
    if op == "exists":
        return Q(custom_fields__has_key=key)
    if op == "not_exists":
        return ~Q(custom_fields__has_key=key) | Q(custom_fields__isnull=True)
    if op == "in":
        return Q(*[_custom_equals(key, v) for v in value], _connector=Q.OR)
    if op in ("contains", "starts_with"):
        lookup = KeyTransformIContains if op == "contains" else KeyTransformIStartsWith
        return Q(lookup(KeyTransform(key, "custom_fields"), value))
    if op in _CUSTOM_COMPARISONS:
        # JSON orders every string below every number: compare like with like only.
        same_type = Q(Exact(_JSONTypeOf(key), "string" if isinstance(value, str) else "number"))
        compared = _CUSTOM_COMPARISONS[op](KeyTransform(key, "custom_fields"),
                                           Value(value, output_field=JSONField()))
        return same_type & Q(compared)
    equals = _custom_equals(key, value)
    if op != "neq":
        return equals
    if _postgres():
        return ~equals  # NOT @>: true where the key is absent too
    # SQLite reads an absent key as NULL, and NOT (NULL = value) drops the row.
    return ~equals | ~Q(custom_fields__has_key=key)


# tags ------------------------------------------------------------------------------------


def _has_tag(tag: str) -> Q:
    if _postgres():
        return Q(tags__contains=[tag])  # `tags @> '["tag"]'`: served by the GIN index
    import json

    return Q(IContains(Cast("tags", TextField()), json.dumps(tag)))


def _tags_rule(rule: Rule, organization) -> Q:
    op, value = rule.operator, rule.value
    if op == "exists":
        return Q(tags__isnull=False) & ~Q(tags=[])
    if op == "not_exists":
        return Q(tags__isnull=True) | Q(tags=[])
    if op == "in":
        return Q(*[_has_tag(v) for v in value], _connector=Q.OR)
    if op in ("contains", "starts_with"):
        # The array's JSON text: a fragment without quotes stays inside one element,
        # and `"fragment` can only match at the start of an element.
        fragment = value if op == "contains" else '"' + value
        return Q(IContains(Cast("tags", TextField()), fragment))
    has = _has_tag(value)
    return ~has if op == "neq" else has


# lists -----------------------------------------------------------------------------------


def _on_list(organization, list_ids: list[str] | None) -> Exists:
    memberships = ListMembership.objects.for_organization(organization).filter(
        contact_id=OuterRef("pk")
    )
    if list_ids is not None:
        memberships = (memberships.filter(contact_list_id=list_ids[0]) if len(list_ids) == 1
                       else memberships.filter(contact_list_id__in=list_ids))
    return Exists(memberships)


def _list_rule(rule: Rule, organization) -> Q:
    op, value = rule.operator, rule.value
    if op == "exists":
        return Q(_on_list(organization, None))
    if op == "not_exists":
        return ~Q(_on_list(organization, None))
    on = Q(_on_list(organization, value if op == "in" else [value]))
    return ~on if op == "neq" else on


# events ----------------------------------------------------------------------------------

# Count comparisons that are really "has at least one" / "has none": EXISTS is cheaper.
_AT_LEAST_ONE = {("gt", 0), ("gte", 1)}
_NONE = {("eq", 0), ("lt", 1), ("lte", 0)}


def _events_of(rule: Rule, organization) -> QuerySet:
    events = TrackedEvent.objects.for_organization(organization).filter(
        contact_id=OuterRef("pk"), name=rule.field
    )
    if rule.window_days:
        events = events.filter(
            occurred_at__gte=timezone.now() - dt.timedelta(days=rule.window_days)
        )
    return events


def _event_rule(rule: Rule, organization) -> Q:
    op, value = rule.operator, rule.value
    events = _events_of(rule, organization)
    key = (op, value) if isinstance(value, int) else None
    if op == "exists" or key in _AT_LEAST_ONE:
        return Q(Exists(events))
    if op == "not_exists" or key in _NONE:
        return ~Q(Exists(events))
    counted = Coalesce(
        Subquery(
            events.order_by().values("contact_id").annotate(n=Count("*")).values("n")[:1],
            output_field=IntegerField(),
        ),
        0,
    )
    if op == "in":
        return Q(In(counted, sorted(set(value))))
    if op == "eq":
        return Q(Exact(counted, value))
    if op == "neq":
        return ~Q(Exact(counted, value))
    return Q(_COMPARISONS[op](counted, value))
