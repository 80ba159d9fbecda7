"""ORM queries compiled once, executed many times with new values.

Building a query through the ORM (clone, filter, resolve, compile) costs more than running
it on a hot path. `compile_query` compiles a queryset whose varying values are named
stand-ins (`slot("org")`) and keeps the SQL with a parameter template; `params(...)` then
fills the slots with a request's values. The SQL stays the ORM's own (table and column
names, quoting, placeholders of the backend), so it follows the models.

Only exact comparisons suit slots: a lookup that transforms its value (`icontains` adds
`%`) would hide the stand-in, and compiling then fails loudly.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet


def slot(name: str) -> str:
    """A named stand-in value, recognised among the compiled parameters by its text."""
    return f"\x00slot:{name}\x00"


def _slot_name(value: Any) -> str | None:
    if isinstance(value, str) and value.startswith("\x00slot:") and value.endswith("\x00"):
        return value[6:-1]
    return None


@dataclass(frozen=True)
class CompiledSQL:
    sql: str
    # Per parameter: (slot name, None) or (None, constant value).
    template: tuple[tuple[str | None, Any], ...]

    def params(self, values: Mapping[str, Any]) -> list[Any]:
        return [values[name] if name is not None else constant
                for name, constant in self.template]

    @classmethod
    def join(cls, parts: Sequence[str | CompiledSQL]) -> CompiledSQL:
        """Concatenate literal SQL and compiled fragments into one statement."""
        sql, template = [], []
        for part in parts:
            if isinstance(part, CompiledSQL):
                sql.append(part.sql)
                template.extend(part.template)
            else:
                sql.append(part)
        return cls("".join(sql), tuple(template))


# Constants written into the SQL instead of bound: only text that needs no escaping.
_INLINE_SAFE = re.compile(r"[A-Za-z0-9_*.@+ -]*")
_PLACEHOLDER = re.compile(r"%%|%s")


def _inline_constants(sql: str, template: tuple) -> tuple[str, tuple]:
    """Write the query's own constants (`exclude(phone="")`) into the SQL as literals.

    A prepared statement is planned once for all values (a generic plan): a partial index
    `WHERE phone <> ''` only matches a query whose SQL says `<> ''`, not `<> $3`."""
    kept, pieces, position, params = [], [], 0, iter(template)
    for match in _PLACEHOLDER.finditer(sql):
        pieces.append(sql[position:match.start()])
        position = match.end()
        if match.group() == "%%":
            pieces.append("%%")
            continue
        name, constant = next(params)
        if name is None and isinstance(constant, str) and _INLINE_SAFE.fullmatch(constant):
            pieces.append("'" + constant + "'")
        else:
            pieces.append("%s")
            kept.append((name, constant))
    pieces.append(sql[position:])
    return "".join(pieces), tuple(kept)


def compile_query(queryset: QuerySet, *, using: str, expected: set[str]) -> CompiledSQL:
    """The SQL of `queryset` with its slot parameters named and its simple constants
    inlined; every name of `expected` must appear (else the ORM changed the value of a
    slot and the SQL cannot be reused)."""
    sql, params = queryset.query.get_compiler(using=using).as_sql()
    template = tuple((name, None) if (name := _slot_name(p)) else (None, p) for p in params)
    found = {name for name, _ in template if name is not None}
    if found != expected:
        raise ValueError(f"compiling {queryset.model.__name__}: slots {sorted(found)} "
                         f"found, {sorted(expected)} expected")
    return CompiledSQL(*_inline_constants(sql, template))


def placeholder(name: str) -> CompiledSQL:
    """One `%s` bound to slot `name`."""
    return CompiledSQL("%s", ((name, None),))
