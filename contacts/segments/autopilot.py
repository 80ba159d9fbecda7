"""Autopilot: a plain-language description of an audience, turned into a filter tree.

The AI engine arrives with the agents issue; until then `RuleBasedAutopilot` understands
the common phrasings below, and the agents issue swaps the engine in one place
(`SEGMENTS_AUTOPILOT_ENGINE`, a dotted path to an object with `describe_to_filters`).

    contacts tagged vip                        tags eq vip
    not tagged churned / with no tags          tags neq churned / tags not_exists
    with email at gmail.com                    email contains @gmail.com
    with an email / without a phone            email exists / phone not_exists
    with phone starting with +44               phone starts_with +44
    who signed up in the last 30 days          created_at gte {"days_ago": 30}
    who signed up before 2024-01-01            created_at lt 2024-01-01
    who did purchase more than 3 times in the last 7 days
                                               event.purchase.count gt 3, window_days 7
    who never did login in the last 2 weeks    event.login.count not_exists, window_days 14
    in list Newsletter / not in list "Q1 leads"  list_id eq/neq <id of the list>
    named Ann / whose last name is Smith       first_name / last_name eq
    with plan = pro / whose score is above 10  custom_fields.plan eq pro / .score gt 10

Clauses combine with `and`, `or` and commas (`and` binds tighter than `or`); a value
containing those words can be quoted. Anything else is refused: `AutopilotParseError`,
which the API answers as 422 AI_PARSE_FAILED.
"""

from __future__ import annotations

import re
from typing import Any, Protocol

from django.conf import settings
from django.utils.module_loading import import_string

from . import filters as segment_filters

MAX_DESCRIPTION = 1000


class AutopilotParseError(Exception):
    """The description could not be turned into a filter (422 AI_PARSE_FAILED)."""


class AutopilotEngine(Protocol):
    def describe_to_filters(self, description: str, organization) -> dict[str, Any]: ...


def describe_to_filters(description: str, organization) -> dict[str, Any]:
    """The filter tree for `description`, validated; AutopilotParseError when not understood."""
    path = getattr(settings, "SEGMENTS_AUTOPILOT_ENGINE", "")
    engine: AutopilotEngine = import_string(path)() if path else RuleBasedAutopilot()
    tree = engine.describe_to_filters(description, organization)
    segment_filters.parse_filters(tree)  # an engine's answer is checked like a caller's
    return tree


# --- The rule-based engine ---------------------------------------------------------------

_WORD_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
    "fourteen": 14, "thirty": 30, "ninety": 90,
}
_UNIT_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365}
_NUMBER = r"(?:\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fourteen|thirty|ninety)"
_UNIT = r"(?:days?|weeks?|months?|years?)"
_WINDOW = (
    rf"(?:in|within|during|over|for)\s+the\s+(?:last|past|previous)\s+"
    rf"(?:(?P<wn>{_NUMBER})\s+)?(?P<wu>{_UNIT})"
)
_LEAD = re.compile(
    r"^(?:please\s+)?(?:(?:show|find|get|give|list|select)(?:\s+me)?\s+"
    r"|(?:create|make|build)\s+(?:a\s+)?segment\s+(?:of|for|with)\s+"
    r"|(?:a\s+)?segment\s+(?:of|for|with)\s+)?"
    r"(?:(?:all|every|the)\s+)?"
    r"(?:contacts?|people|persons|customers|users|subscribers|members|leads|audience)?\b\s*",
    re.IGNORECASE,
)
_CLAUSE_LEAD = re.compile(r"^(?:who|that|which|whom)\s+(?:are\s+|is\s+)?", re.IGNORECASE)
# Clause separators: commas, `and`/`or` (not the `or more` of a count), and a new
# relative clause (`tagged vip who did purchase`), which joins with `and`.
_SEPARATOR = re.compile(
    r"\s*,\s*(?:(?P<c>and|or)\s+)?"
    r"|\s+(?P<w>and|or)\s+(?!(?:more|fewer|less)\b)"
    r"|\s+(?=(?:who|whose|that|which)\s)",
    re.IGNORECASE,
)
# A clause without its verb (`with an email and a phone`, `tagged vip or gold`) borrows
# the previous clause's.
_VERB = re.compile(r"^(?:(?:who|that|which)\s+)?(?:(?:are|is)\s+)?(?P<v>with|without|having|"
                   r"have|has|tagged(?:\s+with)?|not\s+tagged|did|never\s+did|named|"
                   r"(?:not\s+)?in\s+list)\s", re.IGNORECASE)
_QUOTED = re.compile(r"\"([^\"]*)\"|“([^”]*)”|'([^']*)'")


def _number(text: str | None, default: int = 1) -> int:
    if not text:
        return default
    text = text.lower()
    return int(text) if text.isdigit() else _WORD_NUMBERS[text]


def _days(number: str | None, unit: str) -> int:
    return _number(number) * _UNIT_DAYS[unit.lower().rstrip("s")]


class RuleBasedAutopilot:
    """Regular-expression phrasings; no model, no network."""

    def describe_to_filters(self, description: str, organization) -> dict[str, Any]:
        text = (description or "").strip().rstrip(".!?").strip()
        if not text:
            raise AutopilotParseError("The description is empty.")
        quoted: list[str] = []

        def protect(match: re.Match) -> str:
            quoted.append(next(g for g in match.groups() if g is not None))
            return f"\x00{len(quoted) - 1}\x00"

        text = _QUOTED.sub(protect, text)
        text = _LEAD.sub("", text, count=1).strip()
        if not text:
            raise AutopilotParseError("The description names no condition.")
        if re.search(r"(?:^|[\s,])(?:and|or)$|^(?:and|or)\s", text, re.I):
            raise AutopilotParseError("A condition is missing before or after `and`/`or`.")

        clauses: list[str] = []
        joins: list[str] = []
        position = 0
        for separator in _SEPARATOR.finditer(text):
            clauses.append(text[position:separator.start()])
            joins.append((separator["c"] or separator["w"] or "and").lower())
            position = separator.end()
        clauses.append(text[position:])

        groups: list[list[dict[str, Any]]] = [[]]
        verb = ""
        for index, clause in enumerate(clauses):
            if index and joins[index - 1] == "or":
                groups.append([])
            restored = re.sub(r"\x00(\d+)\x00", lambda m: '"' + quoted[int(m.group(1))] + '"',
                              clause).strip()
            try:
                parsed = self._clause(restored, organization)
            except AutopilotParseError:
                if not verb:
                    raise
                parsed = self._clause(f"{verb} {restored}", organization)
            else:
                found = _VERB.match(restored)
                verb = found["v"] if found else ""
            groups[-1].append(parsed)

        if len(groups) == 1:
            return {"op": "and", "rules": groups[0]}
        return {"op": "or", "rules": [
            group[0] if len(group) == 1 else {"op": "and", "rules": group} for group in groups
        ]}

    # each clause ------------------------------------------------------------------------

    def _clause(self, clause: str, organization) -> dict[str, Any]:
        body = _CLAUSE_LEAD.sub("", clause).strip()
        if not body:
            raise AutopilotParseError("An empty condition between `and`/`or`.")
        for parser in (self._tags, self._presence, self._email, self._phone, self._signup,
                       self._event, self._list, self._name, self._custom):
            rule = parser(body, organization)
            if rule is not None:
                return rule
        raise AutopilotParseError(f"Could not understand “{clause}”.")

    @staticmethod
    def _value(raw: str) -> str:
        value = raw.strip()
        if len(value) >= 2 and value[0] == value[-1] == '"':
            value = value[1:-1]
        return value.strip()

    def _tags(self, body: str, organization):
        if re.fullmatch(r"(?:with\s+no|without(?:\s+any)?|having\s+no)\s+tags?|untagged",
                        body, re.I):
            return {"field": "tags", "operator": "not_exists"}
        if re.fullmatch(r"(?:with|having|that\s+have|who\s+have)\s+(?:any\s+)?tags", body, re.I):
            return {"field": "tags", "operator": "exists"}
        negative = re.fullmatch(
            r"(?:not\s+tagged|untagged|without\s+(?:the\s+)?tag|not\s+having\s+(?:the\s+)?tag"
            r"|(?:do|does)\s+not\s+have\s+(?:the\s+)?tag)\s+(?:with\s+|as\s+)?(?P<v>.+)",
            body, re.I)
        if negative:
            return {"field": "tags", "operator": "neq", "value": self._value(negative["v"])}
        positive = re.fullmatch(
            r"(?:(?:tagged|labell?ed)\s+(?:with\s+|as\s+)?(?:the\s+)?(?:tag\s+)?"
            r"|(?:with|having|has|have|carrying)\s+(?:the\s+)?tag\s+)(?P<v>.+)",
            body, re.I)
        if positive:
            return {"field": "tags", "operator": "eq", "value": self._value(positive["v"])}
        return None

    _ABSENT = frozenset({"without", "with no", "having no", "missing", "lacking"})

    def _presence(self, body: str, organization):
        match = re.fullmatch(
            r"(?P<neg>without|with\s+no|having\s+no|missing|lacking|with|having|has|have)"
            r"\s+(?:an?\s+)?(?P<f>e-?mail|phone|phone\s+number|mobile|first\s+name"
            r"|last\s+name)(?:\s+address)?",
            body, re.I)
        if not match:
            return None
        spoken = re.sub(r"\s+", " ", match["f"].lower())
        field = {"email": "email", "e-mail": "email", "mobile": "phone", "phone": "phone",
                 "phone number": "phone", "first name": "first_name",
                 "last name": "last_name"}[spoken]
        absent = re.sub(r"\s+", " ", match["neg"].lower()) in self._ABSENT
        return {"field": field, "operator": "not_exists" if absent else "exists"}

    def _email(self, body: str, organization):
        exact = re.fullmatch(r"(?:with|whose)\s+(?:an?\s+)?email(?:\s+address)?\s+(?:is\s+|=\s*)?"
                             r"(?P<e>[^\s@]+@[^\s@]+\.[a-z]{2,})", body, re.I)
        if exact:
            return {"field": "email", "operator": "eq", "value": exact["e"].lower()}
        domain = re.fullmatch(
            r"(?:(?:with|having|whose|using)\s+)?(?:an?\s+)?(?:e-?mails?)(?:\s+address(?:es)?)?"
            r"\s+(?:is\s+|are\s+)?(?:at|@|on|from|in|under|ending\s+(?:in|with)|domain(?:\s+is)?)"
            r"\s+@?(?P<d>[\w-]+(?:\.[\w-]+)*\.[a-z]{2,})",
            body, re.I)
        if not domain:
            domain = re.fullmatch(r"(?:(?:with|having|using)\s+)?(?:an?\s+)?@?(?P<d>[\w-]+"
                                  r"(?:\.[\w-]+)*\.[a-z]{2,})\s+e-?mails?(?:\s+address(?:es)?)?",
                                  body, re.I)
        if domain:
            return {"field": "email", "operator": "contains",
                    "value": "@" + domain["d"].lower()}
        return None

    def _phone(self, body: str, organization):
        match = re.fullmatch(
            r"(?:(?:with|whose|having)\s+)?(?:an?\s+)?(?:phone|mobile)(?:\s+numbers?)?s?\s+"
            r"(?:(?:is|are)\s+)?(?:starting|beginning|that\s+starts?|which\s+starts?)"
            r"\s+with\s+(?P<p>\+?[\d][\d\s-]*)",
            body, re.I)
        if match:
            return {"field": "phone", "operator": "starts_with",
                    "value": re.sub(r"[\s-]", "", match["p"])}
        return None

    _SIGNUP = (r"(?:signed\s+up|joined|registered|subscribed|(?:were|was)\s+(?:created|added)"
               r"|created|added|became\s+(?:a\s+)?contacts?)")

    def _signup(self, body: str, organization):
        within = re.fullmatch(rf"{self._SIGNUP}\s+{_WINDOW}", body, re.I)
        if within:
            return {"field": "created_at", "operator": "gte",
                    "value": {"days_ago": _days(within["wn"], within["wu"])}}
        ago = re.fullmatch(
            rf"{self._SIGNUP}\s+(?P<cmp>more|less|fewer)\s+than\s+(?P<n>{_NUMBER})\s+"
            rf"(?P<u>{_UNIT})\s+ago", body, re.I)
        if ago:
            days = _days(ago["n"], ago["u"])
            operator = "lt" if ago["cmp"].lower() == "more" else "gte"
            return {"field": "created_at", "operator": operator, "value": {"days_ago": days}}
        dated = re.fullmatch(rf"{self._SIGNUP}\s+(?P<cmp>before|after|on|since)\s+"
                             r"(?P<d>\d{4}-\d{2}-\d{2})", body, re.I)
        if dated:
            operator = {"before": "lt", "after": "gt", "on": "eq", "since": "gte"}[
                dated["cmp"].lower()]
            return {"field": "created_at", "operator": operator, "value": dated["d"]}
        today = re.fullmatch(rf"{self._SIGNUP}\s+today", body, re.I)
        if today:
            return {"field": "created_at", "operator": "gte", "value": {"days_ago": 1}}
        return None

    _EVENT = r"(?P<name>\"[^\"]+\"|[A-Za-z_][\w.:-]*)"
    _COUNT = (
        rf"(?:(?P<cmp>more\s+than|over|above|at\s+least|fewer\s+than|less\s+than|under"
        rf"|at\s+most|no\s+more\s+than|exactly)\s+)?(?P<n>{_NUMBER})(?P<plus>\+|\s+or\s+more)?"
        r"\s+times?|(?P<once>(?:exactly\s+|at\s+least\s+)?(?:once|twice))"
    )

    def _event(self, body: str, organization):
        negative = re.fullmatch(
            rf"(?:never|did\s+not|didn't|have\s+not|haven't|has\s+not|hasn't)\s+"
            rf"(?:did\s+|done\s+|do\s+|performed\s+|triggered\s+|tracked\s+|made\s+)?"
            rf"(?:the\s+)?(?:event\s+)?{self._EVENT}(?:\s+events?)?(?:\s+{_WINDOW})?",
            body, re.I)
        if negative:
            rule: dict[str, Any] = {"field": self._event_field(negative["name"]),
                                    "operator": "not_exists"}
            return self._with_window(rule, negative)
        match = re.fullmatch(
            rf"(?:did|performed|triggered|tracked|made|completed|had|has\s+done|have\s+done)\s+"
            rf"(?:the\s+)?(?:event\s+)?{self._EVENT}(?:\s+events?)?"
            rf"(?:\s+(?:{self._COUNT}))?(?:\s+{_WINDOW})?",
            body, re.I)
        if not match:
            return None
        rule = {"field": self._event_field(match["name"])}
        if match["once"]:
            once = re.sub(r"\s+", " ", match["once"].lower())
            n = 1 if once.endswith("once") else 2
            rule.update(operator="gte" if once.startswith("at least") else "eq", value=n)
        elif match["n"]:
            n = _number(match["n"])
            cmp = re.sub(r"\s+", " ", (match["cmp"] or "").lower())
            if match["plus"]:
                cmp = "at least"
            rule.update(operator={
                "": "eq", "exactly": "eq", "more than": "gt", "over": "gt", "above": "gt",
                "at least": "gte", "fewer than": "lt", "less than": "lt", "under": "lt",
                "at most": "lte", "no more than": "lte",
            }[cmp], value=n)
        else:
            rule["operator"] = "exists"
        return self._with_window(rule, match)

    @staticmethod
    def _event_field(name: str) -> str:
        return f"event.{name.strip(chr(34))}.count"

    @staticmethod
    def _with_window(rule: dict[str, Any], match: re.Match) -> dict[str, Any]:
        if match["wu"]:
            days = _days(match["wn"], match["wu"])
            if days > segment_filters.MAX_WINDOW_DAYS:
                raise AutopilotParseError(
                    f"Event windows are at most {segment_filters.MAX_WINDOW_DAYS} days.")
            rule["window_days"] = days
        return rule

    def _list(self, body: str, organization):
        match = re.fullmatch(
            r"(?P<neg>not\s+)?(?:(?:are|is)\s+)?(?:in|on|members?\s+of|belonging\s+to|from)"
            r"\s+(?:the\s+)?(?:contact\s+)?list\s+(?:named\s+|called\s+)?(?P<name>.+)",
            body, re.I)
        if not match:
            match = re.fullmatch(r"(?P<neg>not\s+)?(?:(?:are|is)\s+)?(?:in|on)\s+(?:the\s+)?"
                                 r"(?P<name>.+?)\s+list", body, re.I)
        if not match:
            return None
        from contacts.models import ContactList

        name = self._value(match["name"])
        lists = ContactList.objects.for_organization(organization)
        found = (lists.filter(pk=name).values_list("pk", flat=True).first()
                 or lists.filter(name__iexact=name).order_by("id")
                 .values_list("pk", flat=True).first())
        if found is None:
            raise AutopilotParseError(f"There is no contact list named “{name}”.")
        return {"field": "list_id", "operator": "neq" if match["neg"] else "eq", "value": found}

    def _name(self, body: str, organization):
        patterns = (
            (r"(?:named|called|whose\s+first\s+name\s+is|with\s+(?:the\s+)?first\s+name)\s+"
             r"(?P<v>.+)", "first_name", "eq"),
            (r"(?:whose\s+(?:last\s+name|surname)\s+is|with\s+(?:the\s+)?(?:last\s+name|surname))"
             r"\s+(?P<v>.+)", "last_name", "eq"),
            (r"whose\s+(?:first\s+)?name\s+(?:starts|begins)\s+with\s+(?P<v>.+)", "first_name",
             "starts_with"),
            (r"whose\s+(?:last\s+name|surname)\s+(?:starts|begins)\s+with\s+(?P<v>.+)",
             "last_name", "starts_with"),
        )
        for pattern, field, operator in patterns:
            match = re.fullmatch(pattern, body, re.I)
            if match:
                return {"field": field, "operator": operator, "value": self._value(match["v"])}
        return None

    _CUSTOM_OPS = (
        (r"(?:is\s+)?(?:at\s+least)|>=", "gte"),
        (r"(?:is\s+)?(?:at\s+most)|<=", "lte"),
        (r"(?:is\s+)?(?:greater|more|higher)\s+than|is\s+above|above|over|>", "gt"),
        (r"(?:is\s+)?(?:less|lower|fewer)\s+than|is\s+below|below|under|<", "lt"),
        (r"is\s+not|isn't|!=|does\s+not\s+equal|not\s+equal\s+to", "neq"),
        (r"(?:is\s+)?equal\s+to|equals|==|=|is|of|set\s+to", "eq"),
        (r"contains|containing|includes", "contains"),
        (r"(?:starts|begins)\s+with|starting\s+with", "starts_with"),
    )

    def _custom(self, body: str, organization):
        for words, operator in self._CUSTOM_OPS:
            match = re.fullmatch(
                rf"(?:with|whose|where|having)\s+(?:(?:the|a|an)\s+)?(?:custom\s+field\s+)?"
                rf"(?P<k>[A-Za-z_][\w-]{{0,63}})\s*(?:{words})\s*(?P<v>.+)",
                body, re.I)
            if match:
                key = match["k"]
                if key.lower() in ("email", "phone", "tag", "tags", "name", "list"):
                    return None
                raw = self._value(match["v"])
                value: Any = raw
                if operator in ("gt", "gte", "lt", "lte", "eq", "neq"):
                    value = _scalar(raw)
                return {"field": f"custom_fields.{key}", "operator": operator, "value": value}
        return None


def _scalar(raw: str) -> Any:
    lowered = raw.lower()
    if lowered in ("true", "yes"):
        return True
    if lowered in ("false", "no"):
        return False
    if re.fullmatch(r"-?\d+", raw):
        return int(raw)
    if re.fullmatch(r"-?\d+\.\d+", raw):
        return float(raw)
    return raw


# --- Explanations ------------------------------------------------------------------------

_OPERATOR_WORDS = {
    "eq": "is", "neq": "is not", "contains": "contains", "starts_with": "starts with",
    "in": "is one of", "gt": "is more than", "gte": "is at least", "lt": "is less than",
    "lte": "is at most",
}


def explain_filters(tree: dict[str, Any]) -> str:
    """A one-sentence reading of a filter tree, for people checking what autopilot built."""
    return "Contacts " + _explain_group(tree, top=True) + "."


def _explain_group(tree: dict[str, Any], *, top: bool = False) -> str:
    rules = tree.get("rules") or []
    if not rules:
        return "(all of them)"
    parts = [_explain_group(r) if "rules" in r else _explain_rule(r) for r in rules]
    joined = f" {tree.get('op', 'and')} ".join(parts)
    return joined if top or len(parts) == 1 else f"({joined})"


def _quote(value: Any) -> str:
    if isinstance(value, dict) and "days_ago" in value:
        return f"{value['days_ago']} days ago"
    if isinstance(value, list):
        return ", ".join(_quote(v) for v in value)
    return f"“{value}”" if isinstance(value, str) else str(value).lower()


def _explain_rule(rule: dict[str, Any]) -> str:
    field, op, value = rule["field"], rule["operator"], rule.get("value")
    window = rule.get("window_days")
    within = f" in the last {window} days" if window else ""
    if field == "tags":
        return {
            "eq": f"tagged {_quote(value)}", "neq": f"not tagged {_quote(value)}",
            "in": f"tagged any of {_quote(value)}", "exists": "with any tag",
            "not_exists": "without tags", "contains": f"with a tag containing {_quote(value)}",
            "starts_with": f"with a tag starting with {_quote(value)}",
        }[op]
    if field == "list_id":
        return {"eq": f"on list {value}", "neq": f"not on list {value}",
                "in": f"on any of the lists {_quote(value)}", "exists": "on any list",
                "not_exists": "on no list"}[op]
    if field.startswith("event.") and field.endswith(".count"):
        name = field[len("event."):-len(".count")]
        if op == "exists":
            return f"who did {name}{within}"
        if op == "not_exists":
            return f"who never did {name}{within}"
        words = {"eq": "exactly", "neq": "other than", "gt": "more than", "gte": "at least",
                 "lt": "fewer than", "lte": "at most", "in": "one of"}[op]
        return f"who did {name} {words} {_quote(value)} times{within}"
    label = field.replace("custom_fields.", "").replace("_", " ")
    if field == "created_at":
        label = "signup time"
    article = "an" if label[:1] in "aeiou" else "a"
    if op == "exists":
        return f"with {article} {label}"
    if op == "not_exists":
        return f"without {article} {label}"
    if field in ("created_at", "updated_at") and isinstance(value, dict):
        words = {"gte": "within the last", "gt": "within the last", "lt": "more than",
                 "lte": "more than"}.get(op)
        if words and op in ("gte", "gt"):
            return f"whose {label} is within the last {value['days_ago']} days"
        if words:
            return f"whose {label} is more than {value['days_ago']} days ago"
    return f"whose {label} {_OPERATOR_WORDS[op]} {_quote(value)}"
