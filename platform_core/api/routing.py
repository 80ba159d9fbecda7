"""`api/v1/` resolved by its first path segment.

Django resolves a path by trying every pattern in order, and each include that does not
match still walks all of its own patterns (building the `tried` list of its 404). With
every app's routes under one prefix, `/api/v1/messages` walked a dozen includes first.

`indexed_include()` keeps the include list and its order exactly as written, and only
skips the includes that cannot match: each include is indexed by the literal first
segments of its routes, and a path is resolved by an ordinary `URLResolver` over the
includes whose routes can start with its first segment (an include with a route that
starts with a converter, or whose literal prefix ends inside the segment, is always
kept). The resolver match is the one Django would build; `reverse()` is unchanged.
"""

from __future__ import annotations

import re

from django.urls import URLResolver
from django.urls.resolvers import RegexPattern, RoutePattern

_REGEX_SPECIAL = set(".^$*+?{}[]\\|()")
_MEMO_MAX = 2048


def _literal(pattern) -> tuple[str, bool]:
    """The literal start of a route, and whether the route is nothing but that literal."""
    if isinstance(pattern, RoutePattern):
        route = str(pattern._route)
        literal = route.split("<", 1)[0]
        return literal, literal == route
    if isinstance(pattern, RegexPattern) and pattern._regex.startswith("^"):
        regex = pattern._regex[1:]
        literal = ""
        for char in regex:
            if char in _REGEX_SPECIAL:
                break
            literal += char
        return literal, regex[len(literal):] in ("", "$")
    return "", False  # unanchored or custom: may match anything


def _leaf_prefixes(resolver: URLResolver, outer: str = "") -> list[str]:
    """The literal start of every route under `resolver` (relative to its parent)."""
    literal, complete = _literal(resolver.pattern)
    if not complete:
        return [outer + literal]
    prefixes = []
    for child in resolver.url_patterns:
        if isinstance(child, URLResolver):
            prefixes += _leaf_prefixes(child, outer + literal)
        else:
            prefixes.append(outer + literal + _literal(child.pattern)[0])
    return prefixes


class _Prefixes:
    """Which first segments an include's routes can start with: a route whose literal start
    runs past the first `/` needs that exact segment; a shorter one, a segment it begins."""

    def __init__(self, resolver: URLResolver) -> None:
        self.whole: set[str] = set()
        self.partial: set[str] = set()
        for prefix in _leaf_prefixes(resolver):
            if "/" in prefix:
                self.whole.add(prefix.split("/", 1)[0])
            else:
                self.partial.add(prefix)

    def may_match(self, segment: str) -> bool:
        return segment in self.whole or any(segment.startswith(p) for p in self.partial)


class IndexedResolver(URLResolver):
    def _candidates(self, segment: str) -> URLResolver:
        memo = self.__dict__.setdefault("_memo", {})
        found = memo.get(segment)
        if found is None:
            prefixes = self.__dict__.get("_prefixes")
            if prefixes is None:
                prefixes = self.__dict__["_prefixes"] = [
                    (child, _Prefixes(child) if isinstance(child, URLResolver) else None)
                    for child in self.url_patterns
                ]
            subset = [
                child
                for child, pre in prefixes
                if pre is None or pre.may_match(segment)
            ]
            found = URLResolver(
                self.pattern, subset, self.default_kwargs,
                app_name=self.app_name, namespace=self.namespace,
            )
            if len(memo) < _MEMO_MAX:
                memo[segment] = found
        return found

    def resolve(self, path):
        path = str(path)
        match = self.pattern.match(path)
        if not match:
            return super().resolve(path)
        return self._candidates(match[0].partition("/")[0]).resolve(path)


def indexed_include(route: str, patterns: list) -> IndexedResolver:
    """Like `path(route, include(patterns))`, resolved by first segment."""
    if not re.fullmatch(r"[\w/-]*", route):
        raise ValueError("indexed_include needs a literal route")
    return IndexedResolver(RoutePattern(route, is_endpoint=False), patterns)
